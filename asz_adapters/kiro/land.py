"""Landing a claimed Kiro session: its JSONL logs and metadata documents through the collectors
of :mod:`asz_core.collect`, its database conversations through
:mod:`~asz_adapters.kiro.db_collector`. Loaded by ``asz_land`` only, so that a pass with nothing
new does not load the dialects, the collectors or the writer.
"""

from __future__ import annotations

import os
from pathlib import Path

from asz_adapters.kiro.db_collector import ConversationSource, collect_conversation
from asz_adapters.kiro.dialect_cli import CliEventDialect
from asz_adapters.kiro.dialect_db import DatabaseTurnDialect
from asz_adapters.kiro.dialect_ide import IdeMessageDialect
from asz_adapters.kiro.dialect_meta import CliMetaDialect, IdeMetaDialect
from asz_adapters.kiro.gone import GoneWalk, mark_places_gone
from asz_adapters.kiro.paths import resolve_paths
from asz_adapters.kiro.settled import META, TRANSCRIPT
from asz_adapters.kiro.stream_owner import DB_MARK, foreign_source
from asz_adapters.kiro.units import MAIN, CliBundle, DbConversation, IdeSession
from asz_core.collect import AppendSource, SnapshotSource, collect_append, collect_snapshot
from asz_core.context import AdapterContext
from asz_core.plugin import SessionClaim
from asz_core.root.layout import cursor_file
from asz_core.root.storage import SessionHandle

__all__ = ["land_claim"]

def land_claim(ctx: AdapterContext, claim: SessionClaim, session: SessionHandle) -> None:
    """Land every unit of ``claim``: logs and metadata through the collectors, the database's
    conversations turn by turn, then the places none of them covered that are gone. A place
    that cannot be judged this pass keeps the session from being settled."""
    home = resolve_paths(ctx.source_root, ctx.options).home
    for item in claim.found:
        unit = item.payload
        if isinstance(unit, GoneWalk):  # after the units: the places none of them covered
            if not mark_places_gone(ctx, session, unit):
                ctx.undecided()
            continue
        if isinstance(unit, CliBundle):
            _land_log_and_meta(ctx, session, home, unit.stream, unit.jsonl, unit.meta,
                               CliEventDialect(unit.jsonl), CliMetaDialect(_child(unit.stream)))
        elif isinstance(unit, IdeSession):
            _land_log_and_meta(ctx, session, home, unit.stream, unit.messages, unit.meta,
                               IdeMessageDialect(unit.messages), IdeMetaDialect(_child(unit.stream)))
        elif isinstance(unit, DbConversation):
            src = _relative(unit.database, home) + DB_MARK + unit.id
            subdir = f"streams/{unit.stream}"
            if not _refused(ctx, session, subdir, src):
                collect_conversation(ctx, session, ConversationSource(
                    unit=unit, src=src, subdir=subdir, stream=unit.stream,
                    dialect=DatabaseTurnDialect()))


def _land_log_and_meta(ctx: AdapterContext, session: SessionHandle, home: Path, stream: str,
                       log: Path, meta: Path, dialect: CliEventDialect | IdeMessageDialect,
                       meta_dialect: CliMetaDialect | IdeMetaDialect) -> None:
    subdir = f"streams/{stream}"
    src = _relative(log, home)
    cursor = cursor_file(session.dir, subdir, TRANSCRIPT)
    # A log that is gone is still handed to the collector when it landed here, so it is
    # counted gone; a log that never landed here and is absent is simply not there yet.
    ours = cursor.exists() and foreign_source(cursor, src) is None
    if (log.exists() and not _refused(ctx, session, subdir, src)) or (not log.exists() and ours):
        collect_append(ctx, session, AppendSource(path=log, src=src, subdir=subdir,
                                                  kind=TRANSCRIPT, dialect=dialect, stream=stream))
    if meta.exists() or cursor_file(session.dir, subdir, META).exists():
        collect_snapshot(ctx, session, SnapshotSource(path=meta, src=_relative(meta, home),
                                                      subdir=subdir, kind=META,
                                                      dialect=meta_dialect, stream=stream))


def _refused(ctx: AdapterContext, session: SessionHandle, subdir: str, src: str) -> bool:
    owner = foreign_source(cursor_file(session.dir, subdir, TRANSCRIPT), src)
    if owner is None:
        return False
    ctx.counters.unreadable += 1
    ctx.warn(f"session {session.id}: {src} is not landed: {subdir} already holds the transcript "
             f"of {owner}, and one stream takes one source")
    return True


def _child(stream: str) -> str | None:
    return None if stream == MAIN else stream


def _relative(path: Path, home: Path) -> str:
    """A ``src``: the path relative to Kiro's home, forward slashes (``..`` where it is outside,
    as kiro-cli's database is)."""
    try:
        return Path(os.path.relpath(path, home)).as_posix()
    except ValueError:  # another drive, on Windows
        return path.as_posix()
