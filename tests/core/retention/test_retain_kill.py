"""Kill -9 ``asz-pipeline retain`` at random instants: every landed file is still there, or its
skeleton is, or both; the next retention finishes, and the root verifies.

Each seed either dies at a named step of a removal (before its skeleton lands, before the landed
file is unlinked) at a random occurrence, or is killed by the parent after a random delay, which
lands anywhere: inside the skeleton's write, between its fsync and its rename, mid unlink. The
first 2 seeds run in the default lane; ``--slow`` (CI) runs all 6.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from asz_core.retention.plan import session_files
from asz_core.sessiondata import open_file
from asz_core.testing import PassRunner
from tests.core.retention.conftest import configure, copy_sessions
from tests.helpers import run_cli, run_cli_forked, temp_files

SEEDS_QUICK, SEEDS = 2, 6  # each seed costs seconds of CPU: the rest go to the slow lane
STEPS = ("skeleton-land", "landed-unlink")
#: session → (ord, off, bytes) of each of its records, in seq order
Structure = dict[str, list[tuple[int, int, int]]]


@pytest.fixture(scope="module")
def landed_root(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Structure]:
    """The three sessions landed in many small files, and each session's (ord, off, bytes)."""
    work = tmp_path_factory.mktemp("kill-root")
    copy_sessions(corpus, work / "projects")
    runner = PassRunner(work, work / "root")
    configure(runner, work / "projects", after=-1, max_delta=16384)
    while runner.run().totals.landed:  # a source lands at most so many files a pass
        pass
    assert not runner.run().failed
    return runner.root, _structure(runner.root)


def _structure(root: Path) -> Structure:
    out = {}
    for session in sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
        files = session_files(root / session)
        out[session] = [(r.ord, r.off, r.bytes) for seq in sorted(files)
                        for r in open_file(files[seq].get("sd") or files[seq]["sk"])]
    return out


@pytest.mark.parametrize("seed", [pytest.param(s, marks=() if s < SEEDS_QUICK else pytest.mark.slow)
                                  for s in range(SEEDS)])
def test_retain_killed_at_a_random_instant_loses_nothing_not_meant_to_go(
        seed: int, landed_root: tuple[Path, Structure], tmp_path: Path,
        assert_root_verifies: Callable[[Path], None]) -> None:
    rng = random.Random(seed)
    source, structure = landed_root
    root = tmp_path / "root"
    shutil.copytree(source, root, symlinks=True)
    runner = PassRunner(tmp_path, root)
    config = configure(runner, tmp_path / "projects", after=0, local_only=True)
    seqs = {s: set(session_files(root / s)) for s in structure}
    cli = [sys.executable, "-m", "asz_core.cli", "retain", "--config", str(config)]
    for _ in range(rng.randint(1, 3)):
        if rng.random() < 0.5:
            env = {**os.environ, "ASZ_FAULT": f"kill:{rng.choice(STEPS)}:{rng.randint(1, 40)}"}
            run_cli_forked(*cli[3:], env=env)
        else:
            child = subprocess.Popen(cli, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0.1, 1.0))
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=60)
        for session, want in seqs.items():  # the file, or both, or the skeleton: never neither
            assert set(session_files(root / session)) == want, session
        assert _structure(root) == structure
    done = run_cli("retain", "--config", str(config))  # after the kills: here, as a child would run it
    assert done.returncode == 0, done.stdout + done.stderr
    assert not list(root.rglob("*.sd")) and temp_files(root) == []
    assert _structure(root) == structure
    assert_root_verifies(root)
