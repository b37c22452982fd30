"""The template's own tests: what a third-party adapter's test suite looks like.

``asz_pass`` and ``assert_root_verifies`` come from ``asz_core.testing``, a pytest plugin that
is active wherever asz is installed.
"""

from __future__ import annotations

from pathlib import Path

from asz_core.sessiondata import open_file
from asz_core.testing import PassRunner


def test_every_line_lands_once_and_the_root_verifies(asz_pass: PassRunner, tmp_path: Path,
                                                     assert_root_verifies) -> None:  # type: ignore[no-untyped-def]
    source = tmp_path / "logs"
    source.mkdir()
    (source / "today.jsonl").write_text('{"time":"2026-01-01T00:00:00Z","msg":"hi"}\nnot json\n')
    asz_pass.configure(adapters=[{"name": "jsonl", "source_root": str(source)}])

    first = asz_pass.run()
    assert (first.totals.sessions, first.totals.records, first.failed) == (1, 2, False)
    assert asz_pass.run().totals.records == 0  # a second pass lands nothing

    (landed,) = (asz_pass.root / "today" / "streams" / "main").glob("transcript-*.sd")
    data_record, unknown_record = list(open_file(landed))
    assert data_record.parts[0].value() == {"time": "2026-01-01T00:00:00Z", "msg": "hi"}
    assert data_record.time == "2026-01-01T00:00:00Z"
    assert unknown_record.parts[0].k == "unknown" and unknown_record.parts[0].raw() == b"not json"
    assert_root_verifies(asz_pass.root)


def test_a_file_whose_name_cannot_be_a_session_is_not_landed(asz_pass: PassRunner, tmp_path: Path) -> None:
    source = tmp_path / "logs"
    source.mkdir()
    (source / "_private.jsonl").write_text("{}\n")
    asz_pass.configure(adapters=[{"name": "jsonl", "source_root": str(source)}])
    summary = asz_pass.run()
    assert summary.totals.unreadable == 1 and summary.totals.records == 0
