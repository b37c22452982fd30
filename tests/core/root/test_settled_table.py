"""The settled table keeps what a pass records out of memory and saves it with what it loaded."""

from __future__ import annotations

from pathlib import Path

import pytest

from asz_core.root import settled
from asz_core.root.cursors import AppendCursor
from asz_core.root.settled import SettledSessions


def _entry(n: int) -> dict[str, object]:
    return {"sources": [f"/src/{n}.jsonl"], "files": [[f"/src/{n}.jsonl", [1, n, 10, 20]]],
            "counters": {"sources": 1, "gone": 0}}


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
    entry = settled.settled_entry(session_dir, [(source, cursor, True)], {"sources": 1})
    assert entry is not None and entry["sources"] == [str(source)]
    assert [path for path, _ in entry["files"]] == [str(source), str(cursor)]  # the cursor is stamped too


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
