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
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Final, TypeVar

if TYPE_CHECKING:
    from typing import TypedDict, Unpack

    class CursorFields(TypedDict, total=False):
        """:class:`Cursor`'s fields, as a subclass's ``__init__`` passes them on."""

        source: str
        state: str
        dev: int
        ino: int
        size: int
        mtime: int
        last_seq: int
        updated_at: str
        next_version: int
        accepted_at: str

from asz_core.root.durable import read_small, write_replace
from asz_core.root.group import GROUP_SESSIONS

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

#: the fields of the cursor files read or written lately, by class and bytes: a session's cursor
#: is read back after it is written (its index, its settled entry) from the very bytes the group
#: keeps (:data:`~asz_core.root.durable.DEFERRED`), so they are parsed at most once. The bytes
#: are the key, so an entry can never say what a file does not
_READ: dict[tuple[type[Cursor], bytes], dict[str, object]] = {}
#: ... at most this many: the cursors of a commit group and of the group committing behind it,
#: each written before its settled entry reads it back (two groups, a cursor or a few a
#: session), with room
_READ_MOST = 8 * GROUP_SESSIONS


def _remember(cls: type[Cursor], data: bytes, values: dict[str, object]) -> dict[str, object]:
    """Keep ``values`` as what ``data`` reads as, at most :data:`_READ_MOST` of them (the
    oldest go first: what a pass reads back it wrote or read lately)."""
    _READ[(cls, data)] = values
    if len(_READ) > _READ_MOST:
        del _READ[next(iter(_READ))]
    return values


class CursorUnreadable(ValueError):
    """A cursor file that is there but does not read (not UTF-8, a value that is not a number,
    a link): derived state, which the collector rebuilds from the landed files."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


class Cursor:
    """What every cursor says: its source, its state and the source's stamp when it last landed.

    A plain class, not a dataclass (every ``run`` imports it, and a dataclass compiles its
    methods at each import): each class lists its fields in :attr:`FIELDS`, in the order the
    file writes them (upstream's), with whether each holds an int, and its ``__init__`` takes
    them as keywords. A subclass adds its own to its base's, in ``__slots__``, ``FIELDS`` and
    ``__init__``.
    """

    __slots__ = ("accepted_at", "dev", "ino", "last_seq", "mtime", "next_version", "size", "source", "state",
                 "updated_at")

    #: each field's name, in the file's order, and whether it holds an int
    FIELDS: ClassVar[dict[str, bool]] = {
        "source": False, "state": False, "dev": True, "ino": True, "size": True, "mtime": True, "last_seq": True,
        "updated_at": False, "next_version": True, "accepted_at": False}
    #: fields written only when set: every other cursor keeps upstream's keys and no more
    _WHEN_SET: ClassVar[frozenset[str]] = frozenset({"next_version", "accepted_at"})

    def __init__(self, *, source: str = "", state: str = ACTIVE, dev: int = 0, ino: int = 0, size: int = 0,
                 mtime: int = 0, last_seq: int = 0, updated_at: str = "", next_version: int = 0,
                 accepted_at: str = "") -> None:
        self.source = source
        self.state = state
        self.dev = dev
        self.ino = ino
        self.size = size
        self.mtime = mtime  #: nanoseconds
        self.last_seq = last_seq
        self.updated_at = updated_at
        #: on an ``accepted`` cursor: the version whose place the source lands in from then on
        self.next_version = next_version
        #: on an ``accepted`` cursor: when a person accepted the rewrite
        self.accepted_at = accepted_at

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self.FIELDS)

    __hash__ = None  # type: ignore[assignment]  # mutable: compared by value, never hashed

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{n}={getattr(self, n)!r}' for n in self.FIELDS)})"

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
        values = _READ.get((cls, data))
        if values is None:
            values = _remember(cls, data, cls._parse(path, data))
        return cls(**values)  # type: ignore[arg-type]

    @classmethod
    def _parse(cls, path: Path, data: bytes) -> dict[str, object]:
        """The fields ``data`` holds, by name (``CursorUnreadable`` when it is no cursor)."""
        ints = cls.FIELDS
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CursorUnreadable(path, f"not UTF-8 (byte {exc.start})") from None
        # into the fields by name (a later line of a key wins, as it would set the field again);
        # parsed once per bytes (:data:`_READ`), so the one reading of the lines serves here too
        values: dict[str, object] = {}
        state = False
        not_a_number = ""
        for key, value in parse_pairs(text):
            state = state or key == "state"
            is_int = ints.get(key)
            if is_int is None:
                continue  # a later version's key, or upstream's (``schema``, ``kind``, ``origin``)
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
        return values

    def save(self, path: Path) -> None:
        """Replace the cursor atomically. Its new name is not fsynced into the directory: a
        cursor lost to a power loss only lags, and is brought forward from the landed files."""
        write_replace(path, self.encode(), sync_dir=False)

    def encode(self) -> bytes:
        """The cursor file's bytes. What a read of them gives is remembered (:data:`_READ`): a
        cursor written is read back in the same landing (its settled entry), from the very bytes
        the group keeps. Its fields are what a read gives when each has the type the file says
        and every text is printable with no space around it (a read strips blanks, and splits
        lines at more than ``\n``); else the bytes are parsed when read, as any other."""
        ints = self.FIELDS
        when_set = self._WHEN_SET
        fields = {name: getattr(self, name) for name in ints}
        data = format_pairs([(name, value) for name, value in fields.items() if value or name not in when_set])
        if all(type(value) is int if ints[name] else type(value) is str and value.isprintable()
               and value == value.strip(" ") for name, value in fields.items()):
            _remember(type(self), data, fields)
        return data


class AppendCursor(Cursor):
    """An append-only source: every byte before ``offset`` (always a line end) has landed."""

    __slots__ = ("last_uuid", "offset", "ord", "tail_sha256")

    FIELDS: ClassVar[dict[str, bool]] = {**Cursor.FIELDS, "offset": True, "ord": True, "last_uuid": False,
                                         "tail_sha256": False}

    def __init__(self, *, offset: int = 0, ord: int = 0, last_uuid: str = "", tail_sha256: str = "",
                 **base: Unpack[CursorFields]) -> None:
        super().__init__(**base)
        self.offset = offset
        self.ord = ord
        self.last_uuid = last_uuid
        self.tail_sha256 = tail_sha256  #: SHA-256 of the ≤ 1 MiB before ``offset``


class SnapshotCursor(Cursor):
    """A document rewritten in place: the digest of the version last landed."""

    __slots__ = ("content_sha256",)

    FIELDS: ClassVar[dict[str, bool]] = {**Cursor.FIELDS, "content_sha256": False}

    def __init__(self, *, content_sha256: str = "", **base: Unpack[CursorFields]) -> None:
        super().__init__(**base)
        self.content_sha256 = content_sha256
