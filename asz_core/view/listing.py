"""The sessions of a storage root, one line each: what ``asz-pipeline view`` with no session shows.

A line is read from the head round's header alone (its title, counts and the session's range), so
listing a root reads one line per conversation, never a landed file. A session no parse has
reached has ``rounds`` 0 and nothing else to say.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from asz_core.assembly.chain import Chain
from asz_core.assembly.flow import RoundError
from asz_core.root.durable import open_read
from asz_core.root.storage import StorageRoot
from asz_core.view.rounds import header_millis

__all__ = ["list_sessions"]


def _head_header(root: Path, session: str) -> dict[str, Any] | None:
    try:
        files = Chain(root, session).files()
        if not files:
            return None
        with open_read(files[-1].path) as f:
            header = json.loads(f.readline())
    except (OSError, ValueError, RoundError):  # verify says what is wrong
        return None
    return header if isinstance(header, dict) and header.get("t") == "header" else None


def list_sessions(root: Path) -> list[dict[str, Any]]:
    """For each session of ``root``, by id: its ``id`` and ``rounds``, and once parsed its
    ``title``, ``talks``, ``steps``, ``streams`` and the session's range ``from`` and ``to`` (unix
    milliseconds, 0 when unknown), as the head round says."""
    out = []
    for session in StorageRoot(root).sessions():
        header = _head_header(root, session)
        row: dict[str, Any] = {"id": session, "rounds": 0}
        if header is not None:
            row.update(rounds=header.get("round", 0), title=header.get("title", ""),
                       talks=header.get("talks", 0), steps=header.get("steps", 0), streams=header.get("streams", 0),
                       **{"from": header_millis(header.get("session_from_time")) or 0,
                          "to": header_millis(header.get("session_through_time")) or 0})
        out.append(row)
    return out
