"""The ``claude-code-local`` adapter's hooks: Claude Code's transcripts, children and workflow
files, as Session Data.

* ``asz_discover`` lists ``source_root`` (default: ``projects/`` under Claude Code's directory)
  and its project directories, then yields one unit per session, reading that session's own
  directories only when the pass comes to it, with its stream and run counts and its directory;
  files that cannot be placed in a session are units of kind ``unreadable``. ``asz_claim``
  yields each claim as it goes, so a pass holds one session's discovery at a time.
* ``asz_claim`` applies ``include``/``exclude`` to the directory of each session's main
  transcript, and counts what is refused (``unreadable``, or a ``conflict`` for two files that
  would share one cursor) only for sessions it admits.
* ``asz_land`` hands each source to the host's collectors (:mod:`.sources`). A session landed
  before whose sources are all gone is claimed too, to mark its cursors ``source_gone``; once
  all are marked, the settled table notes it, so later passes count it from a stat of each of
  its cursors and sources (:mod:`.gone`).

Discovery reads no source. Each claim lists its sources (``settled_by``), so a session whose
sources and cursors all stat as they did when a pass last left it settled is counted by the
host (:class:`~asz_core.plugin.SettledBy`): it is neither locked nor landed, so a pass that
finds nothing new costs the directory listings, a stat per source and cursor, and one read of
the settled table.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from asz_adapters.claude_code_local.about import DIALECT
from asz_adapters.claude_code_local.discover import (
    JOURNAL,
    TRANSCRIPT,
    LoneTranscript,
    Projects,
    Refused,
    SessionSources,
    default_source_root,
    list_projects,
    lone_transcript,
    session_sources,
)
from asz_adapters.claude_code_local.gone import Pruned, mark_gone, pruned_sessions
from asz_core import hookimpl
from asz_core.plugin import AdapterInfo, Found, SessionClaim, SettledBy

if TYPE_CHECKING:
    from asz_core.collect import AppendSource
    from asz_core.context import AdapterContext
    from asz_core.glossary import Glossary
    from asz_core.root.settled import SettledSessions
    from asz_core.root.storage import SessionHandle

__all__ = ["VERSION"]

VERSION = "0.1.0"
#: the kinds read by the append collector (the others are documents, read by the snapshot one)
_APPENDED = (TRANSCRIPT, JOURNAL)


def _source_root(ctx: AdapterContext) -> Path:
    return Path(ctx.source_root).expanduser() if ctx.source_root else default_source_root()


@hookimpl
def asz_adapter_info() -> AdapterInfo:
    # land_session keeps nothing between sessions and writes only under the session it holds
    return AdapterInfo(version=VERSION, runtime="Claude Code", dialects=(DIALECT,), parallel_sessions=True,
                       counter_labels={"excluded": "sessions_excluded"},
                       landing_modules=("asz_adapters.claude_code_local.sources",))


@hookimpl
def asz_options_schema() -> dict[str, Any]:
    return {}


@hookimpl
def asz_discover(ctx: AdapterContext) -> Iterable[Found]:
    configured = _source_root(ctx)
    root = configured.resolve()
    ctx.source_dirs.append(str(root))
    if not root.is_dir():
        if ctx.source_root:
            ctx.warn(f"source_root {configured} is not a directory; nothing to collect from it")
        return []
    return _discovered(ctx, list_projects(root))


def _discovered(ctx: AdapterContext, projects: Projects) -> Iterator[Found]:
    """One unit per session, each session's directories read only when the pass comes to it
    (the pass lands a session before it asks for the next), then the files no session takes.
    A lone transcript (:class:`~.discover.LoneTranscript`) is handed on as the listing found it:
    its sources are built only if it is claimed and not settled."""
    for message in projects.errors:
        ctx.error(message)
    session_filter = ctx.session_filter
    admits = session_filter.admits_slug
    admits_all = session_filter.admits_every_slug
    for session in sorted(projects.places):
        lone = lone_transcript(projects, session)
        if lone is not None:
            detail: dict[str, Any] = {"streams": 1, "runs": 0, "directory": lone.slug}
            if not (admits_all or admits(lone.slug)):
                detail["excluded"] = True
            # positional: a no-op pass makes one per session, and keywords cost twice the call
            yield Found("session", session, session, 1, lone.location, detail, lone)
            continue
        sources = session_sources(projects, session, ctx.root.path)
        if sources is None:
            continue
        detail = {"streams": sources.streams, "runs": sources.runs, "directory": sources.directory}
        if sources.copies:
            detail["copies"] = sources.copies
        if sources.refused:
            detail["refused"] = len(sources.refused)
        if sources.directory is None or not admits(sources.directory):
            detail["excluded"] = True  # by include/exclude: shown by `sources`, not landed
        where = sources.main.location if sources.main else str(projects.root / (sources.directory or "") / session)
        yield Found(kind="session", key=session, session=session, sources=len(sources.files),
                    path=where, detail=detail, payload=sources)
    for refused in projects.refused:
        yield Found(kind="unreadable", key=str(refused.path), sources=0, path=str(refused.path),
                    detail={"directory": refused.directory}, payload=refused)


def _count_refused(ctx: AdapterContext, refused: Refused) -> None:
    if refused.conflict:
        ctx.counters.conflicts += 1
        ctx.warn(f"{refused.path}: {refused.reason}; it is not read until one of them is moved")
    else:
        ctx.counters.unreadable += 1
        ctx.warn(f"{refused.path}: {refused.reason}; not collected")


@hookimpl
def asz_claim(ctx: AdapterContext, found: Iterable[Found]) -> Iterable[SessionClaim]:
    session_filter = ctx.session_filter
    admits = session_filter.admits_slug
    admits_all = session_filter.admits_every_slug
    discovered: set[str] = set()  # a session id each: what is not here was pruned
    # a dry run never asks the table: it lands (counts) every session as if nothing had landed
    settled: SettledSessions | None = None if ctx.dry_run else ctx.settled
    for item in found:
        if item.session:
            discovered.add(item.session)
        payload = item.payload
        if isinstance(payload, LoneTranscript):
            if not (admits_all or admits(payload.slug)):
                ctx.counters.excluded += 1
                continue
            session = item.key
            if settled is not None:
                # settled and unchanged: counted from the listing and two stats, nothing built
                counted = settled.unchanged(session, [payload.location])
                if counted is not None:
                    yield SessionClaim(session, None, None, counted)  # unchanged=counted, positionally
                    continue
            item.payload = payload = payload.sources(session)
        if isinstance(payload, Refused):
            if admits(payload.directory):
                _count_refused(ctx, payload)
            continue
        sources: SessionSources = payload
        if sources.directory is None:  # nothing of it can be read: judge what was refused
            for refused in sources.refused:
                if admits(refused.directory):
                    _count_refused(ctx, refused)
            continue
        if not admits(sources.directory):
            ctx.counters.excluded += 1
            continue
        for refused in sources.refused:
            _count_refused(ctx, refused)
        if sources.files:
            yield SessionClaim(sources.session, [item], settled_by=[
                SettledBy(f.location, f.subdir, f.kind, append=f.kind in _APPENDED) for f in sources.files])
    yield from _pruned(ctx, discovered)


def _pruned(ctx: AdapterContext, discovered: set[str]) -> list[SessionClaim]:
    """Sessions landed before whose sources are all gone now: claimed to mark them gone."""
    root = _source_root(ctx).resolve()
    claims = []
    settled = None if ctx.dry_run else ctx.settled
    for found in pruned_sessions(ctx.root.path, discovered, root, settled):
        if not ctx.session_filter.admits_slug(found.directory):
            continue
        session = found.session
        ctx.counters.gone += found.marked
        if found.pending:
            claims.append(SessionClaim(session, [Found(kind="pruned", key=session, session=session,
                                                       sources=0, payload=Pruned(root, found.pending))]))
    return claims


@hookimpl
def asz_new_session(claim: SessionClaim) -> AppendSource | None:
    # what asz_land would land into a new session, when that is one main or subagent transcript
    from asz_adapters.claude_code_local.sources import lone_transcript

    return lone_transcript(claim)


@hookimpl
def asz_land(ctx: AdapterContext, claim: SessionClaim, session: SessionHandle) -> None:
    # the collectors, dialects and writer load when a session lands, not on a pass with nothing new
    from asz_adapters.claude_code_local.sources import land_session

    for item in claim.found:
        if isinstance(item.payload, Pruned):
            for place in item.payload.places:
                mark_gone(ctx, session, item.payload.root, place)
        else:
            land_session(ctx, item.payload, session)


@hookimpl
def asz_glossary() -> list[Glossary]:
    from asz_adapters.claude_code_local.glossary import GLOSSARY  # only the glossary command reads it

    return [GLOSSARY]
