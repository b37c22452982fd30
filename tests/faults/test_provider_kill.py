"""Kill -9 a provider-body pass at a landing step, then pass to the end: every body landed once.

A body file lands before ``seen.state`` says so; a pass killed between the two finds the body in
the session's manifests next time and does not land it again. Each seed kills at one named step
(file landing, a state write, or an append to ``seen.log``) at its n-th occurrence, once or
twice, with files cut small so a pass lands several. The first seed runs in the default lane;
``--slow`` (CI) runs 8. The local adapter's index is written from the corpus's transcripts
beforehand, as in the other provider tests.

The same with several sessions landing in two worker processes: a kill at a landing step kills
the worker alone (the pass reports the sessions it did not finish), one at a ``seen.state`` or
``seen.log`` write kills the pass, whose workers die with it.
"""

from __future__ import annotations

import os
import random
import sys
from collections import Counter
from pathlib import Path

import pytest

from asz_adapters.claude_code_provider.seen import APPEND_STEP
from asz_core.providerbody import ProviderBodies
from asz_core.root import faults
from asz_core.testing import PassRunner
from tests.helpers import run_cli, run_cli_forked, temp_files
from tests.provider_support import (
    TranscriptIds,
    bodies_by_session,
    land_ids,
    provider_config,
    response_files,
    transcript_ids,
)

pytestmark = pytest.mark.corpus

SESSION = "8f4d493a-14e9-4f80-b905-a5af06d253c2"
#: sessions of a few bodies each, for the worker processes' test
SESSIONS = ("8f4d493a-14e9-4f80-b905-a5af06d253c2", "839f0678-4dbc-4aa5-a37c-10f12406d23f",
            "93feae2d-9738-4b3d-a7dd-b03bacf0ed76", "db54f5d0-c338-4a49-a9ff-612173df821b",
            "de3b8b19-5bc0-4a2a-934a-1b6806567e25", "a9dda813-73e3-49f8-a718-68315200e497")
#: the slow lane's seed count: 16 keeps .ci/run inside its time; every one of 60 passed when the
#: index/ sweep landed (seeds 41 and 44 had found it), so raise it for a long soak
SEEDS_QUICK, SEEDS = 1, 16
STEPS = (*faults.STEPS, APPEND_STEP)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "seed" in metafunc.fixturenames:
        metafunc.parametrize("seed", [pytest.param(s, marks=() if s < SEEDS_QUICK else pytest.mark.slow)
                                      for s in range(SEEDS)])


def test_a_provider_pass_killed_at_a_landing_step(seed: int, corpus: Path, tmp_path: Path,
                                                  assert_root_verifies: object) -> None:
    _kill_and_finish(seed, corpus, tmp_path, (SESSION,), 1, assert_root_verifies)


def test_a_provider_pass_with_workers_killed_at_a_landing_step(seed: int, corpus: Path, tmp_path: Path,
                                                               assert_root_verifies: object) -> None:
    _kill_and_finish(seed, corpus, tmp_path, SESSIONS, 2, assert_root_verifies)


@pytest.mark.parametrize("step", ["state-write", "state-rename"])
def test_a_provider_pass_killed_writing_a_session_summary_leaves_no_temporary_file(
        step: str, corpus: Path, tmp_path: Path, assert_root_verifies: object) -> None:
    # the second state write of the pass is the session's ``index/provider_bodies``: its
    # temporary file is swept by the next pass's opening of the session (seeds 41 and 44 found it)
    _kill_and_finish(None, corpus, tmp_path, (SESSION,), 1, assert_root_verifies, kills=[f"kill:{step}:2"])


def _kill_and_finish(seed: int | None, corpus: Path, tmp_path: Path, sessions: tuple[str, ...], workers: int,
                     assert_root_verifies: object, kills: list[str] | None = None) -> None:
    rng = random.Random(seed)
    if kills is None:
        kills = [f"kill:{rng.choice(STEPS)}:{rng.randint(1, 4)}" for _ in range(rng.randint(1, 2))]
    all_ids = transcript_ids(corpus / "claude-code" / "projects")
    bodies = corpus / "provider-bodies"
    by_session = bodies_by_session(bodies)
    files = {s: by_session[s] + response_files(bodies, all_ids[s].calls) for s in sessions}
    src = tmp_path / "src"
    src.mkdir()
    for n, path in enumerate(p for s in sessions for p in files[s]):
        (src / path.name).write_bytes(path.read_bytes())
        os.utime(src / path.name, ns=(10**18 + n * 10**9,) * 2)
    runner = PassRunner(tmp_path, tmp_path / "root")
    for session in sessions:
        land_ids(runner.root, all_ids[session])
    config = runner.configure(adapters=[provider_config(src, exclude=[], collector={"max_delta_bytes": 64 * 1024,
                                                                        "workers": workers})])
    cli = [sys.executable, "-m", "asz_core.cli", "run", "--config", str(config)]
    env = {k: v for k, v in os.environ.items() if k != "ASZ_WORKERS"}
    for kill in kills:
        run_cli_forked(*cli[3:], env={**env, "ASZ_FAULT": kill})
    with pytest.MonkeyPatch.context() as here:  # the passes after the kills: here, as a child would run them
        here.delenv("ASZ_WORKERS", raising=False)
        for _ in range(2):
            done = run_cli("run", "--config", str(config))
            assert done.returncode == 0, done.stderr
    for session in sessions:
        _check_session(runner.root / session, src, files[session], all_ids[session])
    assert temp_files(runner.root) == []
    assert_root_verifies(runner.root)  # type: ignore[operator]


def _check_session(landed_dir: Path, src: Path, files: list[Path], ids: TranscriptIds) -> None:
    reader = ProviderBodies(landed_dir)
    landed = Counter(e.manifest.src for e in reader.entries())
    assert landed == Counter(p.name for p in files), ids.session  # every body, once
    for entry in reader.entries():  # files this small take the largest pieces out of a few bodies
        raw = (src / entry.manifest.src).read_bytes()
        rebuilt = reader.body(entry.seq, entry.row) if entry.complete else reader.body_from(entry.seq, entry.row, raw)
        assert rebuilt == raw
