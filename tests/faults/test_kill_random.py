"""Kill -9 a pass at random instants, then run passes to the end: nothing lost, nothing twice.

Each seed picks either a named landing step and which occurrence of it to die at (between temp
write and rename, between rename and cursor, mid cursor write, ...) or a plain random delay after
which the parent sends SIGKILL. The first 2 seeds run in the default lane; ``--slow`` (CI) runs 200.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from asz_core.root import faults
from asz_core.testing import PassRunner
from tests.helpers import jsonl_config, records_of, run_cli, run_cli_forked, temp_files

SEEDS_QUICK, SEEDS = 2, 200


def _sources(src: Path, rng: random.Random) -> dict[str, int]:
    src.mkdir()
    counts = {}
    for s in range(3):
        n = rng.randint(20, 60)
        lines = []
        for i in range(1, n + 1):
            pad = b"p" * rng.randint(10, 900)
            lines.append(b'{"n":%d,"time":"2026-01-01T00:00:00Z","pad":"%s"}\n' % (i, pad))
        (src / f"s{s}.jsonl").write_bytes(b"".join(lines))
        counts[f"s{s}"] = n
    return counts


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "seed" in metafunc.fixturenames:
        metafunc.parametrize("seed", [pytest.param(s, marks=() if s < SEEDS_QUICK else pytest.mark.slow)
                                      for s in range(SEEDS)])


def test_a_pass_killed_at_a_random_instant(seed: int, tmp_path: Path, assert_root_verifies) -> None:
    rng = random.Random(seed)
    counts = _sources(tmp_path / "src", rng)
    runner = PassRunner(tmp_path, tmp_path / "root")
    config = runner.configure(**jsonl_config(tmp_path / "src", max_delta_bytes=4096))
    cli = [sys.executable, "-m", "asz_core.cli", "run", "--config", str(config)]
    for _ in range(rng.randint(1, 2)):  # sometimes a second crash before the clean passes
        if rng.random() < 0.6:
            env = {**os.environ, "ASZ_FAULT": f"kill:{rng.choice(faults.STEPS)}:{rng.randint(1, 6)}"}
            run_cli_forked(*cli[3:], env=env, timeout=60)
        else:
            child = subprocess.Popen(cli, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0.0, 0.4))
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=60)
    for _ in range(3):  # the passes after the kills: here, as a child would run them
        done = run_cli("run", "--config", str(config))
        assert done.returncode == 0, done.stderr
    for session, n in counts.items():
        assert [r.ord for _, r in records_of(runner.root, session)] == list(range(1, n + 1)), session
    assert temp_files(runner.root) == []
    assert_root_verifies(runner.root)
