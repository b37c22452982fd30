"""Claim: which session and stream each unit lands in, and which sessions the filter admits.

* Ids are checked in their runtime's own form (:mod:`~asz_adapters.kiro.ids`); anything else
  is refused, counted unreadable, with a warning.
* A CLI session whose ``.json`` names a ``parent_session_id`` lands as a stream of that
  session (stream = its own id); an IDE session named by a parent's ``sub_agent_start`` lands
  as a stream of that parent. Children of children are filed flat under the topmost session,
  as the root keeps every child stream of a session flat under ``streams/``.
* A placement once made is kept: a session that already has its own ``streams/main`` in the
  root stays there, and a child already filed under a parent is known from that directory (an
  IDE child always, a CLI child once its ``.json``, which named the parent, is deleted).
* A session is judged by its main unit's working directory (CLI ``cwd``, IDE
  ``workspacePaths[0]``, the database row's key); one with no known directory is admitted
  unless ``include`` lists something.
* A ``.json`` or ``session.json`` that cannot be read yet (half written) leaves its session
  waiting: it is tried again next pass rather than filed by a guess.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from asz_adapters.kiro.cli_sessions import read_cli_meta
from asz_adapters.kiro.ide_sessions import read_workspace, sub_agent_children
from asz_adapters.kiro.ids import cli_session_id, ide_session_id, is_cli_session_id, is_ide_session_id
from asz_adapters.kiro.settled import TRANSCRIPT, settled_sources
from asz_adapters.kiro.units import MAIN, CliBundle, DbConversation, IdeSession, RefusedDirectory, Unit, directory_of
from asz_core.context import AdapterContext
from asz_core.plugin import Found, SessionClaim
from asz_core.root import confined
from asz_core.root.cursors import AppendCursor
from asz_core.root.layout import RefusedId, cursor_file

__all__ = ["claim_sessions"]


def claim_sessions(ctx: AdapterContext, found: Iterable[Found]) -> list[SessionClaim]:
    root = ctx.root.path
    units = _checked_units(ctx, found)

    def landed_main(session: str) -> bool:
        return _is_place(root / session / "streams" / MAIN)

    parents = _cli_parents(ctx, units, root, landed_main)
    parents.update(_ide_parents(ctx, units, root, landed_main))
    by_session: dict[str, list[tuple[Unit, Found]]] = {}
    for unit, item in units:
        session = _place(ctx, unit, parents, landed_main)
        by_session.setdefault(session, []).append((unit, item))

    claims = []
    session_filter = ctx.session_filter
    for session in sorted(by_session):
        members = sorted(by_session[session], key=_landing_order)
        directory = directory_of(session, [u for u, _ in members])
        admitted = (session_filter.admits_directory(directory) if directory is not None
                    else not session_filter.include)
        if not admitted:
            ctx.counters.excluded += 1
            continue
        # settled since the last pass, by a stat of each file: counted, not locked or landed
        claims.append(SessionClaim(session, [item for _, item in members],
                                   settled_by=settled_sources(u for u, _ in members)))
    return claims


def _checked_units(ctx: AdapterContext, found: Iterable[Found]) -> list[tuple[Unit, Found]]:
    """The units whose ids are Kiro's own, metadata read; the rest refused or waiting."""
    units: list[tuple[Unit, Found]] = []
    conversations: set[str] = set()
    for item in found:
        unit = item.payload
        if isinstance(unit, RefusedDirectory):
            ctx.counters.unreadable += 1
            ctx.warn(f"{item.path}: {unit.reason}; not collected")
            continue
        if not isinstance(unit, CliBundle | IdeSession | DbConversation):
            continue  # a store this version does not read
        try:
            if isinstance(unit, IdeSession):
                ide_session_id(unit.id)
            elif isinstance(unit, DbConversation):
                cli_session_id(unit.id, "Kiro CLI conversation id")
                if unit.id in conversations:
                    raise RefusedId(f"conversation {unit.id} is listed twice (another key); only "
                                    f"the first row lands")
                conversations.add(unit.id)
            else:
                cli_session_id(unit.id)
        except RefusedId as exc:
            ctx.counters.unreadable += 1
            ctx.warn(f"{item.path}: refused: {exc}; it is not landed")
            continue
        if isinstance(unit, CliBundle) and not _read_cli(ctx, unit):
            continue
        if isinstance(unit, IdeSession) and not _read_ide(ctx, unit):
            continue
        units.append((unit, item))
    return units


