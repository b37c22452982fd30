"""Places whose source was deleted since it landed: finding them in the root, for any adapter.

A source deleted whole is not discovered any more, so nothing hands it to a collector; its
cursor would never say ``source_gone``. An adapter finds such places in the root instead: each
cursor in a session's ``streams/*`` and ``runs/*`` names the source it follows (``source``,
relative to the adapter's source root). These functions read only that and the cursor's
``state``; the adapter says which cursors are its own (``owns``: the root is shared, and another
adapter's session may carry the same kind of id) and which of its sources are gone
(``is_gone``: a file no longer there, a database row no longer listed). Marking a place gone is
then the collectors' work (:func:`asz_core.collect.saving.mark_gone`), so the cursor says
``source_gone`` once, it is counted ``gone`` every pass, and what landed stays as it is.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from asz_core.root import confined
from asz_core.root.cursors import ACCEPTED, SOURCE_GONE, parse_pairs
from asz_core.root.durable import read_small
from asz_core.root.layout import CURSOR_SUFFIX, PLACE_GROUPS, PREFIX_KIND

__all__ = ["IsGone", "LandedPlace", "Owns", "SessionPlaces", "landed_places", "pruned_sessions", "session_places"]


class LandedPlace(NamedTuple):
    """A stream or run directory of a session that has a cursor, and the source it recorded.

    This and :class:`SessionPlaces` are named tuples, not frozen dataclasses: the adapters'
    discovery imports them on every pass, and a dataclass compiles its methods at each import.
    """

    subdir: str    #: ``streams/<name>`` or ``runs/<name>``
    kind: str      #: the landed kind the cursor follows (``transcript``, ``agent_meta``, …)
    source: str    #: the cursor's ``source``: relative to the source root, as it was recorded
    state: str     #: the cursor's ``state``

    @property
    def stream(self) -> str | None:
        return self.subdir[len("streams/"):] if self.subdir.startswith("streams/") else None

    @property
    def run(self) -> str | None:
        return self.subdir[len("runs/"):] if self.subdir.startswith("runs/") else None


#: ``owns(session, place)``: whether the cursor of ``place`` in ``session`` is this adapter's
Owns = Callable[[str, LandedPlace], bool]
#: ``is_gone(place)``: whether the source ``place`` recorded no longer exists (this pass)
IsGone = Callable[[LandedPlace], bool]


def landed_places(session_dir: Path, owns: Owns,
                  skip: Collection[tuple[str, str]] = ()) -> Iterator[LandedPlace]:
    """Every cursor of the session that ``owns`` accepts, but those of the places in ``skip``
    (``(subdir, kind)``), which are not read."""
    session = session_dir.name
    top = os.fspath(session_dir)  # joined as strings: only listed, and read for a few places
    sep = os.sep
    for group in PLACE_GROUPS:
        group_dir = f"{top}{sep}{group}"
        if confined.known(group_dir) is False:  # not made in a new session: nothing to raise
            continue
        try:
            names = sorted(confined.listdir(group_dir))
        except (FileNotFoundError, NotADirectoryError, confined.LinkRefused):
            continue
        for name in names:
            subdir = f"{group}/{name}"
            directory = f"{group_dir}{sep}{name}"
            try:
                files = sorted(confined.listdir(directory))
            except (FileNotFoundError, NotADirectoryError, confined.LinkRefused):
                continue
            for file in files:
                if not file.endswith(CURSOR_SUFFIX):
                    continue
                prefix = file[: -len(CURSOR_SUFFIX)]
                kind = PREFIX_KIND.get(prefix, prefix)
                if (subdir, kind) in skip:
                    continue
                try:
                    data = read_small(f"{directory}{sep}{file}")
                    pairs = dict(parse_pairs(data.decode("utf-8"))) if data is not None else {}
                except (OSError, UnicodeDecodeError):
                    continue  # not readable: the collector rebuilds it; nothing here depends on it
                place = LandedPlace(subdir, kind, pairs.get("source", ""),
                                    pairs.get("state", ""))
                if place.state == ACCEPTED:
                    continue  # its source goes on in a later version's place, which is listed
                if place.source and owns(session, place):
                    yield place


class SessionPlaces(NamedTuple):
    """One session's places of this adapter, and which of them are gone this pass."""

    session: str
    places: list[LandedPlace]
    gone: list[LandedPlace]

    @property
    def pending(self) -> list[LandedPlace]:
        """Gone places whose cursors do not say so yet: a collector is to mark them."""
        return [place for place in self.gone if place.state != SOURCE_GONE]

    @property
    def marked(self) -> int:
        """Gone places whose cursors say ``source_gone`` already: only counted."""
        return len(self.gone) - len(self.pending)

    @property
    def all_marked(self) -> bool:
        """Every place is gone and marked (or there is none): nothing more to do in it."""
        return len(self.gone) == len(self.places) and not self.pending


def session_places(session_dir: Path, owns: Owns, is_gone: IsGone,
                   skip: Collection[tuple[str, str]] = ()) -> SessionPlaces:
    """The session's own places (see :func:`landed_places`), and those whose sources are gone."""
    places = list(landed_places(session_dir, owns, skip))
    return SessionPlaces(session_dir.name, places, [place for place in places if is_gone(place)])


def pruned_sessions(root: Path, candidates: Iterable[str], owns: Owns,
                    is_gone: IsGone) -> Iterator[SessionPlaces]:
    """The places of each of ``candidates`` (sessions in ``root`` that discovery no longer
    finds), whether or not any is gone."""
    for name in candidates:
        yield session_places(root / name, owns, is_gone)
