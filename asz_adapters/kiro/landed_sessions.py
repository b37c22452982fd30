"""The sessions this adapter has claimed to land, so a pass finds those deleted since without
scanning the root.

The storage root is shared: beside Kiro's sessions it may hold thousands of Claude Code sessions,
whose UUID names are the same form as a Kiro CLI session's. Telling Kiro's from them would take
reading every session's cursors, every pass. So the adapter keeps its own derived list,
``<root>/.landed-<adapter>.state``: every session it has claimed to land, with the working
directory it was judged by (the session filter applies to a deleted session as it did when it
landed). Why a list of its own, not the settled table
(:class:`~asz_core.root.settled.SettledSessions`): that table holds only sessions settled to
their end, and never one holding a database conversation, so a session with a conflict or a
database row would be missing from it.

The list is written, durably, before any session new to it lands (a superset is harmless: a
listed session with nothing of Kiro's in it has no place to mark), so a crash cannot leave a
landed session out of it. A list that is missing, unreadable or of another format is rebuilt by
one full scan of the root (sessions named in Kiro's id forms whose cursors name one of Kiro's
sources); a rebuilt entry's directory is unknown, and judged as claim judges a session without
one (admitted unless ``include`` lists something).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import orjson

from asz_adapters.kiro.ids import is_cli_session_id, is_ide_session_id
from asz_core.root.durable import read_table, write_replace
from asz_core.root.places import Owns, landed_places

__all__ = ["LandedSessions"]

_FORMAT = 1


class LandedSessions:
    """Session id → the directory it was judged by (``None``: not known)."""

    def __init__(self, path: Path, sessions: dict[str, str | None], *, changed: bool = False) -> None:
        self.path = path
        self.sessions = sessions
        self.changed = changed

    @classmethod
    def load(cls, root: Path, adapter: str, owns: Owns) -> LandedSessions:
        """The list in ``root``; rebuilt from the root's cursors when it is missing or unreadable."""
        path = root / f".landed-{adapter}.state"
        data = read_table(path, _FORMAT)
        if data is None:
            return cls(path, _scan(root, owns), changed=True)
        sessions = {str(k): (v if isinstance(v, str) else None) for k, v in data["sessions"].items()}
        return cls(path, sessions)

    def note(self, session: str, directory: str | None) -> None:
        """``session`` is claimed to land; ``directory`` is what it is judged by now."""
        if session not in self.sessions or (directory is not None and self.sessions[session] != directory):
            self.sessions[session] = directory
            self.changed = True

    def save(self) -> str | None:
        """Write the list if it changed, durably (sessions land after it); the problem, if it
        could not be written, after removing it so the next pass rebuilds it."""
        if not self.changed:
            return None
        try:
            write_replace(self.path, orjson.dumps({"format": _FORMAT, "sessions": self.sessions}))
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(self.path)
            return f"{self.path} cannot be written ({exc.strerror or exc}); it is rebuilt next pass"
        self.changed = False
        return None


def _scan(root: Path, owns: Owns) -> dict[str, str | None]:
    """Every session in ``root`` named in Kiro's id forms that holds a place of Kiro's."""
    try:
        names = sorted(os.listdir(root))
    except (FileNotFoundError, NotADirectoryError):
        return {}
    return {name: None for name in names
            if (is_cli_session_id(name) or is_ide_session_id(name))
            and next(landed_places(root / name, owns), None) is not None}
