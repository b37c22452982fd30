"""The settled table keeps what a pass records out of memory and saves it with what it loaded."""

from __future__ import annotations

from pathlib import Path

from asz_core.root.settled import SettledSessions


def _entry(n: int) -> dict[str, object]:
    return {"sources": [f"/src/{n}.jsonl"], "files": [[f"/src/{n}.jsonl", [1, n, 10, 20]]],
            "counters": {"sources": 1, "gone": 0}}


def test_recorded_entries_are_saved_with_the_loaded_ones_last_one_counting(tmp_path: Path) -> None:
    first = SettledSessions.load(tmp_path, "cc", "1.0")
    for n in range(4):
        first.put(f"s{n}", _entry(n))
    first.save()
    assert first.entries == {}  # recorded ones are in the spill file, not held

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


def test_a_worker_hands_back_what_it_recorded_and_forgot(tmp_path: Path) -> None:
    table = SettledSessions.load(tmp_path, "cc", "1.0")
    table.held = {}
    table.put("s0", _entry(0))
    table.forget("s1")
    assert table.held == {"s0": _entry(0), "s1": None}