def _read_cli(ctx: AdapterContext, unit: CliBundle) -> bool:
    meta = read_cli_meta(unit.meta)
    if meta.problem is not None:
        ctx.counters.waiting += 1
        ctx.warn(f"{unit.meta} {meta.problem}: session {unit.id} waits until it can be read, "
                 f"since it names the session's parent and directory")
        return False
    parent = meta.parent
    if parent is not None and not (isinstance(parent, str) and is_cli_session_id(parent)):
        ctx.counters.unreadable += 1
        ctx.warn(f"{unit.meta}: refused: parent_session_id {parent!r} is not a UUID; "
                 f"session {unit.id} is not landed")
        return False
    unit.cwd = meta.cwd
    unit.parent = parent if parent != unit.id else None
    return True


def _read_ide(ctx: AdapterContext, unit: IdeSession) -> bool:
    cwd, problem = read_workspace(unit.meta)
    if problem is not None:
        ctx.counters.waiting += 1
        ctx.warn(f"{unit.meta} {problem}: session {unit.id} waits until it can be read, since it "
                 f"names the session's workspace")
        return False
    unit.cwd = cwd
    return True


def _is_place(directory: Path) -> bool:
    """Whether the place ``directory`` of the root is there. A link at it (or on the way) is
    taken as there, never looked through: the unit is placed where the link is, and landing it
    there is refused, naming the link, rather than the unit filed elsewhere."""
    try:
        os.close(confined.open_dir(directory))
    except confined.LinkRefused:
        return True
    except OSError:  # not there, or not a directory
        return False
    return True


def _cli_parents(ctx: AdapterContext, units: list[tuple[Unit, Found]], root: Path,
                 landed_main: Callable[[str], bool]) -> dict[str, str]:
    """Child → parent for CLI sessions: the ``parent_session_id`` of each ``.json``; for a
    session whose ``.json`` is gone (deleted after it landed), the session it landed in as a
    stream, if any: its ``.jsonl`` goes on landing there, never as a session of its own."""
    parents = {u.id: u.parent for u, _ in units if isinstance(u, CliBundle) and u.parent}
    orphans = [u.id for u, _ in units if isinstance(u, CliBundle) and not u.parent
               and not u.meta.exists() and not landed_main(u.id)]
    if orphans:  # rare: read the adapter's list of its sessions only then
        from asz_adapters.kiro.gone import owns
        from asz_adapters.kiro.landed_sessions import LandedSessions

        listed = LandedSessions.load(root, ctx.name, owns).sessions
        for orphan in orphans:
            parent = next((s for s in sorted(listed) if s != orphan and _is_place(root / s / "streams" / orphan)), None)
            if parent is not None:
                parents[orphan] = parent
    return parents


def _ide_parents(ctx: AdapterContext, units: list[tuple[Unit, Found]], root: Path,
                 landed_main: Callable[[str], bool]) -> dict[str, str]:
    """Child → parent for IDE sessions: from where children landed, and from the
    ``sub_agent_start`` lines of each parent's part that has not landed yet."""
    sessions = [u for u, _ in units if isinstance(u, IdeSession)]
    parents: dict[str, str] = {}
    for session in sessions:
        try:
            streams = confined.listdir(root / session.id / "streams")
        except (FileNotFoundError, NotADirectoryError, confined.LinkRefused):
            continue  # a link: nothing is listed through it, and the session's landing names it
        for name in streams:
            if is_ide_session_id(name) and name != session.id:
                parents.setdefault(name, session.id)
    session_filter = ctx.session_filter
    for session in sessions:
        if session.cwd is not None and not session_filter.admits_directory(session.cwd):
            continue  # its lines are never read, so they are not scanned either
        if landed_main(session.id):
            landed_at: Path | None = cursor_file(root / session.id, f"streams/{MAIN}", TRANSCRIPT)
        elif session.id in parents:
            landed_at = cursor_file(root / parents[session.id], f"streams/{session.id}", TRANSCRIPT)
        else:
            landed_at = None
        cursor = AppendCursor.load(landed_at) if landed_at is not None else None
        for child in sub_agent_children(session.messages, cursor.offset if cursor else 0):
            if child != session.id:
                parents.setdefault(child, session.id)
    return parents


def _place(ctx: AdapterContext, unit: Unit, parents: dict[str, str],
           landed_main: Callable[[str], bool]) -> str:
    """The session ``unit`` lands in; sets ``unit.stream``."""
    unit.stream = MAIN
    if isinstance(unit, DbConversation) or landed_main(unit.id) or unit.id not in parents:
        return unit.id
    seen, current = {unit.id}, unit.id
    while current in parents and not (current != unit.id and landed_main(current)):
        current = parents[current]
        if current in seen:
            ctx.warn(f"session {unit.id}: its parents name each other in a cycle; it lands as a "
                     f"session of its own")
            return unit.id
        seen.add(current)
    unit.stream = unit.id
    return current


def _landing_order(member: tuple[Unit, Found]) -> tuple[int, int, str]:
    unit = member[0]
    return (0 if unit.stream == MAIN else 1, 1 if isinstance(unit, DbConversation) else 0, unit.id)
