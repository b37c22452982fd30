"""A large source converted in worker processes lands what one process lands, byte for byte.

Every source is split here (``split_from_bytes: 1``) beside a landing in one process
(``split_from_bytes: 0``), on the same clock: every file of every session (landed files, cursors,
the ids index) must be the same bytes. Small files (``max_delta_bytes``) make a source land in
many windows, stop at a pass's last window with chunks converted ahead, and reduce records too
large for a file. A pass killed at each landing step, and a worker that dies, lose nothing and
land nothing twice. The default lane lands the largest session and a small one; ``--slow`` lands
the three largest and the small one, and adds the generated 200 MB transcript.
"""

from __future__ import annotations

import itertools
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from cc_helpers import fixed_clock_runner, land_both_alike, land_until_done, landed_records

from asz_core.collect import split
from asz_core.context import PassSummary
from asz_core.root import faults
from tests.helpers import REPO, run_cli_forked

pytestmark = pytest.mark.corpus

#: the three largest sessions of the shared corpus (a main transcript of 2.7 to 3.5 MB each, with
#: subagents), and a small one
SESSIONS = {
    "-home-marco-projects-spotter-worktrees-spotter-a0y": "fa812bfe-b295-4cca-9c2f-fdf01028cb46",
    "-home-marco-projects-spotter-worktrees-spotter-dov": "4d5611e5-241a-462a-8d15-5122611a9569",
    "-home-marco-projects-spotter-worktrees-spotter-4te": "ae4a77f8-aedd-4bc1-888f-c94edc91af04",
    "-Users-ingo-projects-irrlicht--claude-worktrees-228": "ef21e42a-0206-4578-8b08-8a767d47f5fd",
}


#: the largest session's project and the small one's
_LARGEST = "-home-marco-projects-spotter-worktrees-spotter-a0y"
_SMALL = "-Users-ingo-projects-irrlicht--claude-worktrees-228"
#: the default lane's: the largest and the small one (``--slow`` lands all of :data:`SESSIONS`)
_QUICK_SESSIONS = (_LARGEST, _SMALL)


@pytest.fixture(scope="module")
def sessions(request: pytest.FixtureRequest) -> dict[str, str]:
    """The sessions the tests land, by project directory: each landing of the largest costs
    seconds of CPU in every process it forks."""
    if request.config.getoption("--slow"):
        return SESSIONS
    return {slug: SESSIONS[slug] for slug in _QUICK_SESSIONS}


