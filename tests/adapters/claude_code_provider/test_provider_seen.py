"""``seen.state`` and its log: what a landed file changed is appended, and read back only while
the log continues the table it was started on."""

from __future__ import annotations

from pathlib import Path

import pytest

from asz_adapters.claude_code_provider.seen import APPEND_STEP, LANDED, WAITING, Seen, SeenTable
from asz_core.root import faults
from asz_core.root.storage import StorageRoot


def _table(root: Path, *names: str) -> SeenTable:
    table = SeenTable.load(StorageRoot(root))
    for name in names:
        table.put(Seen(name, role="request", size=10, mtime=1, sha="0" * 16))
    table.save()
    return table


def test_a_recorded_entry_is_read_back_and_taken_into_the_table_by_the_next_save(tmp_path: Path) -> None:
    table = _table(tmp_path, "a.request.json", "b.request.json")
    entry = table.entries["a.request.json"]
    entry.state, entry.session = LANDED, "s"
    before = table.path.read_text()
    table.record([entry])
    assert table.path.read_text() == before  # only the log was written
    again = SeenTable.load(StorageRoot(tmp_path))
    assert again.entries["a.request.json"].state == LANDED
    assert again.entries["b.request.json"].state == WAITING
    again.save()
    assert not again.log_path.exists() and "session=s" in again.path.read_text()
    assert SeenTable.load(StorageRoot(tmp_path)).entries["a.request.json"].state == LANDED


def test_a_line_cut_short_is_not_read_and_the_log_is_not_appended_to_after_it(tmp_path: Path) -> None:
    table = _table(tmp_path, "a.request.json", "b.request.json")
    a, b = table.entries["a.request.json"], table.entries["b.request.json"]
    a.state = LANDED
    table.record([a])
    b.state = LANDED
    cut = b.line()[:-12]  # a kill in the middle of an append
    with table.log_path.open("a") as log:
        log.write(cut)
    loaded = SeenTable.load(StorageRoot(tmp_path))
    assert loaded.entries["a.request.json"].state == LANDED
    assert loaded.entries["b.request.json"].state == WAITING
    loaded.entries["a.request.json"].why = "x"
    loaded.record([loaded.entries["a.request.json"]])  # the found log is taken in first
    assert cut not in loaded.log_path.read_text() and cut not in loaded.path.read_text()
    final = SeenTable.load(StorageRoot(tmp_path))
    assert final.entries["a.request.json"].why == "x" and final.entries["b.request.json"].state == WAITING


def test_a_log_left_by_a_kill_after_the_table_was_replaced_is_not_read(tmp_path: Path) -> None:
    table = _table(tmp_path, "a.request.json")
    entry = table.entries["a.request.json"]
    entry.state = LANDED
    table.record([entry])
    stale = table.log_path.read_text()
    entry.state, entry.why = WAITING, "later"
    table.save()  # the next generation, the log removed ...
    table.log_path.write_text(stale)  # ... as if the kill came before the removal
    loaded = SeenTable.load(StorageRoot(tmp_path))
    assert loaded.entries["a.request.json"].state == WAITING and loaded.entries["a.request.json"].why == "later"


def test_a_table_without_a_generation_line_is_generation_0(tmp_path: Path) -> None:
    directory = tmp_path / "_provider"
    directory.mkdir()
    (directory / "seen.state").write_text("# asz provider seen.state v1\na.request.json role=request state=waiting\n")
    table = SeenTable.load(StorageRoot(tmp_path))
    assert table.generation == 0 and table.entries["a.request.json"].state == WAITING
    table.entries["a.request.json"].state = LANDED
    table.record([table.entries["a.request.json"]])
    assert table.log_path.read_text().startswith("# asz provider seen.log v1 generation 0\n")
    assert SeenTable.load(StorageRoot(tmp_path)).entries["a.request.json"].state == LANDED


def test_after_a_failed_append_the_next_one_takes_the_log_in_first(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    table = _table(tmp_path, "a.request.json", "b.request.json")
    a, b = table.entries["a.request.json"], table.entries["b.request.json"]
    a.state = LANDED
    table.record([a])
    monkeypatch.setattr(faults, "_counts", {})
    monkeypatch.setattr(faults, "_spec", f"enospc:{APPEND_STEP}:1")
    b.state, b.session = LANDED, "s"
    with pytest.raises(OSError):
        table.record([b])
    with table.log_path.open("a") as log:  # what a short write on a full disk can leave
        log.write("c.request.json size=1")
    monkeypatch.setattr(faults, "_spec", "")
    table.record([b])
    loaded = SeenTable.load(StorageRoot(tmp_path))
    assert {n: (e.state, e.role, e.session) for n, e in loaded.entries.items()} == {
        "a.request.json": (LANDED, "request", ""), "b.request.json": (LANDED, "request", "s")}
