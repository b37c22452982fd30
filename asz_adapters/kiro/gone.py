"""Kiro sources deleted since they landed: their cursors say ``source_gone``, what landed stays.

Which places are Kiro's (:func:`owns`): a cursor whose ``source`` (relative to Kiro's home) is a
CLI session's ``sessions/cli/<uuid>.jsonl`` or ``.json``, an IDE session's
``sessions/<bucket>/sess_<uuid>/messages.jsonl`` or ``session.json``, or a database conversation
(``…#conversations_v2/<uuid>``), and whose id is the one that place holds (the session's own for
``streams/main``, the stream's for a child). Nothing else in a shared root is touched.

When a source is gone (:class:`GoneCheck`): a file when it no longer exists (and Kiro's home
does: a home not there, a typo or a disk not mounted, decides nothing); a database conversation
only when its database was listed this pass and the row is not in it. A database that is busy,
unreadable, absent or not configured decides nothing: its conversations' cursors stay as they
are (one already ``source_gone`` is still counted gone).

Two ways a place is found:

* a session discovered and landed this pass: after its units land, every place of Kiro's in it
  that no unit covered (a child whose files were deleted while its parent remains, a parent
  deleted while a child remains) is checked;
* a session not discovered at all (deleted whole): found from the adapter's list of sessions it
  has landed (:mod:`~asz_adapters.kiro.landed_sessions`), judged by the directory recorded there,
  and claimed when a place of it is newly gone. Once every place of Kiro's in it says
  ``source_gone``, it is noted in the settled table with no sources, so a later pass counts it
  from a stat of its cursors without reading them.

Marking is the collectors' work (:func:`asz_core.collect.saving.mark_gone`), so a cursor is
written once and the place is counted ``gone`` every pass.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from asz_adapters.kiro.ids import is_cli_session_id, is_ide_session_id
from asz_adapters.kiro.landed_sessions import LandedSessions
from asz_adapters.kiro.settled import META, TRANSCRIPT
from asz_adapters.kiro.stream_owner import DB_MARK
from asz_adapters.kiro.units import MAIN, DbConversation, Unit, directory_of
from asz_core.plugin import Found, SessionClaim
from asz_core.root.cursors import SOURCE_GONE
from asz_core.root.places import LandedPlace, pruned_sessions, session_places

if TYPE_CHECKING:
    from asz_core.context import AdapterContext
    from asz_core.root.storage import SessionHandle

__all__ = ["GONE_KIND", "DATABASE_KIND", "GoneCheck", "GoneWalk", "ListedDatabase", "claim_gone",
           "mark_places_gone", "owns"]

#: the ``Found`` kind of a place walk added to a claim (never shown by ``sources``)
GONE_KIND = "kiro gone places"
#: the ``Found`` kind discovery adds for each database it listed
DATABASE_KIND = "kiro-cli database"
_CLI_FILES = {".jsonl": TRANSCRIPT, ".json": META}
_IDE_FILES = {"messages.jsonl": TRANSCRIPT, "session.json": META}


class ListedDatabase:
    """A kiro-cli database listed in full this pass (its rows are the conversations found).

    This, :class:`GoneCheck` and :class:`GoneWalk` are plain classes
    (docs/architecture.md, "Classes a pass imports")."""

    __slots__ = ("path",)

    def __init__(self, path: Path) -> None:
        self.path = path


def owns(session: str, place: LandedPlace) -> bool:
    """Whether ``place`` of ``session`` holds one of Kiro's sources (see the module docstring)."""
    holder = session if place.subdir == f"streams/{MAIN}" else place.stream
    source = place.source
    if DB_MARK in source:
        return (place.subdir == f"streams/{MAIN}" and place.kind == TRANSCRIPT
                and source.partition(DB_MARK)[2] == session and is_cli_session_id(session))
    parts = source.split("/")
    if len(parts) == 3 and parts[:2] == ["sessions", "cli"]:
        stem, dot, suffix = parts[2].rpartition(".")
        return (_CLI_FILES.get(dot + suffix) == place.kind and stem == holder
                and is_cli_session_id(stem))
    if len(parts) == 4 and parts[0] == "sessions" and parts[1] not in ("", "cli", ".", ".."):
        return _IDE_FILES.get(parts[3]) == place.kind and parts[2] == holder and is_ide_session_id(holder)
    return False


def _absolute(path: str | Path) -> str:
    return os.path.normpath(os.path.abspath(path))


class GoneCheck:
    """What this pass knows about which of Kiro's sources exist."""

    __slots__ = ("home", "home_present", "listed_conversations", "listed_databases")

    def __init__(self, home: Path, listed_databases: frozenset[str], listed_conversations: frozenset[str],
                 home_present: bool = True) -> None:
        self.home = home
        self.listed_databases = listed_databases  #: databases listed in full (absolute, normalized)
        self.listed_conversations = listed_conversations
        self.home_present = home_present          #: Kiro's home is there (not a typo or a disk not mounted)

    @classmethod
    def of(cls, home: Path, found: Iterable[Found]) -> GoneCheck:
        databases, conversations = set(), set()
        for item in found:
            if isinstance(item.payload, ListedDatabase):
                databases.add(_absolute(item.payload.path))
            elif isinstance(item.payload, DbConversation):
                conversations.add(item.payload.id)
        return cls(home, frozenset(databases), frozenset(conversations), home.is_dir())

    def decided(self, place: LandedPlace) -> bool:
        """Whether this pass can tell if ``place``'s source exists."""
        if DB_MARK not in place.source:
            return self.home_present or place.state == SOURCE_GONE
        return place.state == SOURCE_GONE or self._database_listed(place.source)

    def is_gone(self, place: LandedPlace) -> bool:
        if DB_MARK not in place.source:
            if not self.home_present:
                return place.state == SOURCE_GONE  # a home not there decides nothing either
            return not os.path.lexists(self.home / place.source)
        if not self._database_listed(place.source):
            return place.state == SOURCE_GONE  # nothing is decided about a database not listed
        return place.source.partition(DB_MARK)[2] not in self.listed_conversations

    def _database_listed(self, source: str) -> bool:
        return _absolute(self.home / source.partition(DB_MARK)[0]) in self.listed_databases


