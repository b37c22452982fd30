"""What discovery finds, one object per unit landed: a CLI bundle, an IDE session directory, a
database conversation. Claim fills in what it reads (the working directory, the parent) and
where the unit lands (``stream``).

They are plain classes, not dataclasses: every pass imports them, and a dataclass compiles its
generated methods at each import."""

from __future__ import annotations

from pathlib import Path

__all__ = ["MAIN", "CliBundle", "DbConversation", "IdeSession", "Unit", "directory_of"]

MAIN = "main"


class CliBundle:
    """A Kiro CLI session: ``<id>.jsonl`` (events) and ``<id>.json`` (metadata) in
    ``directory``; either may be missing (not written yet, or deleted since it landed)."""

    __slots__ = ("cwd", "directory", "id", "parent", "stream")

    def __init__(self, id: str, directory: Path, cwd: str | None = None, parent: str | None = None,
                 stream: str = MAIN) -> None:
        self.id = id
        self.directory = directory
        self.cwd = cwd
        self.parent = parent
        self.stream = stream

    def __repr__(self) -> str:
        return f"CliBundle({self.id!r}, stream={self.stream!r})"

    @property
    def jsonl(self) -> Path:
        return self.directory / f"{self.id}.jsonl"

    @property
    def meta(self) -> Path:
        return self.directory / f"{self.id}.json"


class IdeSession:
    """A Kiro IDE (≥ 1.0) session directory ``<bucket>/sess_<uuid>/``."""

    __slots__ = ("cwd", "dir", "id", "stream")

    def __init__(self, id: str, dir: Path, cwd: str | None = None, stream: str = MAIN) -> None:
        self.id = id
        self.dir = dir
        self.cwd = cwd
        self.stream = stream

    def __repr__(self) -> str:
        return f"IdeSession({self.id!r}, stream={self.stream!r})"

    @property
    def messages(self) -> Path:
        return self.dir / "messages.jsonl"

    @property
    def meta(self) -> Path:
        return self.dir / "session.json"


class RefusedDirectory:
    """A directory where Kiro keeps sessions that is not read, and why (a link, a name that is
    not a session's): counted unreadable by the claim, with the reason. A plain class
    (docs/architecture.md, "Classes a pass imports")."""

    __slots__ = ("path", "reason")

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason


class DbConversation:
    """One ``conversations_v2`` row, as listed (its value is read only when it changed)."""

    __slots__ = ("database", "id", "key", "length", "raw_key", "stream", "updated_at")

    def __init__(self, id: str, database: Path, key: str, updated_at: int, length: int, raw_key: bytes = b"",
                 stream: str = MAIN) -> None:
        self.id = id
        self.database = database
        self.key = key                #: the row's key: the directory kiro-cli ran in
        self.updated_at = updated_at  #: the row's ``updated_at`` (ms)
        self.length = length          #: the value's length, as SQLite counts it
        self.raw_key = raw_key        #: the key's own bytes, which name the row exactly
        self.stream = stream

    def __repr__(self) -> str:
        return f"DbConversation({self.id!r}, stream={self.stream!r})"


Unit = CliBundle | IdeSession | DbConversation


def directory_of(session: str, members: list[Unit]) -> str | None:
    """The directory ``session`` is judged by: its main unit's, else any member's."""
    main = [u for u in members if u.id == session and u.stream == MAIN]
    for unit in main + members:
        directory = unit.key if isinstance(unit, DbConversation) else unit.cwd
        if directory:
            return directory
    return None
