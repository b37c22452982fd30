"""The settled table keeps what a pass records out of memory and saves it with what it loaded."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from asz_core.root import durable, settled
from asz_core.root.cursors import AppendCursor
from asz_core.root.settled import SettledSessions


def _entry(n: int) -> settled.SettledEntry:
    entry = settled.make_entry([f"/src/{n}.jsonl"], [(f"/src/{n}.jsonl", [1, n, 10, 20])], {"sources": 1, "gone": 0})
    assert entry is not None
    return entry


def test_recorded_entries_are_saved_with_the_loaded_ones_last_one_counting(tmp_path: Path) -> None:
    first = SettledSessions.load(tmp_path, "cc", "1.0")
    for n in range(4):
        first.put(f"s{n}", _entry(n))
    first.save()
    assert first.entries == {}  # recorded ones are in the spill file (or its pending lines), not held

    second = SettledSessions.load(tmp_path, "cc", "1.0")
    assert second.entries == {f"s{n}": _entry(n) for n in range(4)}
    second.put("s1", _entry(11))   # landed again: the new entry replaces the loaded one
    second.put("s4", _entry(4))
    second.put("s4", _entry(44))   # recorded twice in one pass: the last one counts
    second.put("s5", _entry(5))
    second.forget("s5")            # recorded, then found unsettled
    second.forget("s2")            # loaded, then found unsettled
    second.save()

    third = SettledSessions.load(tmp_path, "cc", "1.0")
    assert third.entries == {"s0": _entry(0), "s1": _entry(11), "s3": _entry(3), "s4": _entry(44)}


def test_an_entry_is_made_only_for_sources_landed_to_their_end(tmp_path: Path) -> None:
    source = tmp_path / "a.jsonl"
    source.write_bytes(b'{"a":1}\n')
    st = source.stat()
    session_dir = tmp_path / "root" / "s0"
    cursor = session_dir / "streams" / "main" / "transcript.cursor"
    cursor.parent.mkdir(parents=True)
    AppendCursor(source="a.jsonl", dev=st.st_dev, ino=st.st_ino, offset=st.st_size - 1).save(cursor)
    assert settled.settled_entry(session_dir, [(source, cursor, True)], {"sources": 1}) is None
    AppendCursor(source="a.jsonl", dev=st.st_dev, ino=st.st_ino, offset=st.st_size).save(cursor)
    parts = settled.entry_parts(settled.settled_entry(session_dir, [(source, cursor, True)], {"sources": 1}))
    assert parts is not None and parts[0] == [str(source)] and parts[2] == {"sources": 1}
    assert [path for path, _ in parts[1]] == [str(source), str(cursor)]  # the cursor is stamped too


def test_a_session_is_unchanged_only_while_every_file_stats_as_recorded(tmp_path: Path) -> None:
    source = tmp_path / "a.jsonl"
    source.write_bytes(b'{"a":1}\n')
    absent = tmp_path / "gone.jsonl"
    table = SettledSessions.load(tmp_path, "cc", "1.0")
    table.note("s0", [str(source)], [source, absent], {"sources": 1, "gone": 2})
    table.save()

    loaded = SettledSessions.load(tmp_path, "cc", "1.0")
    assert loaded.unchanged("s0", [str(source)]) == {"sources": 1, "gone": 2}
    assert loaded.key("s0") == [str(source)]
    assert loaded.unchanged("s0", [str(source), str(absent)]) is None  # another list of sources
    assert loaded.unchanged("s1", [str(source)]) is None
    absent.write_bytes(b"")                                             # a file recorded absent is back
    assert loaded.unchanged("s0", [str(source)]) is None
    absent.unlink()
    with source.open("ab") as grown:
        grown.write(b'{"a":2}\n')
    assert loaded.unchanged("s0", [str(source)]) is None


@pytest.mark.parametrize("entry", [
    None, 7, "", ["a"], [], ["sources=1"], ["sources=x", 1, "/a"], [7, 1, "/a"], ["", -1, "/a"], ["", 2, "/a"],
    ["", 1, "/a", "/a"],             # a file without its stamp
    ["", 1, "/a", 0, None],          # a path that is not text (an int is a descriptor to os.lstat)
    ["", 1, "/a", "/a", [0, 0, 0]],  # a stamp that is not one (the file is absent: no stamp is it)
    "sources=1\x001\x00/a\x00/a\x00-",  # an entry of format 2, which held the fields joined by NUL
])
def test_an_entry_the_table_does_not_read_is_a_miss(tmp_path: Path, entry: object) -> None:
    """Nothing inside the root is trusted: an entry that is not one the table writes lands the session."""
    table = SettledSessions(tmp_path / ".settled-cc.state", "1.0", {"s0": entry})
    assert table.unchanged("s0", ["/a"]) is None
    assert settled.entry_parts(entry) is None or table.key("s0") is not None


def test_a_table_of_the_earlier_format_is_empty(tmp_path: Path) -> None:
    (tmp_path / ".settled-cc.state").write_bytes(
        b'{"format":1,"version":"1.0","sessions":{"s0":{"sources":[],"files":[],"counters":{}}}}')
    assert SettledSessions.load(tmp_path, "cc", "1.0").entries == {}


def test_entries_spilled_in_blocks_and_pending_are_saved_in_order_last_one_counting(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Recorded entries go to the temporary file a block at a time: those written there, those
    still pending, and those recorded again across both all come out once, the last one."""
    monkeypatch.setattr(settled, "_SPILL_BYTES", 300)  # an entry is about 110 bytes
    table = SettledSessions.load(tmp_path, "cc", "1.0")
    for n in range(10):
        table.put(f"s{n}", _entry(n))
    assert table._spill is not None and len(table._pending) < 300
    table.put("s0", _entry(100))   # first written to the file, now pending
    table.forget("s9")             # recorded last: may be pending yet
    table.forget("s3")             # in the file
    table.save()
    table.put("s10", _entry(10))   # recorded after a save: appended after what the save read
    table.save()

    loaded = SettledSessions.load(tmp_path, "cc", "1.0")
    expected = {f"s{n}": _entry(n) for n in (1, 2, 4, 5, 6, 7, 8)}
    expected.update({"s0": _entry(100), "s10": _entry(10)})
    assert loaded.entries == expected
    assert list(loaded.entries)[-2:] == ["s0", "s10"]  # in the order they were recorded


