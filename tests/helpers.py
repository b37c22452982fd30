"""Small helpers the project's own tests share (adapter authors use ``asz_core.testing``)."""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType

import pytest

from asz_core.root.storage import landed_files
from asz_core.sessiondata import Record, open_file

#: the repository's top directory
REPO = Path(__file__).resolve().parent.parent


def records_of(root: Path, session: str) -> list[tuple[int, Record]]:
    """``(seq, record)`` for every landed record of a session, in seq order."""
    out = []
    for seq, path in sorted(landed_files(root / session)):
        out.extend((seq, r) for r in open_file(path))
    return out


def temp_files(root: Path) -> list[Path]:
    return [Path(d) / f for d, _, files in os.walk(root) for f in files if f.startswith(".tmp-")]


def jsonl_config(source: Path, **collector: object) -> dict[str, object]:
    """An adapters section with just the example ``jsonl`` adapter over ``source``."""
    entry: dict[str, object] = {"name": "jsonl", "source_root": str(source), "exclude": []}
    if collector:
        entry["collector"] = collector
    return {"adapters": [entry]}


def examples(n: int) -> int:
    """A property's ``max_examples``: ``n`` with ``--slow`` (CI), a fifth of it in the default lane."""
    return n if os.environ.get("ASZ_TESTS_SLOW") else max(n // 5, 5)


def count_syncs(monkeypatch: pytest.MonkeyPatch, syncing: ModuleType) -> dict[str, int]:
    """Count the ``fsync`` calls of this process and the ``syncfs`` calls ``syncing`` (a module
    that imported ``sync_filesystem``) makes, from now until the test ends; each still syncs."""
    counts = {"fsync": 0, "syncfs": 0}
    real_fsync, real_syncfs = os.fsync, syncing.sync_filesystem

    def fsync(fd: int) -> None:
        counts["fsync"] += 1
        real_fsync(fd)

    def syncfs(fd: int) -> None:
        counts["syncfs"] += 1
        real_syncfs(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(syncing, "sync_filesystem", syncfs)
    return counts
