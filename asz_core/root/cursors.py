"""Cursors: how far a source has landed, in the upstream's ``key value`` line files.

A cursor is written only after the file it covers has landed, and replaced atomically, so it can
lag the root (a crash between the two) but never run ahead of it. The collectors reconcile a
lagging cursor from the landed files before reading (:mod:`asz_core.collect`).

* :class:`AppendCursor` (``<kind>.cursor``) follows a source that only grows by whole lines.
* :class:`SnapshotCursor` follows a document rewritten in place, by its content digest.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import ClassVar, Final, TypeVar

from asz_core.root.durable import write_replace

__all__ = [
    "ACTIVE",
    "CONFLICT",
    "SOURCE_GONE",
    "AppendCursor",
    "SnapshotCursor",
    "format_pairs",
    "parse_pairs",
]

ACTIVE: Final = "active"
SOURCE_GONE: Final = "source_gone"
CONFLICT: Final = "conflict"


def parse_pairs(text: str) -> Iterator[tuple[str, str]]:
    """``key value`` lines (the value is the rest of the line); blank lines are skipped."""
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key:
            yield key, value


def format_pairs(pairs: Iterable[tuple[str, object]]) -> bytes:
    lines = []
    for key, value in pairs:
        text = str(value)
        if "\n" in text or "\r" in text:
            raise ValueError(f"{key}: a value in a state file cannot hold a line break")
        lines.append(f"{key} {text}\n")
    return "".join(lines).encode("utf-8")


C = TypeVar("C", bound="_Cursor")


@dataclass
class _Cursor:
    source: str = ""
    state: str = ACTIVE
    dev: int = 0
    ino: int = 0
    size: int = 0
    mtime: int = 0  #: nanoseconds
    last_seq: int = 0
    updated_at: str = ""

    SUFFIX: ClassVar[str] = ".cursor"

    @classmethod
    def load(cls: type[C], path: Path) -> C | None:
        """The cursor at ``path``, or ``None`` when there is none yet."""
        try:
            text = path.read_text("utf-8")
        except FileNotFoundError:
            return None
        cursor = cls()
        types = {f.name: f.type for f in fields(cls)}
        for key, value in parse_pairs(text):
            if key not in types:
                continue  # a later version's key
            setattr(cursor, key, int(value) if types[key] in ("int", int) else value)
        return cursor

    def save(self, path: Path) -> None:
        """Replace the cursor atomically. Its new name is not fsynced into the directory: a
        cursor lost to a power loss only lags, and is brought forward from the landed files."""
        write_replace(path, format_pairs((f.name, getattr(self, f.name)) for f in fields(self)),
                      sync_dir=False)


@dataclass
class AppendCursor(_Cursor):
    """An append-only source: every byte before ``offset`` (always a line end) has landed."""

    offset: int = 0
    ord: int = 0
    last_uuid: str = ""
    tail_sha256: str = ""  #: SHA-256 of the ≤ 1 MiB before ``offset``


@dataclass
class SnapshotCursor(_Cursor):
    """A document rewritten in place: the digest of the version last landed."""

    content_sha256: str = ""