class GoneWalk:
    """A claim's places to check once its units have landed (``skip``: the units' own)."""

    __slots__ = ("check", "skip")

    def __init__(self, check: GoneCheck, skip: frozenset[tuple[str, str]]) -> None:
        self.check = check
        self.skip = skip


def _walk_item(session: str, check: GoneCheck, units: Iterable[Unit]) -> Found:
    skip = frozenset((f"streams/{u.stream}", kind) for u in units for kind in (TRANSCRIPT, META))
    return Found(kind=GONE_KIND, key=session, session=session, sources=0, payload=GoneWalk(check, skip))


def claim_gone(ctx: AdapterContext, home: Path, found: Sequence[Found],
               claims: list[SessionClaim]) -> list[SessionClaim]:
    """Give each claim its place walk, note the claimed sessions in the landed list, and return
    the claims of sessions deleted whole that have a place newly gone (those already marked are
    counted here)."""
    root = ctx.root.path
    check = GoneCheck.of(home, found)
    listed = LandedSessions.load(root, ctx.name, owns)
    for claim in claims:
        units = [item.payload for item in claim.found]
        listed.note(claim.session, directory_of(claim.session, units))
        claim.found.append(_walk_item(claim.session, check, units))
    if not ctx.dry_run:
        problem = listed.save()
        if problem is not None:
            ctx.warn(problem)
    discovered = {item.session for item in found if item.session} | {claim.session for claim in claims}
    pruned: list[SessionClaim] = []
    for places in pruned_sessions(root, _candidates(ctx, listed, discovered), owns, check.is_gone):
        session = places.session
        ctx.counters.gone += places.marked
        if places.pending:
            pruned.append(SessionClaim(session, [Found(kind=GONE_KIND, key=session, session=session, sources=0,
                                                       payload=GoneWalk(check, frozenset()))]))
        elif places.all_marked and not ctx.dry_run:
            # every place of Kiro's in it is marked (or it has none): later passes count it
            # from a stat of its cursors
            ctx.settled.record(session, root / session, [], {"gone": len(places.gone)})
    return pruned


def _candidates(ctx: AdapterContext, listed: LandedSessions, discovered: set[str]) -> Iterator[str]:
    """Listed sessions not discovered this pass that the filter admits, but those whose places
    were all marked before and whose cursors did not change since (counted here, not read)."""
    session_filter = ctx.session_filter
    for session in sorted(listed.sessions):
        directory = listed.sessions[session]
        if session in discovered:
            continue
        if not (session_filter.admits_directory(directory) if directory is not None
                else not session_filter.include):
            continue
        counted = None if ctx.dry_run else ctx.settled.unchanged(session, [])
        if counted is not None:
            ctx.counters.gone += counted.get("gone", 0)
            continue
        yield session


def mark_places_gone(ctx: AdapterContext, session: SessionHandle, walk: GoneWalk) -> bool:
    """Hand every place of ``walk`` whose source is gone to its collector; ``False`` when a
    place could not be judged this pass (its database was not listed)."""
    places = session_places(session.dir, owns, walk.check.is_gone, walk.skip)
    for place in places.gone:
        _mark(ctx, session, walk.check.home, place)
    return all(walk.check.decided(place) for place in places.places)


def _mark(ctx: AdapterContext, session: SessionHandle, home: Path, place: LandedPlace) -> None:
    # the collectors and dialects load only when something is gone, not on every pass
    from asz_adapters.kiro.db_collector import ConversationCursor
    from asz_adapters.kiro.dialect_cli import CliEventDialect
    from asz_adapters.kiro.dialect_ide import IdeMessageDialect
    from asz_adapters.kiro.dialect_meta import CliMetaDialect, IdeMetaDialect
    from asz_core.collect import AppendSource, SnapshotSource, collect_append, collect_snapshot
    from asz_core.collect.append import cursor_path
    from asz_core.collect.saving import mark_gone

    if DB_MARK in place.source:
        # the row is not in its database: the conversation's own cursor (its keys kept) says so
        path = cursor_path(session, place.subdir, place.kind)
        mark_gone(ctx, session, ConversationCursor.load(path), path)
        return
    path = home / place.source
    child = None if place.stream == MAIN else place.stream
    cli = place.source.startswith("sessions/cli/")
    if place.kind == TRANSCRIPT:
        collect_append(ctx, session, AppendSource(
            path=path, src=place.source, subdir=place.subdir, kind=TRANSCRIPT,
            dialect=CliEventDialect(path) if cli else IdeMessageDialect(path), stream=place.stream))
    else:
        collect_snapshot(ctx, session, SnapshotSource(
            path=path, src=place.source, subdir=place.subdir, kind=META,
            dialect=CliMetaDialect(child) if cli else IdeMetaDialect(child), stream=place.stream))
