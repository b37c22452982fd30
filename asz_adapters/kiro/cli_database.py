"""kiro-cli's database: the ``conversations_v2`` table of ``data.sqlite3``, read-only.

The file is opened with SQLite's ``mode=ro`` URI, and only ``conversations_v2`` is queried: the
same file holds credentials (``auth_kv``), telemetry (``state``) and shell history
(``history``), which this adapter never reads. Discovery lists each row's key, id, update time
and value length (never the value); landing reads one row's value when those changed.

A table named ``conversations`` (the older form keyed by directory, without a
``conversation_id`` column) is counted as not read by this version.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from asz_adapters.kiro.units import DbConversation
from asz_core.plugin import Found

__all__ = ["GENERATION", "KIND", "DatabaseListing", "list_database", "read_value"]

GENERATION = "kiro-cli-db/1"
KIND = "kiro-cli database conversation"
NOT_READ = "not read by this version"
_BUSY_TIMEOUT_S = 2.0


class DatabaseUnavailable(Exception):
    """The database exists but cannot be read (``busy``: another writer holds it now)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.busy = "locked" in message or "busy" in message


@contextmanager
def _connect(database: Path) -> Iterator[sqlite3.Connection]:
    uri = database.absolute().as_uri() + "?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True, timeout=_BUSY_TIMEOUT_S)
    except sqlite3.Error as exc:
        raise DatabaseUnavailable(str(exc)) from None
    # Text comes back as the bytes SQLite holds: a value is landed from its own bytes, and a
    # key that is not valid UTF-8 still names its row exactly.
    connection.text_factory = bytes
    with closing(connection):
        yield connection


@dataclass
class DatabaseListing:
    """What one database holds, or why it could not be listed."""

    found: list[Found] = field(default_factory=list)
    problem: str | None = None
    busy: bool = False  #: the problem is a lock another writer holds: it will pass


def list_database(database: Path) -> DatabaseListing:
    """One :class:`Found` per ``conversations_v2`` row (ids are checked at claim)."""
    listing = DatabaseListing()
    try:
        with _connect(database) as db:
            tables = {name.decode("utf-8", "replace") for (name,) in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "conversations_v2" in tables:
                rows = db.execute("SELECT key, conversation_id, updated_at, length(value) "
                                  "FROM conversations_v2 ORDER BY conversation_id, key").fetchall()
            else:
                rows = []
            legacy = (db.execute("SELECT count(*) FROM conversations").fetchone()[0]
                      if "conversations" in tables else 0)
    except (sqlite3.Error, DatabaseUnavailable) as exc:
        listing.problem = f"cannot be read: {exc}"
        listing.busy = DatabaseUnavailable(str(exc)).busy
        return listing
    for key, conversation, updated_at, length in rows:
        name = _text(conversation)
        unit = DbConversation(name, database, _text(key),
                              updated_at if type(updated_at) is int else -1,
                              length if type(length) is int else -1, raw_key=_raw(key))
        listing.found.append(Found(kind=KIND, key=name, session=name,
                                   path=str(database), detail={"generation": GENERATION},
                                   payload=unit))
    if legacy:
        listing.found.append(Found(kind=NOT_READ, key=f"{database}#conversations", sources=legacy,
                                   path=str(database),
                                   detail={"generation": "kiro-cli conversations (older table)"}))
    return listing


def read_value(unit: DbConversation) -> bytes | None:
    """The row's value as UTF-8 bytes, or ``None`` when the row is gone.

    ``DatabaseUnavailable`` when the database cannot be read now.
    """
    try:
        with _connect(unit.database) as db:
            row = db.execute("SELECT value FROM conversations_v2 WHERE key = CAST(? AS TEXT) "
                             "AND conversation_id = ?", (unit.raw_key, unit.id)).fetchone()
    except sqlite3.Error as exc:
        raise DatabaseUnavailable(str(exc)) from None
    if row is None:
        return None
    return _raw(row[0])


def _raw(value: object) -> bytes:
    if isinstance(value, bytes):
        return value
    return b"" if value is None else str(value).encode("utf-8", "surrogatepass")


def _text(value: object) -> str:
    return _raw(value).decode("utf-8", "replace")
