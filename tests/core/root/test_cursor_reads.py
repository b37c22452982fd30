"""A cursor read back is parsed once per bytes: each read is still its own object, a rewritten
cursor reads as its new bytes, and one that does not read fails at every read. The settled
entry joined once still refuses what it cannot hold."""

from __future__ import annotations

from pathlib import Path

import pytest

from asz_core.root import settled
from asz_core.root.cursors import AppendCursor, CursorUnreadable, SnapshotCursor


def _saved(path: Path, **fields: object) -> AppendCursor:
    cursor = AppendCursor(source="/src/a.jsonl", offset=120, ord=7, last_uuid="u-7", **fields)  # type: ignore[arg-type]
    cursor.save(path)
    return cursor


def test_a_cursor_read_twice_is_two_objects_with_the_same_fields(tmp_path: Path) -> None:
    saved = _saved(tmp_path / "transcript.cursor", size=120)
    first = AppendCursor.read(tmp_path / "transcript.cursor")
    second = AppendCursor.read(tmp_path / "transcript.cursor")
    assert first == saved and second == saved and first is not second
    assert first is not None and second is not None
    first.offset = 999  # a collector moves the cursor it read: another reader's is not moved
    assert second.offset == 120
    assert AppendCursor.read(tmp_path / "transcript.cursor") == saved


def test_a_rewritten_cursor_reads_as_its_new_bytes(tmp_path: Path) -> None:
    path = tmp_path / "transcript.cursor"
    _saved(path)
    cursor = AppendCursor.read(path)
    assert cursor is not None and cursor.ord == 7
    cursor.ord, cursor.offset = 8, 240
    cursor.save(path)
    again = AppendCursor.read(path)
    assert again is not None and (again.ord, again.offset) == (8, 240)


def test_the_same_bytes_read_as_each_class_asks(tmp_path: Path) -> None:
    path = tmp_path / "sidecar.cursor"
    SnapshotCursor(source="/src/s.json", content_sha256="ab" * 32, size=10).save(path)
    snapshot = SnapshotCursor.read(path)
    append = AppendCursor.read(path)  # the snapshot's key is none of an append cursor's
    assert snapshot is not None and snapshot.content_sha256 == "ab" * 32
    assert type(append) is AppendCursor and append.offset == 0 and not hasattr(append, "content_sha256")


def test_a_cursor_that_does_not_read_fails_at_every_read(tmp_path: Path) -> None:
    path = tmp_path / "transcript.cursor"
    path.write_bytes(b"state active\noffset twelve\n")
    for _ in range(2):
        with pytest.raises(CursorUnreadable, match="offset is not a number"):
            AppendCursor.read(path)
    path.write_bytes(b"offset 12\n")
    with pytest.raises(CursorUnreadable, match="no state line"):
        AppendCursor.read(path)


def test_a_settled_entry_refuses_a_nul_and_a_counter_that_is_no_word() -> None:
    files: list[tuple[str, settled.Stamp]] = [("/src/a.jsonl", [1, 2, 3, 4]),
                                              ("/root/s/streams/main/transcript.cursor", [1, 5, 6, 7])]
    entry = settled.make_entry(["/src/a.jsonl"], files, {"sources": 1, "gone": 0})
    assert settled.entry_parts(entry) == (["/src/a.jsonl"], files, {"sources": 1, "gone": 0})
    assert settled.make_entry(["/src/a\0.jsonl"], files, {"sources": 1}) is None
    assert settled.make_entry(["/src/a.jsonl"], [("/src/a\0.jsonl", None)], {"sources": 1}) is None
    assert settled.make_entry(["/src/a.jsonl"], files, {"not a word": 1}) is None


def test_a_cursor_written_reads_back_as_it_was_written_without_a_parse(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    saved = _saved(tmp_path / "transcript.cursor", size=120, tail_sha256="cd" * 32)

    def parse(*args: object) -> None:
        raise AssertionError("parsed")

    monkeypatch.setattr(AppendCursor, "_parse", parse)
    assert AppendCursor.read(tmp_path / "transcript.cursor") == saved


def test_a_text_with_blanks_around_it_reads_back_as_its_bytes_say(tmp_path: Path) -> None:
    path = tmp_path / "transcript.cursor"
    AppendCursor(source=" a.jsonl\t", offset=3).save(path)
    read = AppendCursor.read(path)
    assert read is not None and read.source == "a.jsonl" and read.offset == 3


@pytest.mark.parametrize("source", ["a\x0cb.jsonl", "a\u2028b.jsonl", "a\x85b.jsonl"])
def test_a_text_a_read_splits_into_lines_reads_back_as_its_bytes_say(tmp_path: Path, source: str) -> None:
    path = tmp_path / "transcript.cursor"
    AppendCursor(source=source, offset=3).save(path)
    read = AppendCursor.read(path)
    assert read is not None and read.source == "a" and read.offset == 3
