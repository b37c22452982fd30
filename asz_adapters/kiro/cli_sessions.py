"""Kiro CLI sessions: ``<home>/sessions/cli/<uuid>.jsonl`` with ``<uuid>.json`` beside it.

Discovery lists the directory and groups files by stem; nothing is read. Claim reads each
bundle's ``.json`` for the two facts placement needs: ``cwd`` (the session filter) and
``parent_session_id`` (a child session lands as a stream of its parent). ``.history`` (typed
input lines, not chat) and ``.lock`` are not read.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from asz_adapters.kiro.units import CliBundle
from asz_core.plugin import Found
from asz_core.sessiondata.jsonbytes import NotJSON, loads_strict

__all__ = ["GENERATION", "KIND", "CliMeta", "discover_cli_sessions", "read_cli_meta"]

GENERATION = "kiro-cli/1"
KIND = "kiro-cli session"


def discover_cli_sessions(directory: Path) -> list[Found]:
    """One :class:`Found` per stem that has a ``.jsonl`` or a ``.json``."""
    try:
        entries = list(os.scandir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return []
    files: dict[str, dict[str, Path]] = {}
    for entry in entries:
        stem, dot, suffix = entry.name.rpartition(".")
        if dot and stem and suffix in ("jsonl", "json") and not entry.is_dir():
            files.setdefault(stem, {})[suffix] = Path(entry.path)
    found = []
    for stem in sorted(files):
        jsonl, meta = files[stem].get("jsonl"), files[stem].get("json")
        main = jsonl or meta
        assert main is not None
        found.append(Found(kind=KIND, key=stem, session=stem, sources=len(files[stem]),
                           path=str(main), detail={"generation": GENERATION},
                           payload=CliBundle(stem, directory)))
    return found


class CliMeta:
    """What claim needs from a ``<uuid>.json``; ``problem`` says why it could not be read.

    A plain class (docs/architecture.md, "Classes a pass imports")."""

    __slots__ = ("cwd", "parent", "problem")

    def __init__(self, cwd: str | None = None, parent: object = None, problem: str | None = None) -> None:
        self.cwd = cwd
        self.parent = parent
        self.problem = problem


def read_cli_meta(path: Path) -> CliMeta:
    """Read ``cwd`` and ``parent_session_id`` (``problem`` set when the file is unreadable)."""
    try:
        value: Any = loads_strict(path.read_bytes())
    except FileNotFoundError:
        return CliMeta()
    except OSError as exc:
        return CliMeta(problem=f"cannot be read: {exc.strerror or exc}")
    except NotJSON as exc:
        return CliMeta(problem=f"is not JSON ({exc}); it may be half written")
    if not isinstance(value, dict):
        return CliMeta(problem="is not a JSON object")
    cwd = value.get("cwd")
    return CliMeta(cwd=cwd if isinstance(cwd, str) and cwd else None,
                   parent=value.get("parent_session_id"))
