"""Plain helpers the claude-code-local tests share (fixtures are in ``conftest.py``)."""

from __future__ import annotations

import shutil
from pathlib import Path

ADAPTER = "claude-code-local"

#: a real session with two subagents (three transcript cursors) ...
SUBAGENTS_SLUG = "-home-marco-projects-spotter-worktrees-spotter-4te"
SUBAGENTS_SESSION = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
#: ... and one beside it, in another project directory
OTHER_SLUG = "-Users-ingo-projects-irrlicht--claude-worktrees-86"
OTHER_SESSION = "8ba5a9cc-f895-47a8-8229-2513413c9261"


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
