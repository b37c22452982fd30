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
from dataclasses import dataclass
from pathlib import Path

from asz_core.root.cursors import parse_pairs
from asz_core.root.layout import PREFIX_KIND

__all__ = ["IsGone", "LandedPlace", "Owns", "gone_places", "landed_places", "pruned_sessions"]


@dataclass(frozen=True)
class LandedPlace:
    """A stream or run directory of a session that has a cursor, and the source it recorded."""

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
    for group in ("streams", "runs"):
        try:
            names = sorted(os.listdir(session_dir / group))
        except (FileNotFoundError, NotADirectoryError):
            continue
        for name in names:
            subdir = f"{group}/{name}"
            directory = session_dir / group / name
            try:
                files = sorted(os.listdir(directory))
            except (FileNotFoundError, NotADirectoryError):
                continue
            for file in files:
                if not file.endswith(".cursor"):
                    continue
                prefix = file[: -len(".cursor")]
                kind = PREFIX_KIND.get(prefix, prefix)
                if (subdir, kind) in skip:
                    continue
                try:
                    pairs = dict(parse_pairs((directory / file).read_text("utf-8")))
                except (OSError, UnicodeDecodeError):
                    continue  # not readable: verify reports it; nothing here depends on it
                place = LandedPlace(subdir, kind, pairs.get("source", ""),
                                    pairs.get("state", ""))
                if place.source and owns(session, place):
                    yield place


def gone_places(session_dir: Path, owns: Owns, is_gone: IsGone,
                skip: Collection[tuple[str, str]] = ()) -> list[LandedPlace]:
    """The session's own places (see :func:`landed_places`) whose sources are gone."""
    return [place for place in landed_places(session_dir, owns, skip) if is_gone(place)]


def pruned_sessions(root: Path, candidates: Iterable[str], owns: Owns,
                    is_gone: IsGone) -> Iterator[tuple[str, list[LandedPlace]]]:
    """Of ``candidates`` (sessions in ``root`` that discovery no longer finds), those holding
    places of this adapter whose sources are gone, with those places."""
    for name in candidates:
        places = gone_places(root / name, owns, is_gone)
        if places:
            yield name, places