def _saved_and_loaded(root: Path, sessions: int) -> SettledSessions:
    """A table of ``sessions`` entries (``s0``, ``s1``, ...) saved by one pass, as the next loads it."""
    table = SettledSessions.load(root, "cc", "1.0")
    for n in range(sessions):
        table.put(f"s{n}", _entry(n))
    table.save()
    return SettledSessions.load(root, "cc", "1.0")


def _header() -> bytes:
    return orjson.dumps({"format": settled._FORMAT, "version": "1.0"}) + b"\n"


def test_a_table_written_whole_is_its_first_line_and_one_line_of_every_entry(tmp_path: Path) -> None:
    table = _saved_and_loaded(tmp_path, 3)
    sessions = {f"s{n}": _entry(n) for n in range(3)}
    assert table.path.read_bytes() == _header() + orjson.dumps(sessions) + b"\n"
    assert table.entries == sessions


def test_a_pass_that_changed_a_few_sessions_appends_one_line_that_the_next_load_applies(tmp_path: Path) -> None:
    """Replaced, new and forgotten sessions go out as one line after the file as it was: a few
    changed sessions of thousands no longer rewrite the whole table."""
    second = _saved_and_loaded(tmp_path, 8)
    before = second.path.read_bytes()
    second.put("s1", _entry(11))
    second.put("s8", _entry(8))
    second.forget("s2")
    second.save()
    line = b'{"s2":null,' + orjson.dumps({"s1": _entry(11), "s8": _entry(8)})[1:] + b"\n"
    assert second.path.read_bytes() == before + line
    third = SettledSessions.load(tmp_path, "cc", "1.0")
    expected = {f"s{n}": _entry(n) for n in range(9) if n != 2}
    expected["s1"] = _entry(11)
    assert third.entries == expected
    third.put("s0", _entry(100))  # and the next pass appends after that line, not over it
    third.save()
    expected["s0"] = _entry(100)
    assert SettledSessions.load(tmp_path, "cc", "1.0").entries == expected
    assert third.path.read_bytes().count(b"\n") == 4


def test_the_table_is_written_whole_again_once_its_file_holds_the_most_lines(tmp_path: Path) -> None:
    _saved_and_loaded(tmp_path, 40)
    for n in range(settled._MOST_LINES + 3):
        table = SettledSessions.load(tmp_path, "cc", "1.0")
        table.put(f"s{n % 4}", _entry(1000 + n))
        table.save()
        assert 2 <= table.path.read_bytes().count(b"\n") <= settled._MOST_LINES
    loaded = SettledSessions.load(tmp_path, "cc", "1.0")
    assert len(loaded.entries) == 40
    assert [loaded.entries[f"s{n}"] for n in range(4)] == [_entry(1000 + n) for n in (32, 33, 34, 31)]


