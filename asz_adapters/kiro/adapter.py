"""The ``kiro`` adapter's hooks: discover every Kiro generation, claim sessions, land them.

See ``README.md`` beside this file for what is read; each module named below documents its own
rules. The collectors of :mod:`asz_core.collect` do the append- and snapshot-cursor work for the
JSONL logs and metadata documents; :mod:`~asz_adapters.kiro.db_collector` does the same, turn by
turn, for the database's conversations.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from asz_adapters.kiro.cli_database import list_database
from asz_adapters.kiro.cli_sessions import discover_cli_sessions
from asz_adapters.kiro.db_collector import ConversationSource, collect_conversation
from asz_adapters.kiro.dialect_cli import CliEventDialect
from asz_adapters.kiro.dialect_db import DatabaseTurnDialect
from asz_adapters.kiro.dialect_ide import IdeMessageDialect
from asz_adapters.kiro.dialect_meta import CliMetaDialect, IdeMetaDialect
from asz_adapters.kiro.ide_sessions import discover_ide_sessions
from asz_adapters.kiro.legacy_stores import discover_legacy_stores
from asz_adapters.kiro.paths import resolve_paths
from asz_adapters.kiro.placement import claim_sessions
from asz_adapters.kiro.stream_owner import DB_MARK, foreign_source
from asz_adapters.kiro.units import MAIN, CliBundle, DbConversation, IdeSession
from asz_core import hookimpl
from asz_core.collect import AppendSource, SnapshotSource, collect_append, collect_snapshot
from asz_core.context import AdapterContext
from asz_core.plugin import AdapterInfo, Found, SessionClaim
from asz_core.root.storage import SessionHandle

__all__ = ["VERSION"]

VERSION = "0.1.0"
DIALECTS = (CliEventDialect.name, CliMetaDialect.name, DatabaseTurnDialect.name,
            IdeMessageDialect.name, IdeMetaDialect.name)


@hookimpl
def asz_adapter_info() -> AdapterInfo:
    return AdapterInfo(version=VERSION, runtime="Kiro", dialects=DIALECTS)


@hookimpl
def asz_options_schema() -> dict[str, Any]:
    return {
        "cli_database": {
            "type": "string", "default": "",
            "description": "kiro-cli's data.sqlite3. Empty: with source_root empty, "
                           "$KIRO_CLI_DB_PATH or the per-OS default; with source_root set, "
                           "none. Relative to source_root when that is set."},
        "ide_global_storage": {
            "type": "string", "default": "",
            "description": "the Kiro IDE's User/globalStorage/kiro.kiroagent folder, where its "
                           "stores from before 1.0 are counted (not read). Empty: the per-OS "
                           "default when source_root is empty, else none."},
    }


@hookimpl
def asz_discover(ctx: AdapterContext) -> Iterable[Found]:
    paths = resolve_paths(ctx.source_root, ctx.options)
    found: list[Found] = []
    ctx.source_dirs.append(f"{paths.cli_sessions} (kiro-cli sessions)")
    found.extend(discover_cli_sessions(paths.cli_sessions))
    ctx.source_dirs.append(f"{paths.ide_sessions} (kiro-ide sessions)")
    found.extend(discover_ide_sessions(paths.ide_sessions))
    for database in paths.databases:
        if not database.is_file():
            if paths.databases_from != "default":
                ctx.warn(f"no kiro-cli database at {database} ({paths.databases_from})")
            continue
        ctx.source_dirs.append(f"{database} (kiro-cli database)")
        listing = list_database(database)
        if listing.problem is not None:
            if listing.busy:
                ctx.counters.waiting += 1
            else:
                ctx.counters.unreadable += 1
            ctx.warn(f"{database} {listing.problem}; its conversations are tried again next pass")
        found.extend(listing.found)
    for storage in paths.global_storage:
        if storage.is_dir():
            ctx.source_dirs.append(f"{storage} (kiro-ide stores before 1.0, not read)")
            found.extend(discover_legacy_stores(storage))
    return found


@hookimpl
def asz_claim(ctx: AdapterContext, found: Iterable[Found]) -> Iterable[SessionClaim]:
    return claim_sessions(ctx, found)


@hookimpl
def asz_land(ctx: AdapterContext, claim: SessionClaim, session: SessionHandle) -> None:
    home = resolve_paths(ctx.source_root, ctx.options).home
    for item in claim.found:
        unit = item.payload
        if isinstance(unit, CliBundle):
            _land_log_and_meta(ctx, session, home, unit.stream, unit.jsonl, unit.meta,
                               CliEventDialect(), CliMetaDialect(_child(unit.stream)))
        elif isinstance(unit, IdeSession):
            _land_log_and_meta(ctx, session, home, unit.stream, unit.messages, unit.meta,
                               IdeMessageDialect(), IdeMetaDialect(_child(unit.stream)))
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
    cursor = session.dir / subdir / "transcript.cursor"
    # A log that is gone is still handed to the collector when it landed here, so it is
    # counted gone; a log that never landed here and is absent is simply not there yet.
    ours = cursor.exists() and foreign_source(cursor, src) is None
    if (log.exists() and not _refused(ctx, session, subdir, src)) or (not log.exists() and ours):
        collect_append(ctx, session, AppendSource(path=log, src=src, subdir=subdir,
                                                  kind="transcript", dialect=dialect, stream=stream))
    if meta.exists() or (session.dir / subdir / "meta.cursor").exists():
        collect_snapshot(ctx, session, SnapshotSource(path=meta, src=_relative(meta, home),
                                                      subdir=subdir, kind="agent_meta",
                                                      dialect=meta_dialect, stream=stream))


def _refused(ctx: AdapterContext, session: SessionHandle, subdir: str, src: str) -> bool:
    owner = foreign_source(session.dir / subdir / "transcript.cursor", src)
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
