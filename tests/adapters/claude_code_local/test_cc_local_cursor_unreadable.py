"""A Claude Code transcript's cursor that does not read is rebuilt from the landed files with
one warning: the session lands on, nothing twice, and ``verify`` says what it found."""

from __future__ import annotations

from pathlib import Path

import orjson

from asz_core.sessiondata import open_file
from asz_core.testing import PassRunner
from asz_core.verify import verify_root

SESSION = "0b6f3c2e-6a59-4a57-9d0e-1f2a3b4c5d6e"


def _lines(first: int, last: int) -> bytes:
    return b"".join(orjson.dumps({"type": "user", "uuid": f"00000000-0000-4000-8000-{n:012d}", "sessionId": SESSION,
                                  "timestamp": f"2026-01-01T00:00:{n % 60:02d}Z",
                                  "message": {"role": "user", "content": f"line {n}"}}) + b"\n"
                    for n in range(first, last + 1))


def test_a_transcript_cursor_with_a_byte_that_is_not_utf8_is_rebuilt(asz_pass: PassRunner, tmp_path: Path) -> None:
    transcript = tmp_path / "projects" / "-work-a" / f"{SESSION}.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_bytes(_lines(1, 5))
    asz_pass.configure(adapters=[{"name": "claude-code-local", "source_root": str(tmp_path / "projects"),
                                  "exclude": []}])
    assert asz_pass.run().totals.records == 5
    cursor = asz_pass.root / SESSION / "streams" / "main" / "transcript.cursor"
    cursor.write_bytes(cursor.read_bytes().replace(b"state", b"st\xe4te"))
    notes = [n for r in verify_root(asz_pass.root) for n in r.notes]
    assert any("does not read" in n for n in notes)
    with transcript.open("ab") as fh:
        fh.write(_lines(6, 8))
    summary = asz_pass.run()
    assert (summary.totals.records, summary.totals.errors, summary.totals.conflicts) == (3, 0, 0)
    assert len([w for w in asz_pass.reporter.warnings if "does not read" in w]) == 1
    ords = [r.ord for p in sorted((asz_pass.root / SESSION / "streams" / "main").glob("*.sd"))
            for r in open_file(p)]
    assert ords == list(range(1, 9))
    assert not [p for r in verify_root(asz_pass.root) for p in r.problems]
