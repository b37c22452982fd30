"""Cursors: how far a source has landed, in the upstream's ``key value`` line files.

A cursor is written only after the file it covers has landed, and replaced atomically, so it can
lag the root (a crash between the two) but never run ahead of it. The collectors reconcile a
lagging cursor from the landed files before reading (:mod:`asz_core.collect`).

* :class:`AppendCursor` (``<kind>.cursor``) follows a source that only grows by whole lines.
* :class:`SnapshotCursor` follows a document rewritten in place, by its content digest.

A cursor in ``conflict`` stays so until a person acts. Putting the landed bytes back makes it
``active`` again; accepting the rewrite (``asz-pipeline conflicts --accept``) makes it
``accepted``, with ``next_version``: the source goes on in that version's place
(:mod:`asz_core.root.versions`), and this cursor, like everything landed under it, stays as it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import ClassVar, Final, TypeVar

from asz_core.root.durable import read_small, write_replace

__all__ = [
    "ACCEPTED",
    "ACTIVE",
    "CONFLICT",
    "SOURCE_GONE",
    "AppendCursor",
    "Cursor",
    "CursorUnreadable",
    "SnapshotCursor",
    "format_pairs",
    "parse_pairs",
    "read_small",
]

ACTIVE: Final = "active"
SOURCE_GONE: Final = "source_gone"
CONFLICT: Final = "conflict"
#: a conflict a person accepted: the source lands on in the place of ``next_version``
ACCEPTED: Final = "accepted"


def parse_pairs(text: str) -> Iterator[tuple[str, str]]:
    """``key value`` lines (the value is the rest of the line, without the spaces around it:
    upstream pads its keys into a column, ``offset        62230163``); blank lines are skipped."""
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key:
            yield key, value.strip(" \t")


def format_pairs(pairs: Iterable[tuple[str, object]]) -> bytes:
    lines = [f"{key} {value}\n" for key, value in pairs]
    text = "".join(lines)
    # one look for a line break in the whole text, not one per value: a cursor is written for
    # every session that lands
    if text.count("\n") != len(lines) or "\r" in text:
        for line in lines:
            if "\r" in line or line.count("\n") != 1:
                raise ValueError(f"{line.partition(' ')[0]}: a value in a state file cannot hold a line break")
    return text.encode("utf-8")


C = TypeVar("C", bound="Cursor")


class CursorUnreadable(ValueError):
    """A cursor file that is there but does not read (not UTF-8, a value that is not a number,
    a link): derived state, which the collector rebuilds from the landed files."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


@dataclass
class Cursor:
    source: str = ""
    state: str = ACTIVE
    dev: int = 0
    ino: int = 0
    size: int = 0
    mtime: int = 0  #: nanoseconds
    last_seq: int = 0
    updated_at: str = ""
    #: on an ``accepted`` cursor: the version whose place the source lands in from then on
    next_version: int = 0
    #: on an ``accepted`` cursor: when a person accepted the rewrite
    accepted_at: str = ""

    #: fields written only when set: every other cursor keeps upstream's keys and no more
    _WHEN_SET: ClassVar[frozenset[str]] = frozenset({"next_version", "accepted_at"})
    #: each field's name and whether it holds an int, per class (see :meth:`_fields`)
    _field_ints: ClassVar[dict[str, bool] | None] = None

    @classmethod
    def _fields(cls) -> dict[str, bool]:
        """Each field's name, and whether it holds an int: worked out once per class, not on
        every load and save."""
        known: dict[str, bool] | None = cls.__dict__.get("_field_ints")
        if known is None:
            known = {f.name: f.type in ("int", int) for f in fields(cls)}
            cls._field_ints = known
        return known

    @classmethod
    def load(cls: type[C], path: Path) -> C | None:
        """The cursor at ``path``, or ``None`` when there is none yet or it does not read (for
        those that only look: a collector reads it with :meth:`read` and rebuilds it)."""
        try:
            return cls.read(path)
        except CursorUnreadable:
            return None

    @classmethod
    def read(cls: type[C], path: Path) -> C | None:
        """The cursor at ``path``, ``None`` when there is none yet; ``CursorUnreadable`` when
        it is there and does not read."""
        try:
            data = read_small(path)
        except OSError as exc:  # a link (refused), a directory
            raise CursorUnreadable(path, exc.strerror or str(exc)) from None
        if data is None:
            return None
        ints = cls._fields()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CursorUnreadable(path, f"not UTF-8 (byte {exc.start})") from None
        # the lines as :func:`parse_pairs` reads them, into the fields by name (a later line of
        # a key wins, as it would set the field again); a cursor is read back for every session
        # that lands, so no generator and no ``setattr`` per line
        values: dict[str, object] = {}
        state = False
        not_a_number = ""
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if not key:
                continue
            state = state or key == "state"
            is_int = ints.get(key)
            if is_int is None:
                continue  # a later version's key, or upstream's (``schema``, ``kind``, ``origin``)
            value = value.strip(" \t")
            if not is_int:
                values[key] = value
                continue
            try:
                values[key] = int(value)
            except ValueError:
                not_a_number = not_a_number or key
        if not state:
            raise CursorUnreadable(path, "no state line: not a cursor")
        if not_a_number:
            raise CursorUnreadable(path, f"{not_a_number} is not a number")
        return cls(**values)  # type: ignore[arg-type]

    def save(self, path: Path) -> None:
        """Replace the cursor atomically. Its new name is not fsynced into the directory: a
        cursor lost to a power loss only lags, and is brought forward from the landed files."""
        write_replace(path, self.encode(), sync_dir=False)

    def encode(self) -> bytes:
        """The cursor file's bytes."""
        return format_pairs((name, getattr(self, name)) for name in self._fields()
                            if name not in self._WHEN_SET or getattr(self, name))


@dataclass
class AppendCursor(Cursor):
    """An append-only source: every byte before ``offset`` (always a line end) has landed."""

    offset: int = 0
    ord: int = 0
    last_uuid: str = ""
    tail_sha256: str = ""  #: SHA-256 of the ≤ 1 MiB before ``offset``


@dataclass
class SnapshotCursor(Cursor):
    """A document rewritten in place: the digest of the version last landed."""

    content_sha256: str = ""
