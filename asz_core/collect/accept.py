"""A person's way out of a conflict: accept the rewritten source as a new version.

The rules, in the order the code applies them (see :mod:`asz_core.collect.versions` for why a
version is a place of its own):

1. Only a cursor in ``conflict`` (or one that says ``accepted`` but names no later version, a
   cursor edited by hand) is accepted; any other is refused with its state, and nothing is
   written. Every cursor given is checked before any is accepted.
2. The accept holds the session's lock, so no collector reads the cursor while it changes, and
   reads the cursor again under it.
3. The version is the one after the cursor's place, past any place that holds anything of
   another source. A place that holds only this source's version is taken again: the accept
   was undone meanwhile (upstream's collector, which knows no ``accepted``, marks the cursor
   ``conflict`` again), and the source goes on in the version it already has, which keeps its
   own checks, rather than landing a second copy of it.
4. The cursor is rewritten with every key it had (an adapter's own keys too), and ``state
   accepted``, ``next_version`` and ``accepted_at``, atomically and durably (the file and its
   directory fsynced), owner-only. That one write is the whole accept: killed before it, the
   source is still a conflict and the accept can be run again; after it, the next pass lands the
   rewritten source from its first byte in the version's place. No landed file, and no other
   cursor, is touched.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from asz_core.root import confined
from asz_core.root.cursors import ACCEPTED, CONFLICT, format_pairs, parse_pairs
from asz_core.root.durable import open_landed, read_small, write_replace
from asz_core.root.layout import CURSOR_SUFFIX, PLACE_GROUPS, check_id, parse_file_name
from asz_core.root.locks import FileLock
from asz_core.root.versions import version_of, version_place
from asz_core.sessiondata.errors import SessionDataError

__all__ = ["Accepted", "NotAcceptable", "accept", "check_acceptable", "is_stuck"]


class NotAcceptable(ValueError):
    """A cursor that is not a conflict (or is not a cursor of the root): nothing to accept."""


@dataclass(frozen=True)
class Accepted:
    """A conflict accepted: its cursor (relative to the root), and the place the next version
    lands in (relative to the session)."""

    cursor: str
    session: str
    place: str
    version: int


def is_stuck(pairs: dict[str, str], subdir: str) -> bool:
    """Whether a cursor (its ``pairs``, in the place ``subdir``) stops its source: a conflict,
    or an accepted one that names no later version."""
    state = pairs.get("state")
    if state == CONFLICT:
        return True
    if state != ACCEPTED:
        return False
    try:
        return int(pairs.get("next_version", "0")) <= version_of(subdir)
    except ValueError:
        return True


def _where(root: Path, cursor: str) -> tuple[str, str, Path]:
    """``(session, place, path)`` of a cursor given relative to the root
    (``<session>/streams/main/transcript.cursor``); ``NotAcceptable`` for any other path."""
    parts = cursor.split("/")
    if (len(parts) != 4 or parts[1] not in PLACE_GROUPS or not parts[3].endswith(CURSOR_SUFFIX)
            or parts[3].startswith(".")):
        raise NotAcceptable(f"{cursor}: not a cursor of the root (<session>/streams/<stream>/<kind>.cursor "
                            f"or <session>/runs/<run>/<kind>.cursor)")
    try:
        check_id(parts[0], "session id")
        check_id(parts[2], "place")
    except ValueError as exc:
        raise NotAcceptable(f"{cursor}: {exc}") from None
    return parts[0], f"{parts[1]}/{parts[2]}", root.joinpath(*parts)


def _read(path: Path, cursor: str) -> dict[str, str]:
    try:
        data = read_small(path)
        if data is None:
            raise NotAcceptable(f"{cursor}: no such cursor in the root")
        pairs = dict(parse_pairs(data.decode("utf-8")))
    except (OSError, UnicodeDecodeError) as exc:
        raise NotAcceptable(f"{cursor}: it does not read ({exc}); the next pass rebuilds it") from None
    if "state" not in pairs:
        raise NotAcceptable(f"{cursor}: no state line, so not a cursor")
    return pairs


def check_acceptable(root: Path, cursor: str) -> None:
    """``NotAcceptable`` unless ``cursor`` stops its source (rule 1), said with its state."""
    _, place, path = _where(root, cursor)
    pairs = _read(path, cursor)
    if not is_stuck(pairs, place):
        state = pairs.get("state", "")
        raise NotAcceptable(f"{cursor} is not in conflict (state {state}): there is nothing to accept"
                            + ("; its source goes on in a later version already" if state == ACCEPTED else ""))


def _next_version(session_dir: Path, place: str, cursor_file: str, source: str) -> int:
    """The version after ``place``'s whose place is free, or holds only ``source`` (rule 3)."""
    version = version_of(place) + 1
    while not _free_for(session_dir / version_place(place, version), cursor_file, source):
        version += 1
    return version


def _free_for(directory: Path, cursor_file: str, source: str) -> bool:
    """Whether a version of ``source`` may land in ``directory``: it does not exist, or it is a
    directory whose cursor (``cursor_file``) and landed files name ``source`` alone."""
    if not os.path.lexists(directory):
        return True
    try:
        names = confined.listdir(directory)
        cursor = read_small(directory / cursor_file) if cursor_file in names else None
    except (OSError, confined.LinkRefused):
        return False
    if cursor is not None and dict(parse_pairs(cursor.decode("utf-8", "replace"))).get("source") != source:
        return False
    for name in names:
        if parse_file_name(name) is None:
            continue
        try:
            with open_landed(directory / name) as landed:
                if landed.header.get("src") != source:
                    return False
        except (OSError, SessionDataError):
            return False
    return True


def accept(root: Path, cursor: str, accepted_at: str) -> Accepted:
    """Accept the conflict at ``cursor`` (relative to ``root``), at the instant ``accepted_at``
    (rules 2 to 4)."""
    session, place, path = _where(root, cursor)
    session_dir = root / session
    confined.enter(root)
    with FileLock(session_dir / ".lock", wait=True):
        check_acceptable(root, cursor)
        pairs = _read(path, cursor)
        version = _next_version(session_dir, place, path.name, pairs.get("source", ""))
        pairs.update({"state": ACCEPTED, "next_version": str(version), "accepted_at": accepted_at,
                      "updated_at": accepted_at})
        write_replace(path, format_pairs(pairs.items()), sync_dir=True)
    return Accepted(cursor, session, version_place(place, version), version)

