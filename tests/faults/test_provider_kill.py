"""Kill -9 a provider-body pass at a landing step, then pass to the end: every body landed once.

A body file lands before ``seen.state`` says so; a pass killed between the two finds the body in
the session's manifests next time and does not land it again. Each seed kills at one named step
(file landing, a state write, or an append to ``seen.log``) at its n-th occurrence, once or
twice, with files cut small so a pass lands several. 8 seeds run in CI; ``--slow`` runs 60. The
local adapter's index is written from the corpus's transcripts beforehand, as in the other
provider tests.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from asz_adapters.claude_code_provider.seen import APPEND_STEP
from asz_core.providerbody import ProviderBodies
from asz_core.root import faults
from asz_core.testing import PassRunner
from tests.helpers import temp_files
from tests.provider_support import (
    bodies_by_session,
    provider_config,
    response_files,
    transcript_ids,
    write_index,
)

pytestmark = pytest.mark.corpus

SESSION = "8f4d493a-14e9-4f80-b905-a5af06d253c2"
SEEDS_CI, SEEDS_SLOW = 8, 60
STEPS = (*faults.STEPS, APPEND_STEP)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "seed" in metafunc.fixturenames:
        metafunc.parametrize("seed", range(SEEDS_SLOW if metafunc.config.getoption("--slow") else SEEDS_CI))


def test_a_provider_pass_killed_at_a_landing_step(seed: int, corpus: Path, tmp_path: Path,
                                                  assert_root_verifies: object) -> None:
    rng = random.Random(seed)
    ids = transcript_ids(corpus / "claude-code" / "projects")[SESSION]
    bodies = corpus / "provider-bodies"
    files = bodies_by_session(bodies)[SESSION] + response_files(bodies, ids.calls)
    src = tmp_path / "src"
    src.mkdir()
    for n, path in enumerate(files):
        (src / path.name).write_bytes(path.read_bytes())
        os.utime(src / path.name, ns=(10**18 + n * 10**9,) * 2)
    runner = PassRunner(tmp_path, tmp_path / "root")
    write_index(runner.root, ids)
    config = runner.configure(adapters=[provider_config(src, collector={"max_delta_bytes": 64 * 1024})])
    cli = [sys.executable, "-m", "asz_core.cli", "run", "--config", str(config)]
    for _ in range(rng.randint(1, 2)):
        env = {**os.environ, "ASZ_FAULT": f"kill:{rng.choice(STEPS)}:{rng.randint(1, 4)}"}
        subprocess.run(cli, env=env, capture_output=True, check=False, timeout=120)
    for _ in range(2):
        done = subprocess.run(cli, capture_output=True, check=False, timeout=120)
        assert done.returncode == 0, done.stderr.decode()
    reader = ProviderBodies(runner.root / SESSION)
    landed = Counter(e.manifest.src for e in reader.entries())
    assert landed == Counter(p.name for p in files)  # every body, once
    for entry in reader.entries():  # files this small take the largest pieces out of a few bodies
        raw = (src / entry.manifest.src).read_bytes()
        rebuilt = reader.body(entry.seq, entry.row) if entry.complete else reader.body_from(entry.seq, entry.row, raw)
        assert rebuilt == raw
    assert temp_files(runner.root) == []
    assert_root_verifies(runner.root)  # type: ignore[operator]
