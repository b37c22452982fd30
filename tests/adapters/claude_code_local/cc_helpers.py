"""Plain helpers the claude-code-local tests share (fixtures are in ``conftest.py``)."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path
from typing import Any

from asz_core.context import PassSummary
from asz_core.testing import PassRunner
from tests.helpers import records_of

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


def fixed_clock_runner(work: Path, projects: Path, **collector: Any) -> PassRunner:
    """A runner landing ``projects`` into ``work/root`` with ``collector``'s options, on a clock
    that runs the same for every runner: two landings of the same sources name their files and
    write their times alike, so their roots can be compared byte for byte."""
    work.mkdir(parents=True, exist_ok=True)
    runner = PassRunner(work, work / "root")
    tick = itertools.count(1_800_000_000_000_000_000, 1_000_000_007)
    runner.clock = lambda: next(tick)
    runner.configure(adapters=[{"name": ADAPTER, "source_root": str(projects), "exclude": [],
                                "collector": collector}], metrics={"enabled": False})
    return runner


def land_until_done(runner: PassRunner) -> list[PassSummary]:
    """Passes until nothing is pending."""
    summaries = [runner.run()]
    while summaries[-1].totals.pending:
        summaries.append(runner.run())
    return summaries


def session_files(root: Path) -> dict[str, bytes]:
    """Every file under every session of ``root``, by its path there."""
    return {str(path.relative_to(root)): path.read_bytes()
            for session in root.iterdir() if session.is_dir() and not session.name.startswith(("_", "."))
            for path in sorted(session.rglob("*")) if path.is_file()}


def land_both_alike(first: PassRunner, second: PassRunner) -> tuple[list[PassSummary], list[PassSummary]]:
    """Land with each runner until nothing is pending: every file of every session of the two
    roots must be the same bytes. Their passes, in order."""
    landed_first, landed_second = land_until_done(first), land_until_done(second)
    files_first, files_second = session_files(first.root), session_files(second.root)
    assert files_first.keys() == files_second.keys()
    changed = sorted(name for name in files_first if files_first[name] != files_second[name])
    assert not changed, f"{len(changed)} files differ, e.g. {changed[:5]}"
    return landed_first, landed_second


def landed_records(root: Path, session: str) -> list[tuple[int, str, str]]:
    """Each landed record of ``session`` (of any of its streams) as ``(ord, sha, id)``, sorted:
    a record lost or landed twice changes it."""
    return sorted((record.ord, record.sha or "", record.id or "") for _, record in records_of(root, session))