def test_a_line_larger_than_half_the_file_writes_the_table_whole(tmp_path: Path) -> None:
    table = _saved_and_loaded(tmp_path, 2)
    for n in range(2, 6):
        table.put(f"s{n}", _entry(n))
    table.save()
    assert table.path.read_bytes() == _header() + orjson.dumps({f"s{n}": _entry(n) for n in range(6)}) + b"\n"


def test_a_line_a_kill_cut_short_is_not_read_and_the_next_save_writes_the_table_whole(tmp_path: Path) -> None:
    table = _saved_and_loaded(tmp_path, 8)
    with table.path.open("ab") as cut:
        cut.write(b'{"s0":null,"s9":["sources=1 gone=0",1,"/src/9.js')
    loaded = SettledSessions.load(tmp_path, "cc", "1.0")
    assert loaded.entries == {f"s{n}": _entry(n) for n in range(8)}
    loaded.put("s8", _entry(8))
    loaded.save()
    whole = _header() + orjson.dumps({f"s{n}": _entry(n) for n in range(9)}) + b"\n"
    assert loaded.path.read_bytes() == whole


def test_a_file_changed_since_it_was_read_is_written_whole_not_added_to(tmp_path: Path) -> None:
    """Appending to a file other than the one read would add to what the table does not hold: a
    file grown since, or a second name of another file, is replaced whole instead."""
    table = _saved_and_loaded(tmp_path, 8)
    other = tmp_path / "elsewhere"
    os.link(table.path, other)
    kept = other.read_bytes()
    table.put("s8", _entry(8))
    table.save()
    assert other.read_bytes() == kept
    assert SettledSessions.load(tmp_path, "cc", "1.0").entries == {f"s{n}": _entry(n) for n in range(9)}

    grown = SettledSessions.load(tmp_path, "cc", "1.0")
    with grown.path.open("ab") as fh:
        fh.write(b'{"s9":null}\n')
    grown.put("s1", _entry(11))
    grown.save()
    assert grown.path.read_bytes().count(b"\n") == 2


@pytest.mark.parametrize("planted", ["link", "fifo"])
def test_a_link_or_a_fifo_planted_at_the_tables_name_is_replaced_never_written_through(
        tmp_path: Path, planted: str) -> None:
    """Nothing inside the root is trusted: what a save would append to is opened without
    following a link or waiting on a fifo, and the table is written whole in its place."""
    table = _saved_and_loaded(tmp_path, 8)
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.write_bytes(table.path.read_bytes())  # the same size: only the open can tell
    table.path.unlink()
    if planted == "link":
        table.path.symlink_to(outside)
    else:
        os.mkfifo(table.path)
    table.put("s8", _entry(8))
    table.save()
    assert not table.path.is_symlink() and table.path.is_file()
    assert outside.read_bytes().count(b"\n") == 2
    assert SettledSessions.load(tmp_path, "cc", "1.0").entries == {f"s{n}": _entry(n) for n in range(9)}


def test_a_table_of_many_sessions_is_written_in_a_few_writes_not_one_a_session(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Written whole, the entries go out gathered (:data:`~asz_core.root.durable._GATHER_BYTES` a
    write), not a system call each; a pass that notes one session of them writes one line."""
    writes: list[int] = []
    real_write = os.write

    def counting(fd: int, data: bytes) -> int:
        writes.append(len(data))
        return real_write(fd, data)

    table = SettledSessions.load(tmp_path, "cc", "1.0")
    for n in range(2000):
        table.put(f"s{n}", _entry(n))
    monkeypatch.setattr(os, "write", counting)
    table.save()
    monkeypatch.undo()
    size = table.path.stat().st_size
    assert sum(writes) == size
    assert len(writes) <= size // durable._GATHER_BYTES + 2

    again = SettledSessions.load(tmp_path, "cc", "1.0")
    again.put("new", _entry(2000))
    writes.clear()
    monkeypatch.setattr(os, "write", counting)
    again.save()
    monkeypatch.undo()
    assert writes == [again.path.stat().st_size - size]
    assert len(SettledSessions.load(tmp_path, "cc", "1.0").entries) == 2001