@pytest.fixture(scope="module")
def largest(cc_projects: Path, sessions: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ``projects/`` of ``sessions``, copied."""
    target = tmp_path_factory.mktemp("largest") / "projects"
    for slug, session in sessions.items():
        (target / slug).mkdir(parents=True)
        shutil.copy2(cc_projects / slug / f"{session}.jsonl", target / slug)
        if (cc_projects / slug / session).is_dir():
            shutil.copytree(cc_projects / slug / session, target / slug / session)
    return target


def _same_root(projects: Path, tmp_path: Path, **collector: Any) -> tuple[list[PassSummary], list[PassSummary]]:
    return land_both_alike(fixed_clock_runner(tmp_path / "one", projects, split_from_bytes=0, **collector),
                           fixed_clock_runner(tmp_path / "split", projects, split_from_bytes=1, **collector))


@pytest.fixture(autouse=True)
def _three_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    """Split as on a machine with three CPUs, whatever this one has, in this process: in two
    workers beside the pass (each landing of the largest sessions costs seconds of CPU in every
    process it forks)."""
    monkeypatch.delenv("ASZ_WORKERS", raising=False)
    monkeypatch.setattr(split.os, "sched_getaffinity", lambda pid: {0, 1, 2})


def test_the_largest_transcripts_land_the_same_bytes_split(largest: Path, tmp_path: Path,
                                                          assert_root_verifies: Any) -> None:
    one, many = _same_root(largest, tmp_path)
    assert not any(summary.errors for summary in one + many)
    assert_root_verifies(tmp_path / "split" / "root")


@pytest.mark.slow
def test_small_files_land_the_same_bytes_split_over_passes(largest: Path, tmp_path: Path) -> None:
    # 8 KiB files: each pass stops at its last window with chunks converted ahead of it, and the
    # records larger than a file come back whole from the workers, to be reduced
    one, many = _same_root(largest, tmp_path, max_delta_bytes=8192)
    assert len(one) == len(many) > 1


def test_a_source_below_the_threshold_told_one_process_or_on_one_cpu_is_not_split(
        largest: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[int] = []
    real = split.split_records

    def spy(*args: Any, **kwargs: Any) -> Any:
        started.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr("asz_core.collect.append.split_records", spy)
    land_until_done(fixed_clock_runner(tmp_path / "a", largest, split_from_bytes=4 << 20))
    land_until_done(fixed_clock_runner(tmp_path / "b", largest, split_from_bytes=1, workers=1))
    monkeypatch.setattr(split.os, "sched_getaffinity", lambda pid: {0})
    land_until_done(fixed_clock_runner(tmp_path / "c", largest, split_from_bytes=1))
    assert not started
    monkeypatch.setattr(split.os, "sched_getaffinity", lambda pid: {0, 1})  # one worker beside the pass
    land_until_done(fixed_clock_runner(tmp_path / "d", largest, split_from_bytes=1))
    assert started


def test_a_worker_that_dies_fails_its_source_by_name_and_the_rest_lands_next_pass(
        largest: Path, landed_in_one_process: dict[str, list[tuple[int, str, str]]], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    real = split._convert_chunk
    calls = itertools.count()
    the_pass = os.getpid()

    def dies_on_its_third(*args: Any) -> Any:  # each forked worker counts its own chunks
        if os.getpid() != the_pass and next(calls) == 2:
            os._exit(3)
        return real(*args)

    monkeypatch.setattr(split, "_convert_chunk", dies_on_its_third)
    runner = fixed_clock_runner(tmp_path / "split", largest, split_from_bytes=1, max_delta_bytes=65536)
    messages = [error.message for error in runner.run().errors]
    assert messages, "a worker died and no source failed"
    assert all("a worker process converting its lines died (exit code 3)" in message
               and ".jsonl: " in message for message in messages)
    monkeypatch.setattr(split, "_convert_chunk", real)
    land_until_done(runner)
    for session, records in landed_in_one_process.items():
        assert landed_records(runner.root, session) == records


def test_a_conversion_that_fails_in_a_worker_fails_its_source_by_name(
        largest: Path, sessions: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    the_pass = os.getpid()
    real = split._convert_chunk

    def fails_in_a_worker(*args: Any) -> Any:
        if os.getpid() != the_pass:
            raise ValueError("a dialect's bug")
        return real(*args)

    monkeypatch.setattr(split, "_convert_chunk", fails_in_a_worker)
    runner = fixed_clock_runner(tmp_path / "split", largest, split_from_bytes=1)
    messages = [error.message for error in runner.run().errors]
    assert len(messages) == len(sessions)
    assert all("converting its lines failed: ValueError: a dialect's bug" in m for m in messages)


def test_a_conversion_that_fails_in_a_chunk_of_the_pass_s_own_fails_its_session_as_in_one_process(
        largest: Path, sessions: dict[str, str], landed_in_one_process: dict[str, list[tuple[int, str, str]]],
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    the_pass = os.getpid()
    real = split._convert_chunk

    def fails_in_the_pass(*args: Any) -> Any:
        if os.getpid() == the_pass:
            raise ValueError("a dialect's bug")
        return real(*args)

    monkeypatch.setattr(split, "_convert_chunk", fails_in_the_pass)
    monkeypatch.setattr(split._Worker, "ready", lambda self: False)  # the pass converts whenever it may
    runner = fixed_clock_runner(tmp_path / "split", largest, split_from_bytes=1, max_delta_bytes=65536)
    # a large session's main transcript reads in many chunks, so the pass converts some of them;
    # the small one's is one chunk, its worker's
    failed = {error.session: error.message for error in runner.run().errors}
    assert set(failed.values()) == {"ValueError: a dialect's bug"}
    assert sessions[_LARGEST] in failed and sessions[_SMALL] not in failed
    monkeypatch.undo()
    land_until_done(runner)
    for session, records in landed_in_one_process.items():
        assert landed_records(runner.root, session) == records


@pytest.mark.parametrize("worker_ready", [False, True])
def test_the_largest_transcripts_land_the_same_bytes_whichever_chunks_the_pass_converts_itself(
        worker_ready: bool, largest: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a worker never back in time: the pass converts every chunk it may; always: none
    the_pass = os.getpid()
    here: list[int] = []
    real = split._convert_chunk

    def spy(*args: Any) -> Any:
        if os.getpid() == the_pass:
            here.append(1)
        return real(*args)

    monkeypatch.setattr(split, "_convert_chunk", spy)
    monkeypatch.setattr(split._Worker, "ready", lambda self: worker_ready)
    one, many = _same_root(largest, tmp_path)
    assert not any(summary.errors for summary in one + many)
    assert bool(here) is not worker_ready


@pytest.fixture(scope="module")
def landed_in_one_process(largest: Path, sessions: dict[str, str],
                          tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple[int, str, str]]]:
    """:func:`_records` of each of ``sessions``, landed in one process in 64 KiB files: what
    a split pass killed or losing a worker must end with (landed once for the module, not once a
    test: each landing of the largest sessions costs seconds of CPU)."""
    one = fixed_clock_runner(tmp_path_factory.mktemp("one"), largest, split_from_bytes=0, max_delta_bytes=65536)
    land_until_done(one)
    return {session: landed_records(one.root, session) for session in sessions.values()}


#: the step a split pass is killed at in the default lane, a record's write with chunks out in
#: the workers; ``--slow`` kills it at every landing step (each kill lands the largest sessions
#: again, seconds of CPU)
_QUICK_STEPS = ("temp-write",)


@pytest.mark.parametrize("step", [pytest.param(s, marks=() if s in _QUICK_STEPS else pytest.mark.slow)
                                  for s in faults.STEPS if not s.startswith("owed")])
def test_a_split_pass_killed_at_each_step_loses_nothing_and_lands_nothing_twice(
        step: str, largest: Path, landed_in_one_process: dict[str, list[tuple[int, str, str]]], tmp_path: Path,
        assert_root_verifies: Any) -> None:
    runner = fixed_clock_runner(tmp_path / "split", largest, split_from_bytes=1, max_delta_bytes=65536)
    # a write of records (a chunk's that fit in a file at a time): deep in the first source, its
    # chunks out in the workers
    env = {**os.environ, "ASZ_FAULT": f"kill:{step}:{30 if step == 'temp-write' else 3}"}
    killed = run_cli_forked("run", "--config", str(runner.config_path), env=env, cwd=REPO, timeout=300)
    assert killed.returncode == -9, killed.stderr.decode()[-2000:]
    land_until_done(runner)
    assert_root_verifies(runner.root)
    for session, records in landed_in_one_process.items():
        assert landed_records(runner.root, session) == records


@pytest.mark.slow
def test_a_generated_200_mb_transcript_lands_the_same_bytes_split(generated_200_mb: Path, tmp_path: Path) -> None:
    _same_root(generated_200_mb, tmp_path)
