"""Sources deleted since they landed: their cursors say ``source_gone``, their landed files stay.

Claude Code prunes old transcripts, a session's files not all at once. Discovery lists only the
files that still exist, so the places a session landed into are compared with what discovery
found: a landed place whose recorded source no longer exists is handed to the collector with
that path, which marks its cursor ``source_gone`` and counts it ``gone``. A place whose source
exists but was not chosen this pass (a copy in another directory is now followed) is left alone.

A session pruned whole is not discovered at all; :func:`pruned_sessions` finds it in the root,
by cursors whose recorded source is one of this adapter's own paths for that session
(``<project>/<session>.jsonl`` or ``<project>/<session>/…``), so another adapter's session in the
same root is never touched. Finding places is shared with every adapter
(:mod:`asz_core.root.places`); which cursors are this adapter's is decided here.

Claude Code deletes transcripts older than its ``cleanupPeriodDays`` (30 by default), so a root
kept for months holds more sessions pruned whole than live ones, and every pass met each of them
again: its ``streams``/``runs`` listed and every cursor read, to count the same ``gone``. Once
nothing of a pruned session is left to mark, what its outcome depends on is noted in the
adapter's settled table (:class:`~asz_core.root.settled.SettledSessions`): the source root, the
directory it is judged by, the ``lstat`` of each of its cursors and of each recorded source (a
gone one's is none), and the places it counts gone. A later pass that finds every one of those
stamps the same counts them without listing or reading anything of the session; any change — a
source back, a cursor rewritten, another source root — is a miss, and the session is read as
before. A place of this adapter is only ever added by landing the session, which discovery must
find first (and landing forgets the entry), so the recorded cursors are all the session's own.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from asz_adapters.claude_code_local.discover import JOURNAL, TRANSCRIPT
from asz_adapters.claude_code_local.ids import is_session_id
from asz_core.root import places as shared
from asz_core.root.layout import cursor_file
from asz_core.root.places import LandedPlace, SessionPlaces

if TYPE_CHECKING:
    from asz_core.context import AdapterContext
    from asz_core.root.settled import SettledSessions
    from asz_core.root.storage import SessionHandle

__all__ = ["LandedPlace", "Pruned", "PrunedSession", "landed_places", "mark_gone", "pruned_sessions"]

_APPEND_KINDS = frozenset({TRANSCRIPT, JOURNAL})


def landed_places(session_dir: Path, skip: Collection[tuple[str, str]] = ()) -> Iterator[LandedPlace]:
    """Every cursor of the session that names one of this adapter's sources for it, but those
    of the places (``(subdir, kind)``) in ``skip``, whose cursors are not read."""
    return shared.landed_places(session_dir, _ours, skip)


def _ours(session: str, place: LandedPlace) -> bool:
    parts = place.source.split("/")
    return len(parts) >= 2 and bool(parts[0]) and (parts[1] == f"{session}.jsonl" or parts[1] == session)


def mark_gone(ctx: AdapterContext, session: SessionHandle, root: Path, place: LandedPlace) -> None:
    """Let the collector mark ``place`` gone, if its recorded source no longer exists."""
    path = root / place.source
    if os.path.lexists(path):
        return
    # the collectors and dialects load only when something is gone, not on every pass
    from asz_adapters.claude_code_local.dialect import ClaudeCodeDialect
    from asz_adapters.claude_code_local.source_facts import SourceFacts
    from asz_core.collect import AppendSource, SnapshotSource, collect_append, collect_snapshot

    stream, run = place.stream, place.run
    # The file is gone, so no dialect reads anything; the collector only needs one to hold.
    dialect = ClaudeCodeDialect(SourceFacts(kind=place.kind, session=session.id))
    if place.kind in _APPEND_KINDS:
        collect_append(ctx, session, AppendSource(path=path, src=place.source, subdir=place.subdir,
                                                  kind=place.kind, dialect=dialect,
                                                  stream=stream, batch=run))
    else:
        collect_snapshot(ctx, session, SnapshotSource(path=path, src=place.source, subdir=place.subdir,
                                                      kind=place.kind, dialect=dialect,
                                                      stream=stream, batch=run))


class Pruned:
    """A session landed before that discovery no longer finds: the places to mark gone.

    This and :class:`PrunedSession` are plain classes
    (docs/architecture.md, "Classes a pass imports")."""

    __slots__ = ("places", "root")

    def __init__(self, root: Path, places: list[LandedPlace]) -> None:
        self.root = root
        self.places = places


class PrunedSession:
    """A session discovery no longer finds with places whose sources are gone: ``marked`` of
    them say so already (counted only), ``pending`` are to be marked; ``directory`` is the
    project directory it is judged by (``include``/``exclude``)."""

    __slots__ = ("directory", "marked", "pending", "session")

    def __init__(self, session: str, directory: str, marked: int, pending: list[LandedPlace]) -> None:
        self.session = session
        self.directory = directory
        self.marked = marked
        self.pending = pending


#: the first ``sources`` item of a settled-table entry that notes a pruned session
_PRUNED_KEY = "pruned"


def pruned_sessions(landed_root: Path, discovered: set[str], source_root: Path,
                    settled: SettledSessions | None = None) -> Iterator[PrunedSession]:
    """Sessions in the storage root that discovery no longer finds and that have places of this
    adapter whose sources are gone. With ``settled`` (not in a dry run), a session noted there
    as it is now is counted from its entry, and one with nothing left to mark is noted."""
    try:  # sorted once those discovered are left out: most are, every pass
        names = sorted(name for name in os.listdir(landed_root) if name not in discovered)
    except FileNotFoundError:
        return

    def is_gone(place: LandedPlace) -> bool:
        return not os.path.lexists(source_root / place.source)

    key_root = str(source_root)
    for name in names:
        if not is_session_id(name):
            continue
        if settled is not None:
            known = _known(settled, name, key_root)
            if known is not None:
                if known.marked:
                    yield known
                continue
        session_dir = landed_root / name
        found = shared.session_places(session_dir, _ours, is_gone)
        places = found.gone
        directory = ""
        if places:
            directory = next((p.source.split("/", 1)[0] for p in places if p.subdir == "streams/main"),
                             places[0].source.split("/", 1)[0])
        if settled is not None and not found.pending:
            _note(settled, session_dir, key_root, directory, found, source_root)
        if places:
            yield PrunedSession(name, directory, found.marked, found.pending)


def _known(settled: SettledSessions, session: str, key_root: str) -> PrunedSession | None:
    """The session as its settled entry has it, when every file the entry stamped is unchanged."""
    key = settled.key(session)
    if not (key is not None and len(key) == 3 and key[0] == _PRUNED_KEY and key[1] == key_root):
        return None
    counters = settled.unchanged(session, key)
    if counters is None:
        return None
    return PrunedSession(session, str(key[2]), int(counters.get("gone", 0)), [])


def _note(settled: SettledSessions, session_dir: Path, key_root: str, directory: str,
          found: SessionPlaces, source_root: Path) -> None:
    """Note in the settled table what counting ``found`` again depends on: each place's cursor
    and recorded source, as they are now."""
    files: list[Path] = []
    for place in found.places:
        files.append(cursor_file(session_dir, place.subdir, place.kind))
        files.append(source_root / place.source)
    settled.note(found.session, [_PRUNED_KEY, key_root, directory], files, {"gone": found.marked})
