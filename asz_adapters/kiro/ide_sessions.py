"""Kiro IDE (≥ 1.0) sessions: ``<home>/sessions/<bucket>/sess_<uuid>/``.

Every child of ``sessions/`` other than ``cli`` is a workspace bucket; each ``sess_*``
directory in it is one session, with ``messages.jsonl`` (append-only) and ``session.json``
(rewritten). Its ``sub-executions/*.jsonl`` have a shape no capture shows yet, so they are
found and counted, not read.

A sub-agent's session is named by a ``sub_agent_start`` line of its parent. Claim finds those
lines only in the part of a parent's ``messages.jsonl`` that has not landed yet
(:func:`sub_agent_children`); children named by lines that landed earlier are known from where
they landed in the root.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from asz_adapters.kiro.ids import is_ide_session_id
from asz_adapters.kiro.units import IdeSession, RefusedDirectory
from asz_core.plugin import Found
from asz_core.sessiondata.jsonbytes import NotJSON, loads_strict

__all__ = ["GENERATION", "KIND", "discover_ide_sessions", "read_workspace", "sub_agent_children"]

GENERATION = "kiro-ide/1"
KIND = "kiro-ide session"
NOT_READ = "not read by this version"
_MARKER = b'"sub_agent_start"'


def discover_ide_sessions(sessions: Path) -> list[Found]:
    """One :class:`Found` per ``sess_*`` directory, and one per session's sub-executions; one
    refused (counted unreadable with its reason) per link where a bucket or a session directory
    would be, and per directory in a bucket that is not named ``sess_<uuid>`` (a link is never
    followed, as no source file that is a link is read)."""
    found: list[Found] = []
    for bucket, link in _subdirs(sessions):
        if bucket.name == "cli":
            continue
        if link:
            found.append(_refused(bucket, "a link where Kiro keeps a workspace's sessions; it is not followed"))
            continue
        for entry, link in _subdirs(bucket):
            if link:
                found.append(_refused(entry, "a link where Kiro keeps a session; it is not followed"))
                continue
            if not entry.name.startswith("sess_"):  # a sess_ name not in form: the claim refuses it
                found.append(_refused(entry, "a directory among Kiro IDE sessions not named "
                                             "sess_<uuid>, so it cannot be placed in a session"))
                continue
            present = [p for p in (entry / "messages.jsonl", entry / "session.json") if p.exists()]
            found.append(Found(kind=KIND, key=entry.name, session=entry.name,
                               sources=len(present), path=str(entry),
                               detail={"generation": GENERATION, "bucket": bucket.name},
                               payload=IdeSession(entry.name, entry)))
            subs = sorted((entry / "sub-executions").glob("*.jsonl"))
            if subs:
                found.append(Found(kind=NOT_READ, key=f"{entry.name}/sub-executions",
                                   sources=len(subs), path=str(entry / "sub-executions"),
                                   detail={"generation": "kiro-ide sub-executions"}))
    return found


def _refused(path: Path, reason: str) -> Found:
    return Found(kind="unreadable", key=str(path), sources=0, path=str(path),
                 detail={"generation": GENERATION, "reason": reason}, payload=RefusedDirectory(path, reason))


def _subdirs(directory: Path) -> list[tuple[Path, bool]]:
    """Each directory in ``directory``, and each link (to anything: what it leads to is not
    looked at), with whether it is a link."""
    try:
        with os.scandir(directory) as entries:
            return sorted((Path(e.path), e.is_symlink()) for e in entries
                          if e.is_symlink() or e.is_dir(follow_symlinks=False))
    except (FileNotFoundError, NotADirectoryError):
        return []


def read_workspace(meta: Path) -> tuple[str | None, str | None]:
    """``(workspacePaths[0], problem)`` from ``session.json``; both ``None`` when absent."""
    try:
        value: Any = loads_strict(meta.read_bytes())
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"cannot be read: {exc.strerror or exc}"
    except NotJSON as exc:
        return None, f"is not JSON ({exc}); it may be half written"
    paths = value.get("workspacePaths") if isinstance(value, dict) else None
    first = paths[0] if isinstance(paths, list) and paths else None
    return (first if isinstance(first, str) and first else None), None


def sub_agent_children(messages: Path, offset: int) -> list[str]:
    """The child sessions named by complete ``sub_agent_start`` lines after ``offset``.

    Only lines holding the marker are parsed; the rest are skipped as bytes.
    """
    children: list[str] = []
    try:
        f = open(messages, "rb")  # noqa: SIM115 - closed by the with below
    except OSError:
        return children
    with f:
        f.seek(offset)
        for chunk in f:
            if not chunk.endswith(b"\n"):
                break  # a line still being written
            if _MARKER not in chunk:
                continue
            try:
                value = loads_strict(chunk)
            except NotJSON:
                continue
            payload = value.get("payload") if isinstance(value, dict) else None
            child = payload.get("subSessionId") if isinstance(payload, dict) else None
            if (isinstance(payload, dict) and payload.get("type") == "sub_agent_start"
                    and isinstance(child, str) and is_ide_session_id(child) and child not in children):
                children.append(child)
    return children
