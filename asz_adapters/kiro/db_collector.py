"""Landing a kiro-cli conversation turn by turn: the database's collector.

kiro-cli rewrites a ``conversations_v2`` row whole each time the conversation grows. The root
must grow by the new turns only, so each turn (``history[i]``) lands once, as one record, and
the row's turns are addressed as if they were the lines of a file:

* ``ord``   = the turn's index + 1;
* ``bytes`` = the length of the turn's JSON, compacted (whitespace between tokens removed, as
  the writer keeps any source JSON); ``sha`` = the first 12 hex digits of its SHA-256;
* ``off``   = the sum of ``bytes + 1`` over the turns before it: where the turn would start in
  a file holding one compacted turn per line.

kiro-cli writes compact JSON, so there ``bytes``/``sha`` cover the turn's exact bytes in the
value and ``off`` is its distance from the first turn's start (turns are one comma apart). The
chain every reader checks (the next ``off`` is ``off + bytes + 1``, the first is 0) holds by
construction. The value's own byte offsets cannot serve: the first turn does not start at 0,
and a writer that puts a space after each comma would break the chain.

The cursor (``<stream>/transcript.cursor``) has the append cursor's keys, so ``verify`` checks
that the landed turns reach it, and more: ``turns_sha256`` (the SHA-256 of every landed turn's
bytes, each followed by a newline) and the row's ``updated_at`` and value length when it was
last read in full. A row whose two markers did not change is not read again. A rewrite of
turns already landed is a conflict: nothing more lands from the row, and every pass counts it,
until the landed turns are back or a person accepts the rewritten row as a new version, whose
turns land from the first in a place of their own (:mod:`asz_core.collect.versions`). A crash
between landing a file and writing the cursor is reconciled from the landed records before
reading on, so no turn lands twice.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from asz_adapters.kiro.cli_database import DatabaseUnavailable, read_value
from asz_adapters.kiro.dialect_db import DatabaseTurnDialect
from asz_adapters.kiro.stream_owner import same_source
from asz_adapters.kiro.units import DbConversation
from asz_core.collect import SourceLine, convert_encoded, line_sha
from asz_core.collect.append import ACCEPT_HINT
from asz_core.collect.saving import mark_gone, save_state
from asz_core.collect.source import Encoded, made_to_fit
from asz_core.collect.versions import current_place, stream_of
from asz_core.context import MAX_WINDOWS, AdapterContext
from asz_core.root.cursors import ACTIVE, CONFLICT, AppendCursor
from asz_core.root.durable import open_landed
from asz_core.root.layout import parse_file_name
from asz_core.root.storage import SessionHandle
from asz_core.sessiondata import Header, SessionDataError
from asz_core.sessiondata.jsonbytes import JSONLine, NotJSON

__all__ = ["ConversationCursor", "ConversationSource", "collect_conversation"]

_KIND = "transcript"
_CLOSING_ROOM = 128
#: the running digest of no turns
_NO_TURNS = hashlib.sha256(b"").hexdigest()


class ConversationCursor(AppendCursor):
    """How far a conversation has landed: an append cursor over its turns (``ord``, ``offset``
    as the records give them), plus what tells a rewrite of landed turns from growth."""

    __slots__ = ("row_length", "row_updated_at", "turns_sha256")

    FIELDS: ClassVar[dict[str, bool]] = {**AppendCursor.FIELDS, "turns_sha256": False, "row_updated_at": True,
                                         "row_length": True}

    def __init__(self, *, turns_sha256: str = _NO_TURNS, row_updated_at: int = -1, row_length: int = -1,
                 **append: Any) -> None:
        super().__init__(**append)
        self.turns_sha256 = turns_sha256  #: the landed turns' running digest
        self.row_updated_at = row_updated_at  #: the row's ``updated_at`` when it last landed
        self.row_length = row_length  #: the length of the row's value then


@dataclass
class ConversationSource:
    """One conversation of a session, and where its turns land."""

    unit: DbConversation
    src: str
    subdir: str
    stream: str
    dialect: DatabaseTurnDialect


class _Conflict(Exception):
    """The row no longer holds the turns that landed."""


def collect_conversation(ctx: AdapterContext, session: SessionHandle, source: ConversationSource) -> None:
    """Land the turns of ``source`` that have not landed yet."""
    counters = ctx.counters
    unit = source.unit
    # one that does not read: rebuilt, with a warning; an accepted rewrite goes on in its version
    place = current_place(ctx, session, source.subdir, _KIND, ConversationCursor)
    counters.sources += 1
    if place.broken:
        counters.conflicts += 1
        ctx.warn(f"{place.broken}; {ACCEPT_HINT}")
        return
    if place.subdir != source.subdir:
        source = replace(source, subdir=place.subdir, stream=stream_of(place.subdir, source.stream) or "")
    path, cursor = place.path, place.cursor
    if (cursor is not None and cursor.state == ACTIVE
            and (cursor.row_updated_at, cursor.row_length) == (unit.updated_at, unit.length)):
        return  # the row did not change: the cheapest pass reads only the listing
    try:
        value = read_value(unit)
    except DatabaseUnavailable as exc:
        if exc.busy:
            counters.waiting += 1
        else:
            counters.unreadable += 1
        ctx.warn(f"{unit.database}: conversation {unit.id} cannot be read ({exc}); it is tried "
                 f"again next pass")
        return
    if value is None:
        mark_gone(ctx, session, cursor, path)
        return
    turns = _turns(ctx, unit, value)
    if turns is None:
        return
    if cursor is None:
        cursor = ConversationCursor(source=source.src)
    try:
        digest = _check(cursor, turns)
        digest = _reconcile(session, source, cursor, turns, digest)
    except _Conflict as exc:
        if cursor.state != CONFLICT:
            cursor.state = CONFLICT
            save_state(ctx, session, cursor, path)
        counters.conflicts += 1
        ctx.warn(f"{unit.database}: conversation {unit.id}: {exc}. The landed turns stay as they "
                 f"are and nothing more lands from this conversation until the row holds them "
                 f"again, or until `asz-pipeline conflicts --accept` takes the rewritten row as a "
                 f"new version; compare the row's history with the session's landed files to see "
                 f"what Kiro rewrote")
        return
    cursor.state = ACTIVE
    done = _land_windows(ctx, session, source, cursor, path, turns, digest)
    if done:
        cursor.row_updated_at, cursor.row_length = unit.updated_at, unit.length
    save_state(ctx, session, cursor, path)


def _turns(ctx: AdapterContext, unit: DbConversation, value: bytes) -> list[bytes] | None:
    """The compacted bytes of every turn, or ``None`` (counted unreadable) when there are none."""
    try:
        return list(JSONLine(value).items_at("history"))
    except NotJSON as exc:
        problem = f"its value is not JSON ({exc})"
    except (KeyError, TypeError):
        problem = "its value has no history list"
    ctx.counters.unreadable += 1
    ctx.warn(f"{unit.database}: conversation {unit.id} is not read: {problem}; nothing of it "
             f"lands until it is")
    return None


def _digest_of(turns: list[bytes]) -> hashlib._Hash:
    digest = hashlib.sha256()
    for turn in turns:
        digest.update(turn)
        digest.update(b"\n")
    return digest


def _check(cursor: ConversationCursor, turns: list[bytes]) -> hashlib._Hash:
    """The running digest of the landed turns; ``_Conflict`` when they are not in the row."""
    if len(turns) < cursor.ord:
        raise _Conflict(f"its history holds {len(turns)} turn(s) but {cursor.ord} landed")
    digest = _digest_of(turns[: cursor.ord])
    offset = sum(len(t) + 1 for t in turns[: cursor.ord])
    if digest.hexdigest() != cursor.turns_sha256 or offset != cursor.offset:
        raise _Conflict(f"a turn among the {cursor.ord} already landed was rewritten")
    return digest


def _reconcile(session: SessionHandle, source: ConversationSource, cursor: ConversationCursor,
               turns: list[bytes], digest: hashlib._Hash) -> hashlib._Hash:
    """Move the cursor past turns that landed after it (a crash before the cursor write)."""
    for seq, landed in _files_after(session.dir / source.subdir, cursor.last_seq):
        try:
            with open_landed(landed) as reader:  # a link at its name: the session is refused
                if not same_source(str(reader.header.get("src", "")), source.src):
                    continue
                records = list(reader)
        except SessionDataError:
            continue  # not ours to trust; verify reports it
        for record in records:
            if record.ord <= cursor.ord:
                continue  # a repeat of a turn the cursor already covers
            index = record.ord - 1
            if (record.ord != cursor.ord + 1 or index >= len(turns) or record.off != cursor.offset
                    or record.bytes != len(turns[index]) or record.sha != line_sha(turns[index])):
                raise _Conflict(f"turn {record.ord}, landed in {landed.name}, is not in the row as "
                                f"it landed")
            digest.update(turns[index])
            digest.update(b"\n")
            cursor.ord, cursor.offset = record.ord, record.off + record.bytes + 1
        cursor.last_seq = seq
        cursor.turns_sha256 = digest.hexdigest()
    return digest


def _files_after(directory: Path, after_seq: int) -> list[tuple[int, Path]]:
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    files = []
    for name in names:
        parsed = parse_file_name(name)
        if parsed and not parsed.skeleton and parsed.kind == _KIND and parsed.seq > after_seq:
            files.append((parsed.seq, directory / name))
    return sorted(files)


def _records(source: ConversationSource, turns: list[bytes], start: int,
             offset: int) -> Iterator[tuple[Encoded, bytes]]:
    """``(record as it lands, turn bytes)`` for each turn from index ``start``; a record that
    cannot be encoded lands as its turn would if it did not decode (``convert_encoded``)."""
    dialect = source.dialect.reading(turns)  # a turn's loop is read from the turns before it
    for index in range(start, len(turns)):
        raw = turns[index]
        encoded, _ = convert_encoded(dialect, SourceLine(raw, index + 1, offset))
        offset += len(raw) + 1
        yield encoded, raw


def _land_windows(ctx: AdapterContext, session: SessionHandle, source: ConversationSource,
                  cursor: ConversationCursor, path: Path, turns: list[bytes],
                  digest: hashlib._Hash) -> bool:
    """Land the new turns in files of at most ``max_delta_bytes``; True when all landed."""
    limit = ctx.max_delta_bytes
    items = _records(source, turns, cursor.ord, cursor.offset)
    pending = next(items, None)
    windows = 0
    while pending is not None:
        if windows == MAX_WINDOWS:
            ctx.counters.pending += 1
            return False
        header = Header(kind=_KIND, session="", src=source.src, dialect=source.dialect.name,
                        adapter=ctx.adapter_id, stream=source.stream)
        landing = session.begin(source.subdir, header)
        written: list[bytes] = []
        try:
            encoded, raw = pending
            room = limit - landing.writer.size - _CLOSING_ROOM
            alone = len(encoded[0]) + 1 > room
            if alone:
                encoded = made_to_fit(encoded, room - 1)  # alone in its file, made to fit
            landing.write(*encoded[:5])
            written.append(raw)
            pending = next(items, None)
            while pending is not None and not alone:
                encoded, raw = pending
                if landing.writer.size + len(encoded[0]) + 1 + _CLOSING_ROOM > limit:
                    break
                landing.write(*encoded[:5])
                written.append(raw)
                pending = next(items, None)
            landed = session.commit(landing)
        except BaseException:
            landing.abort()
            raise
        windows += 1
        for raw in written:
            digest.update(raw)
            digest.update(b"\n")
        cursor.ord = landed.summary.last_ord
        cursor.offset = landed.summary.last_off + landed.summary.last_bytes + 1
        cursor.last_seq = landed.seq
        cursor.turns_sha256 = digest.hexdigest()
        save_state(ctx, session, cursor, path)
    return True

