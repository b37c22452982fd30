"""Helpers for the claude-code-local tests: the corpus's projects, copies to mutate, passes."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cc_helpers import ADAPTER, OTHER_SESSION, OTHER_SLUG, SUBAGENTS_SESSION, SUBAGENTS_SLUG, copy_session

from asz_core.collect import fresh
from asz_core.context import PassSummary
from asz_core.root import storage
from asz_core.tally import SessionOutcome
from asz_core.testing import PassRunner
from tests.helpers import REPO


@pytest.fixture(scope="session")
def cc_projects(corpus: Path) -> Path:
    """The shared corpus's ``projects/`` (read only: copy it to change it)."""
    return corpus / "claude-code" / "projects"


@pytest.fixture(scope="session")
def generated_200_mb(shared: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``projects/`` of ``benchmarks/corpus.py``'s 200 MB transcript (one session: real lines
    of the shared corpus, so without it this skips as the corpus tests do), made once a run."""
    generated = tmp_path_factory.mktemp("generated") / "huge"
    subprocess.run([sys.executable, str(REPO / "benchmarks" / "corpus.py"), "generate", str(generated),
                    "--preset", "huge-transcript"], check=True, capture_output=True,
                   env={**os.environ, "ASZ_SHARED": str(shared)})
    return generated / ".claude" / "projects"


@pytest.fixture
def two_sessions(tmp_path: Path, cc_projects: Path) -> Path:
    """A ``projects/`` of two real sessions to change: one with two subagents, one beside it."""
    target = tmp_path / "projects"
    copy_session(cc_projects, SUBAGENTS_SLUG, SUBAGENTS_SESSION, target)
    copy_session(cc_projects, OTHER_SLUG, OTHER_SESSION, target)
    return target


@pytest.fixture
def run_local(asz_pass: PassRunner) -> Callable[..., PassSummary]:
    """``run_local(source_root, **options)``: configure claude-code-local alone and run a pass."""
    def run(source_root: Path, **options: Any) -> PassSummary:
        entry = {"name": ADAPTER, "source_root": str(source_root), **options}
        asz_pass.configure(adapters=[entry])
        return asz_pass.run()
    return run


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The sessions each pass opens (locks) for landing, in order (in this process: one worker):
    through a ``SessionHandle``, or new to the root and landed in one place."""
    monkeypatch.delenv("ASZ_WORKERS", raising=False)
    seen: list[str] = []
    real = storage.SessionHandle.__enter__
    real_new = fresh.land_new_session

    def enter(self: storage.SessionHandle) -> storage.SessionHandle:
        seen.append(self.id)
        return real(self)

    def land_new(actx: Any, claim: Any, source: Any, group: Any) -> SessionOutcome | None:
        outcome = real_new(actx, claim, source, group)
        if outcome is not None:
            seen.append(claim.session)
        return outcome

    monkeypatch.setattr(storage.SessionHandle, "__enter__", enter)
    monkeypatch.setattr(fresh, "land_new_session", land_new)
    return seen
