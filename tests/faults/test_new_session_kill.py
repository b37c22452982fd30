"""Kill -9 a pass at each step of a new session's landing in one place (``asz_core.collect.fresh``),
then pass to the end: every record landed once, no temporary file left, the root verifies, and
the root is the one a pass with no kill lands.

Three of the corpus's sessions of one transcript each, new to the root, so each lands in one
place in one group; the kill comes at the second time a step is reached (the first session
past it, the second at it).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from asz_core.root import durable
from asz_core.testing import PassRunner
from tests.adapters.claude_code_local.cc_helpers import ADAPTER, landed_records
from tests.helpers import run_cli, run_cli_forked, temp_files

pytestmark = [pytest.mark.corpus,
              pytest.mark.skipif(not durable.can_sync_filesystem(),
                                 reason="a new session lands in one place only in a group commit (syncfs: Linux)")]

#: the steps a new session's landing in one place reaches, in order (``faults.STEPS``' names)
STEPS = ("temp-write", "temp-readonly", "temp-fsync", "install", "state-write", "dir-fsync", "state-rename",
         "group-release")


def _three_sessions(corpus: Path, target: Path) -> list[str]:
    projects = corpus / "claude-code" / "projects"
    lone = sorted((p for p in projects.glob("*/*.jsonl") if not p.with_suffix("").exists()),
                  key=lambda p: (p.stat().st_size, p.name))[:3]
    for transcript in lone:
        (target / transcript.parent.name).mkdir(parents=True, exist_ok=True)
        shutil.copy2(transcript, target / transcript.parent.name / transcript.name)
    return [t.stem for t in lone]


def _configured(work: Path, projects: Path) -> tuple[PassRunner, Path]:
    work.mkdir()
    runner = PassRunner(work, work / "root")
    config = runner.configure(adapters=[{"name": ADAPTER, "source_root": str(projects), "exclude": []}],
                              metrics={"enabled": False})
    return runner, config


@pytest.mark.parametrize("step", STEPS)
def test_a_pass_killed_at_a_step_of_a_new_sessions_landing_loses_nothing(
        step: str, corpus: Path, tmp_path: Path, assert_root_verifies: Callable[[Path], None]) -> None:
    projects = tmp_path / "projects"
    sessions = _three_sessions(corpus, projects)
    unkilled, unkilled_config = _configured(tmp_path / "unkilled", projects)
    assert run_cli("run", "--config", str(unkilled_config)).returncode == 0
    runner, config = _configured(tmp_path / "killed", projects)
    killed = run_cli_forked("run", "--config", str(config), env={**os.environ, "ASZ_FAULT": f"kill:{step}:2"})
    assert killed.returncode == -9, killed.stderr.decode()  # else the step was never reached twice
    for _ in range(2):
        done = run_cli("run", "--config", str(config))
        assert done.returncode == 0, done.stderr
    for session in sessions:
        assert landed_records(runner.root, session) == landed_records(unkilled.root, session), session
    assert temp_files(runner.root) == []
    assert_root_verifies(runner.root)
