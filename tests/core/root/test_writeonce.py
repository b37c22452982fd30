"""Write-once files installed together (``asz_core.root.writeonce``): their bytes durable before
any is named, each tier's names durable before the next tier is named, and a failure confined to
the owner it hits. Kills at each step are in ``tests/core/metrics`` and
``tests/core/assembly/test_owed_parse.py``, where the derivation and the parse use it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from asz_core.root import confined, durable, writeonce
from asz_core.root.writeonce import FaultSteps, WriteOnceGroup

STEPS = FaultSteps(fsync="test-fsync", install="test-install", names="test-names")


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the group does, in order: ``sync`` for a ``syncfs``, ``fsync`` for an ``fsync``,
    ``name`` and the file's name for a rename."""
    seen: list[str] = []
    real_rename, real_fsync = confined.rename, os.fsync

    def rename(source: str | Path, target: str | Path, *, replace: bool) -> None:
        seen.append(f"name {Path(target).name}")
        real_rename(source, target, replace=replace)

    def fsync(fd: int) -> None:
        seen.append("fsync")
        real_fsync(fd)

    monkeypatch.setattr(confined, "rename", rename)
    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(writeonce, "sync_filesystem", lambda fd: seen.append("sync"))
    return seen


def _temps(root: Path) -> list[str]:
    return sorted(p.name for p in root.rglob(".tmp-*"))


def _stage_two_owners(group: WriteOnceGroup, root: Path) -> None:
    for owner in ("a", "b"):
        group.stage(root / owner / "receipt", f"{owner} receipt".encode(), owner=owner, tier=0)
        group.stage(root / "spool" / f"{owner}-request", f"{owner} request".encode(), owner=owner, tier=1)


@pytest.mark.skipif(not durable.can_sync_filesystem(), reason="syncfs is Linux's")
def test_a_later_tier_is_named_only_once_the_names_before_it_are_durable(tmp_path: Path,
                                                                          events: list[str]) -> None:
    group = WriteOnceGroup(tmp_path, STEPS)
    _stage_two_owners(group, tmp_path)
    assert events == [] and _temps(tmp_path) != []  # staged: nothing durable, nothing named yet
    assert group.commit() == set()
    group.close()
    assert events == ["sync", "name receipt", "name receipt", "sync", "name a-request", "name b-request", "sync"]
    assert (tmp_path / "spool" / "b-request").read_bytes() == b"b request"
    assert oct(os.stat(tmp_path / "a" / "receipt").st_mode & 0o777) == "0o400"
    assert _temps(tmp_path) == []


def test_file_by_file_each_file_and_each_directory_is_fsynced_in_the_same_order(tmp_path: Path,
                                                                                 events: list[str]) -> None:
    group = WriteOnceGroup(tmp_path, STEPS, whole_filesystem=False)
    _stage_two_owners(group, tmp_path)
    assert events == ["fsync"] * 4  # each file durable before it is closed
    events.clear()
    assert group.commit() == set()
    # tier 0: both receipts named, then their directories and the root (where a/ and b/ were
    # made); only then tier 1 (spool/'s own name is made durable with the root's)
    assert events == ["name receipt", "name receipt", "fsync", "fsync", "fsync",
                      "name a-request", "name b-request", "fsync", "fsync"]
    assert "sync" not in events and _temps(tmp_path) == []


def test_a_name_already_taken_stops_its_owner_and_no_other(tmp_path: Path, events: list[str]) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "receipt").write_bytes(b"another writer's")
    group = WriteOnceGroup(tmp_path, STEPS)
    _stage_two_owners(group, tmp_path)
    assert group.commit() == {"a"}
    assert (tmp_path / "a" / "receipt").read_bytes() == b"another writer's"  # never replaced
    assert not (tmp_path / "spool" / "a-request").exists()  # its request relied on it: not named
    assert (tmp_path / "spool" / "b-request").read_bytes() == b"b request"
    assert _temps(tmp_path) == []


def test_a_file_that_may_find_its_name_taken_keeps_what_is_there(tmp_path: Path, events: list[str]) -> None:
    (tmp_path / "spool").mkdir()
    (tmp_path / "spool" / "request").write_bytes(b"installed by a pass that stopped")
    group = WriteOnceGroup(tmp_path, STEPS)
    staged = group.stage(tmp_path / "spool" / "request", b"the same request", owner="a", tier=1, keep_existing=True)
    assert group.commit() == set()
    assert not staged.installed and staged.error is None
    assert (tmp_path / "spool" / "request").read_bytes() == b"installed by a pass that stopped"
    assert _temps(tmp_path) == []


@pytest.mark.skipif(not durable.can_sync_filesystem(), reason="syncfs is Linux's")
def test_a_failing_syncfs_names_nothing_and_leaves_no_temporary_file(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    def failing(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(writeonce, "sync_filesystem", failing)
    group = WriteOnceGroup(tmp_path, STEPS)
    _stage_two_owners(group, tmp_path)
    assert group.commit() == {"a", "b"}
    group.close()
    assert not (tmp_path / "a" / "receipt").exists() and not (tmp_path / "spool" / "b-request").exists()
    assert _temps(tmp_path) == []
