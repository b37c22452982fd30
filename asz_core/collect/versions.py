"""Which place a source lands in now: its first, or the version a person accepted last.

A conflict stops a source, and only a person moves it on (upstream: "a conflict stays until a
person looks at it"). Two ways are open, and neither changes a landed byte:

* put the landed bytes back: the cursor clears on the next pass, and the source goes on where
  it stopped;
* accept the rewrite (``asz-pipeline conflicts --accept``): the cursor says ``accepted`` and
  names the next version, whose place (:mod:`asz_core.root.versions`) starts with no cursor.
  The next pass lands the source there from its first byte, ``ord`` 1 at ``off`` 0, as it would
  land a source never seen, so the new version is a stream of its own that every reader checks
  like any other, and the old stream keeps every record and the cursor it stopped at.

Why a new place and not a new cursor in the old one: a stream's records must run ``ord`` 1, 2,
3 across its files, and the rewritten bytes start again at line 1; continuing the old count
would make records claim lines and offsets they do not have in their source. Why not a new
session: the records are the same conversation's, and assembly folds a version into its first
stream (:func:`~asz_core.root.versions.base_stream`), where a record already landed under the
same id is a duplicate it skips, so only what the rewrite added shows.

Accepting is one atomic, durable write of the stopped cursor, under the session's lock: killed
before it, the source is still a conflict and the accept can be run again; after it, the next
pass lands the version, with the collectors' usual crash safety (a version's cursor that lags is
brought forward from its landed files).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Generic, TypeVar

from asz_core.collect.saving import load_cursor
from asz_core.context import AdapterContext
from asz_core.root.cursors import ACCEPTED, Cursor
from asz_core.root.layout import cursor_name
from asz_core.root.storage import SessionHandle
from asz_core.root.versions import version_of, version_place

__all__ = ["MAX_VERSIONS", "Place", "current_place", "is_followable", "stream_of"]

#: the most versions followed from one place: a longer chain is a root someone wrote by hand
MAX_VERSIONS = 1000

C = TypeVar("C", bound=Cursor)


class Place(Generic[C]):
    """Where a source lands now: the place, its cursor's path, and the cursor (``None`` when
    there is none yet, as in a version nothing has landed in); ``broken`` when an accepted
    cursor on the way names no later version (a cursor edited by hand). A plain class, not a
    dataclass: every landing imports this module, and a dataclass compiles its generated methods
    at each import."""

    __slots__ = ("broken", "cursor", "path", "subdir")

    def __init__(self, subdir: str, path: Path, cursor: C | None, broken: str = "") -> None:
        self.subdir = subdir
        self.path = path
        self.cursor = cursor
        self.broken = broken


def is_followable(cursor: Cursor, subdir: str) -> bool:
    """Whether an ``accepted`` cursor in ``subdir`` names a version after the one it is in."""
    return cursor.state == ACCEPTED and cursor.next_version > version_of(subdir)


def current_place(ctx: AdapterContext, session: SessionHandle, subdir: str, kind: str,
                  cls: type[C]) -> Place[C]:
    """The place a source first landed in ``subdir`` lands in now: ``subdir`` itself unless its
    cursor was accepted, else the accepted version's, followed to the last."""
    path = session.path(subdir, cursor_name(kind))
    if session.fresh and os.fspath(path) not in session.states_saved:
        return Place(subdir, path, None)  # a session its landing made has no cursor it did not write
    cursor = load_cursor(ctx, cls, path)
    for _ in range(MAX_VERSIONS):
        if cursor is None or cursor.state != ACCEPTED:
            return Place(subdir, path, cursor)
        if not is_followable(cursor, subdir):
            return Place(subdir, path, cursor,
                         broken=f"{path} says accepted but names no later version (next_version "
                                f"{cursor.next_version})")
        subdir = version_place(subdir, cursor.next_version)
        path = session.path(subdir, cursor_name(kind))
        cursor = load_cursor(ctx, cls, path)
    return Place(subdir, path, cursor, broken=f"{path}: more than {MAX_VERSIONS} accepted versions")


def stream_of(subdir: str, stream: str | None) -> str | None:
    """The header's ``stream`` for a file landed in ``subdir``: its directory's name for a
    stream's place (a version's own, which readers check against the path); ``None`` stays."""
    if stream is None or not subdir.startswith("streams/"):
        return stream
    return subdir[len("streams/"):]
