"""Sources deleted since they landed: their cursors say ``source_gone``, their landed files stay.

Claude Code prunes old transcripts, a session's files not all at once. Discovery lists only the
files that still exist, so the places a session landed into are compared with what discovery
found: a landed place whose recorded source no longer exists is handed to the collector with
that path, which marks its cursor ``source_gone`` and counts it ``gone``. A place whose source
exists but was not chosen this pass (a copy in another directory is now followed) is left alone.

A session pruned whole is not discovered at all; :func:`pruned_sessions` finds it in the root,
by cursors whose recorded source is one of this adapter's own paths for that session
(``<project>/<session>.jsonl`` or ``<project>/<session>/…``), so another adapter's session in the
same root is never touched. Once every such cursor says ``source_gone`` the session costs only
the reading of its cursors. Finding places is shared with every adapter
(:mod:`asz_core.root.places`); which cursors are this adapter's is decided here.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from asz_adapters.claude_code_local.discover import JOURNAL, TRANSCRIPT
from asz_adapters.claude_code_local.ids import is_session_id
from asz_core.root import places as shared
from asz_core.root.places import LandedPlace, SessionPlaces

if TYPE_CHECKING:
    from asz_core.context import AdapterContext
    from asz_core.root.storage import SessionHandle

__all__ = ["LandedPlace", "Pruned", "landed_places", "mark_gone", "pruned_sessions"]

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
    from asz_adapters.claude_code_local.dialect import TranscriptDialect
    from asz_adapters.claude_code_local.documents import ScriptDialect
    from asz_core.collect import AppendSource, SnapshotSource, collect_append, collect_snapshot

    stream, run = place.stream, place.run
    if place.kind in _APPEND_KINDS:
        collect_append(ctx, session, AppendSource(path=path, src=place.source, subdir=place.subdir,
                                                  kind=place.kind, dialect=TranscriptDialect(),
                                                  stream=stream, batch=run))
    else:
        # The file is gone, so no dialect reads anything; the collector only needs one to hold.
        collect_snapshot(ctx, session, SnapshotSource(path=path, src=place.source, subdir=place.subdir,
                                                      kind=place.kind, dialect=ScriptDialect(run or ""),
                                                      stream=stream, batch=run))


@dataclass
class Pruned:
    """A session landed before that discovery no longer finds: the places to mark gone."""

    root: Path
    places: list[LandedPlace]


def pruned_sessions(landed_root: Path, discovered: set[str],
                    source_root: Path) -> Iterator[tuple[SessionPlaces, str]]:
    """Sessions in the storage root that discovery no longer finds and that have places of this
    adapter whose sources are gone, with the project directory they were judged by."""
    try:
        names = sorted(os.listdir(landed_root))
    except FileNotFoundError:
        return

    def is_gone(place: LandedPlace) -> bool:
        return not os.path.lexists(source_root / place.source)

    candidates = (name for name in names if name not in discovered and is_session_id(name))
    for found in shared.pruned_sessions(landed_root, candidates, _ours, is_gone):
        places = found.gone
        if places:
            directory = next((p.source.split("/", 1)[0] for p in places if p.subdir == "streams/main"),
                             places[0].source.split("/", 1)[0])
            yield found, directory
