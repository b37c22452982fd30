"""The template's own tests: what a third-party adapter's test suite looks like.

``asz_pass``, ``assert_root_verifies`` and ``assert_lands_known_parts`` come from
``asz_core.testing``, a pytest plugin that is active wherever asz is installed.
"""

from __future__ import annotations

from pathlib import Path

from asz_core.sessiondata import open_file
from asz_core.testing import PassRunner


def test_every_line_lands_once_and_the_root_verifies(asz_pass: PassRunner, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                     assert_root_verifies, assert_lands_known_parts) -> None:
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
    assert_lands_known_parts(asz_pass.root)


def test_a_settled_file_is_counted_not_landed_and_lands_again_once_it_grows(
        asz_pass: PassRunner, tmp_path: Path) -> None:
    source = tmp_path / "logs"
    source.mkdir()
    (source / "today.jsonl").write_text('{"msg":"hi"}\n')
    asz_pass.configure(adapters=[{"name": "jsonl", "source_root": str(source)}])
    asz_pass.run()
    cursor = asz_pass.root / "today" / "streams" / "main" / "transcript.cursor"
    written = cursor.stat().st_mtime_ns
    again = asz_pass.run()  # settled: counted from a stat, the session not opened
    assert (again.totals.sessions, again.totals.sources, again.totals.records) == (1, 1, 0)
    assert cursor.stat().st_mtime_ns == written
    with (source / "today.jsonl").open("a") as f:
        f.write('{"msg":"again"}\n')
    assert asz_pass.run().totals.records == 1


def test_include_and_exclude_are_applied_by_the_host(asz_pass: PassRunner, tmp_path: Path) -> None:
    source = tmp_path / "logs"
    (source / "kept").mkdir(parents=True)
    (source / "private").mkdir()
    (source / "kept" / "a.jsonl").write_text("{}\n")
    (source / "private" / "b.jsonl").write_text("{}\n")
    asz_pass.configure(adapters=[{"name": "jsonl", "source_root": str(source), "exclude": [f"{source}/private"]}])
    summary = asz_pass.run()
    assert summary.totals.sessions == 1 and (asz_pass.root / "a").is_dir() and not (asz_pass.root / "b").exists()


def test_a_file_whose_name_cannot_be_a_session_is_not_landed(asz_pass: PassRunner, tmp_path: Path) -> None:
    source = tmp_path / "logs"
    source.mkdir()
    (source / "_private.jsonl").write_text("{}\n")
    asz_pass.configure(adapters=[{"name": "jsonl", "source_root": str(source)}])
    summary = asz_pass.run()
    assert summary.totals.unreadable == 1 and summary.totals.records == 0
