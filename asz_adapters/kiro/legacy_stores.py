"""The Kiro IDE's stores from before 1.0, found and counted but not read.

No real capture of them was available to test against (research notes §5, §6, §8), so this
version does not guess at them: ``asz-pipeline sources`` counts what is there, as
"not read by this version", and nothing of it is claimed or landed. In a
``User/globalStorage/kiro.kiroagent`` folder:

* ``workspace-sessions/<base64 path>/`` — ``sessions.json`` and one ``<sessionId>.json`` each;
* ``<32 hex>/*.chat`` — the legacy execution snapshots;
* ``<32 hex>/<dir>/<file without extension>`` — the newer execution files.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from asz_core.plugin import Found

__all__ = ["NOT_READ", "discover_legacy_stores"]

NOT_READ = "not read by this version"
_HEX32 = re.compile(r"[0-9a-f]{32}")  # matched whole


def discover_legacy_stores(agent_dir: Path) -> list[Found]:
    """One :class:`Found` per older store present under ``agent_dir``, with its file count."""
    found: list[Found] = []
    sessions = agent_dir / "workspace-sessions"
    documents = sum(1 for p in sessions.glob("*/*.json")) if sessions.is_dir() else 0
    if documents:
        found.append(_found(sessions, documents, "kiro-ide<1.0 workspace-sessions"))
    chats = executions = 0
    for hashed in _entries(agent_dir):
        if not (hashed.is_dir() and _HEX32.fullmatch(hashed.name)):
            continue
        for entry in _entries(hashed):
            if entry.is_file() and entry.suffix == ".chat":
                chats += 1
            elif entry.is_dir():
                executions += sum(1 for f in _entries(entry) if f.is_file() and not f.suffix)
    if chats:
        found.append(_found(agent_dir, chats, "kiro-ide<1.0 .chat files", key="chat"))
    if executions:
        found.append(_found(agent_dir, executions, "kiro-ide<1.0 execution files", key="executions"))
    return found


def _entries(directory: Path) -> list[Path]:
    try:
        return sorted(Path(e.path) for e in os.scandir(directory))
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return []


def _found(path: Path, count: int, generation: str, key: str = "") -> Found:
    return Found(kind=NOT_READ, key=f"{path}#{key}" if key else str(path), sources=count,
                 path=str(path), detail={"generation": generation})
