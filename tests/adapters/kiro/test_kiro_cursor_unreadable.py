"""A Kiro cursor that does not read (a database conversation's, a session's transcript) is
rebuilt from the landed files with one warning: nothing lands twice, nothing stops."""

from __future__ import annotations

from pathlib import Path

from kiro_helpers import configure

from asz_core.testing import PassRunner
from asz_core.verify import verify_root


def test_every_kiro_cursor_that_does_not_read_is_rebuilt_without_a_repeat(
        asz_pass: PassRunner, kiro_copy: Path) -> None:
    configure(asz_pass, kiro_copy)
    first = asz_pass.run()
    assert first.totals.records and not first.failed
    cursors = sorted(asz_pass.root.glob("*/streams/*/*.cursor"))
    assert len({c.name for c in cursors}) >= 2  # the database's conversations and the sessions' transcripts
    for cursor in cursors:
        cursor.write_bytes(b"\xff\xfe" + cursor.read_bytes())
    asz_pass.reporter.warnings.clear()
    again = asz_pass.run()
    assert not again.failed and again.totals.records == 0, again.errors
    warned = [w for w in asz_pass.reporter.warnings if "does not read" in w]
    assert sorted(str(c) for c in cursors if not any(str(c) in w for w in warned)) == []
    reports = verify_root(asz_pass.root)
    assert not [p for r in reports for p in r.problems] and not any(r.repeats for r in reports)
    asz_pass.reporter.warnings.clear()
    asz_pass.run()
    assert not [w for w in asz_pass.reporter.warnings if "does not read" in w]
