"""What discovery finds, one object per unit landed: a CLI bundle, an IDE session directory, a
database conversation. Claim fills in what it reads (the working directory, the parent) and
where the unit lands (``stream``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["MAIN", "CliBundle", "DbConversation", "IdeSession", "Unit", "directory_of"]

MAIN = "main"


@dataclass
class CliBundle:
    """A Kiro CLI session: ``<id>.jsonl`` (events) and ``<id>.json`` (metadata) in
    ``directory``; either may be missing (not written yet, or deleted since it landed)."""

    id: str
    directory: Path
    cwd: str | None = None
    parent: str | None = None
    stream: str = MAIN

    @property
    def jsonl(self) -> Path:
        return self.directory / f"{self.id}.jsonl"

    @property
    def meta(self) -> Path:
        return self.directory / f"{self.id}.json"


@dataclass
class IdeSession:
    """A Kiro IDE (≥ 1.0) session directory ``<bucket>/sess_<uuid>/``."""

    id: str
    dir: Path
    cwd: str | None = None
    stream: str = MAIN

    @property
    def messages(self) -> Path:
        return self.dir / "messages.jsonl"

    @property
    def meta(self) -> Path:
        return self.dir / "session.json"


@dataclass
class RefusedDirectory:
    """A directory where Kiro keeps sessions that is not read, and why (a link, a name that is
    not a session's): counted unreadable by the claim, with the reason."""

    path: Path
    reason: str


@dataclass
class DbConversation:
    """One ``conversations_v2`` row, as listed (its value is read only when it changed)."""

    id: str
    database: Path
    key: str          #: the row's key: the directory kiro-cli ran in
    updated_at: int   #: the row's ``updated_at`` (ms)
    length: int       #: the value's length, as SQLite counts it
    raw_key: bytes = b""  #: the key's own bytes, which name the row exactly
    stream: str = MAIN


Unit = CliBundle | IdeSession | DbConversation


def directory_of(session: str, members: list[Unit]) -> str | None:
    """The directory ``session`` is judged by: its main unit's, else any member's."""
    main = [u for u in members if u.id == session and u.stream == MAIN]
    for unit in main + members:
        directory = unit.key if isinstance(unit, DbConversation) else unit.cwd
        if directory:
            return directory
    return None
