"""Plain helpers the claude-code-local tests share (fixtures are in ``conftest.py``)."""

from __future__ import annotations

import shutil
from pathlib import Path

ADAPTER = "claude-code-local"


def source_files(projects: Path) -> list[Path]:
    """Every file the adapter reads under ``projects`` (transcripts, sidecars, workflow files)."""
    return sorted(p for p in projects.rglob("*") if p.is_file() and p.name.endswith((".jsonl", ".json", ".js")))


def copy_session(projects: Path, slug: str, session: str, target: Path) -> Path:
    """Copy one session (its transcript and its directory) into ``target/<slug>``."""
    dest = target / slug
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(projects / slug / f"{session}.jsonl", dest / f"{session}.jsonl")
    if (projects / slug / session).is_dir():
        shutil.copytree(projects / slug / session, dest / session)
    return dest
