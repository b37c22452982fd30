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
from typing import TYPE_CHECKING, Any

from asz_adapters.kiro.about import DIALECTS
from asz_adapters.kiro.cli_sessions import discover_cli_sessions
from asz_adapters.kiro.gone import DATABASE_KIND, ListedDatabase, claim_gone
from asz_adapters.kiro.ide_sessions import discover_ide_sessions
from asz_adapters.kiro.legacy_stores import discover_legacy_stores
from asz_adapters.kiro.paths import resolve_paths
from asz_adapters.kiro.placement import claim_sessions
from asz_core import hookimpl
from asz_core.plugin import AdapterInfo, Found, SessionClaim

if TYPE_CHECKING:
    from asz_core.context import AdapterContext
    from asz_core.glossary import Glossary
    from asz_core.root.storage import SessionHandle

__all__ = ["VERSION"]

VERSION = "0.1.0"


@hookimpl
def asz_adapter_info() -> AdapterInfo:
    return AdapterInfo(version=VERSION, runtime="Kiro", dialects=DIALECTS,
                       counter_labels={"excluded": "sessions_excluded"})


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
            if database.parent.is_dir() and not os.path.lexists(database):
                # deleted (kiro-cli reset, uninstalled): listed in full, with no row left; a
                # directory not there (a disk not mounted) decides nothing, as a busy file does
                found.append(_listed_in_full(database, conversations=0))
            continue
        ctx.source_dirs.append(f"{database} (kiro-cli database)")
        from asz_adapters.kiro.cli_database import KIND, list_database  # sqlite3: only when there is one

        listing = list_database(database)
        if listing.problem is not None:
            if listing.busy:
                ctx.counters.waiting += 1
            else:
                ctx.counters.unreadable += 1
            ctx.warn(f"{database} {listing.problem}; its conversations are tried again next pass")
        else:  # listed in full: a conversation landed before and not in it now is gone
            found.append(_listed_in_full(database, sum(f.kind == KIND for f in listing.found)))
        found.extend(listing.found)
    for storage in paths.global_storage:
        if storage.is_dir():
            ctx.source_dirs.append(f"{storage} (kiro-ide stores before 1.0, not read)")
            found.extend(discover_legacy_stores(storage))
    return found


def _listed_in_full(database: Path, conversations: int) -> Found:
    """The unit saying ``database`` was listed whole this pass (so rows not in it are gone)."""
    return Found(kind=DATABASE_KIND, key=str(database), sources=0, path=str(database),
                 detail={"generation": "kiro-cli-db/1", "conversations": conversations},
                 payload=ListedDatabase(database))


@hookimpl
def asz_claim(ctx: AdapterContext, found: Iterable[Found]) -> Iterable[SessionClaim]:
    found = list(found)  # walked twice: to place the units, then for the databases listed in full
    claims = claim_sessions(ctx, found)
    # sessions and streams landed before whose sources are deleted: their cursors say source_gone
    return claims + claim_gone(ctx, resolve_paths(ctx.source_root, ctx.options).home, found, claims)


@hookimpl
def asz_land(ctx: AdapterContext, claim: SessionClaim, session: SessionHandle) -> None:
    # the collectors, dialects and writer load when a session lands, not on a pass with nothing new
    from asz_adapters.kiro.land import land_claim

    land_claim(ctx, claim, session)


@hookimpl
def asz_glossary() -> list[Glossary]:
    from asz_adapters.kiro.glossary import GLOSSARIES  # only the glossary command reads it

    return list(GLOSSARIES)
