"""A large source digested and proved in a second process lands what one process lands, byte for byte.

A source whose dialect does not split, with as many new bytes as a split needs, has a prover
beside the pass's process on two CPUs or more (:mod:`asz_core.collect.prove`). The Claude Code
dialect splits; here it is taken as one that does not (the collector is told no source splits),
so that the prover's work is checked against the corpus. Every source has one
(``split_from_bytes: 1``), landed beside a landing with none (``split_from_bytes: 0``) on the
same clock: every file of every session must be the same bytes. A prover that dies, sends back late, or sends back the
proofs of other bytes only leaves more of the work to the pass, which lands the same bytes.
"""

from __future__ import annotations

import itertools
import os
import time
from pathlib import Path
from typing import Any

import pytest
from cc_helpers import copy_session, fixed_clock_runner, land_both_alike, land_until_done, landed_records

from asz_core.collect import prove, split
from asz_core.context import PassSummary
from tests.helpers import REPO, run_cli_forked

pytestmark = pytest.mark.corpus

#: the largest session of the shared corpus (a main transcript of 3.5 MB, with subagents), and a
#: small one
SESSIONS = {
    "-home-marco-projects-spotter-worktrees-spotter-a0y": "fa812bfe-b295-4cca-9c2f-fdf01028cb46",
    "-Users-ingo-projects-irrlicht--claude-worktrees-228": "ef21e42a-0206-4578-8b08-8a767d47f5fd",
}


@pytest.fixture(scope="module")
def largest(cc_projects: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("largest") / "projects"
    for slug, session in SESSIONS.items():
        copy_session(cc_projects, slug, session, target)
    return target


def _splits_nothing(*args: Any) -> int:
    """:func:`~asz_core.collect.split.split_workers` for a dialect that does not split."""
    return 0


@pytest.fixture(autouse=True)
def _two_cpus_no_split(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a machine with two CPUs, whatever this one has, with a dialect that does not split."""
    monkeypatch.delenv("ASZ_WORKERS", raising=False)
    monkeypatch.setattr(split.os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr("asz_core.collect.append.split_workers", _splits_nothing)


@pytest.fixture
def taken(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """For each block a prover was asked for, whether its proofs were there to take."""
    seen: list[bool] = []
    real = prove._Prover.take

    def spy(self: Any, number: int, size: int) -> Any:
        proofs = real(self, number, size)
        seen.append(proofs is not None)
        return proofs

    monkeypatch.setattr(prove._Prover, "take", spy)
    return seen


def _same_root(projects: Path, tmp_path: Path, **collector: Any) -> tuple[list[PassSummary], list[PassSummary]]:
    landed_alone, landed_proved = land_both_alike(
        fixed_clock_runner(tmp_path / "alone", projects, split_from_bytes=0, **collector),
        fixed_clock_runner(tmp_path / "proved", projects, split_from_bytes=1, **collector))
    assert not any(summary.errors for summary in landed_alone + landed_proved)
    return landed_alone, landed_proved


def test_the_largest_transcript_lands_the_same_bytes_with_a_prover(
        largest: Path, tmp_path: Path, taken: list[bool], assert_root_verifies: Any) -> None:
    _same_root(largest, tmp_path)
    assert any(taken), "no block's proofs were taken from a prover"
    assert_root_verifies(tmp_path / "proved" / "root")


def test_small_files_land_the_same_bytes_with_a_prover_over_passes(largest: Path, tmp_path: Path,
                                                                    taken: list[bool]) -> None:
    # 8 KiB files: each pass stops at its last window with blocks read and sent ahead of it
    alone, proved = _same_root(largest, tmp_path, max_delta_bytes=8192)
    assert len(alone) == len(proved) > 1
    assert any(taken)


def test_a_prover_that_dies_leaves_its_lines_to_the_pass(largest: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    real = prove._proved
    calls = itertools.count()

    def dies_on_its_third(block: bytes) -> bytes:  # each prover counts its own blocks
        if next(calls) == 2:
            os._exit(5)
        return real(block)

    monkeypatch.setattr(prove, "_proved", dies_on_its_third)
    _same_root(largest, tmp_path)


def test_proofs_that_come_back_late_are_let_go_and_their_lines_worked_out_here(
        largest: Path, tmp_path: Path, taken: list[bool], monkeypatch: pytest.MonkeyPatch) -> None:
    real = prove._proved

    def slow(block: bytes) -> bytes:
        time.sleep(0.02)
        return real(block)

    monkeypatch.setattr(prove, "_proved", slow)
    _same_root(largest, tmp_path)
    assert not all(taken), "the pass waited for a prover"


def test_proofs_of_other_bytes_are_not_believed(largest: Path, tmp_path: Path, taken: list[bool],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    real = prove._proved

    def of_a_longer_block(block: bytes) -> bytes:
        return real(block + b'{"more":1}\n')

    monkeypatch.setattr(prove, "_proved", of_a_longer_block)
    _same_root(largest, tmp_path)
    assert not any(taken)


def test_a_source_that_does_not_split_has_a_prover_from_the_threshold_on_two_cpus_never_told_one_process(
        largest: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[str] = []
    real_prover, real_split = prove._Prover.__init__, split.split_records

    def prover_spy(self: Any) -> None:
        started.append("prover")
        real_prover(self)

    def split_spy(*args: Any, **kwargs: Any) -> Any:
        started.append("split")
        return real_split(*args, **kwargs)

    monkeypatch.setattr(prove._Prover, "__init__", prover_spy)
    monkeypatch.setattr("asz_core.collect.append.split_records", split_spy)
    land_until_done(fixed_clock_runner(tmp_path / "a", largest, split_from_bytes=64 << 20))
    land_until_done(fixed_clock_runner(tmp_path / "b", largest, split_from_bytes=1, workers=1))
    monkeypatch.setattr(split.os, "sched_getaffinity", lambda pid: {0})
    land_until_done(fixed_clock_runner(tmp_path / "c", largest, split_from_bytes=1))
    assert not started
    monkeypatch.setattr(split.os, "sched_getaffinity", lambda pid: {0, 1})
    land_until_done(fixed_clock_runner(tmp_path / "d", largest, split_from_bytes=1))
    assert set(started) == {"prover"}
    started.clear()
    monkeypatch.setattr("asz_core.collect.append.split_workers", split.split_workers)  # a dialect that splits
    land_until_done(fixed_clock_runner(tmp_path / "e", largest, split_from_bytes=1))
    assert set(started) == {"split"}


def test_a_pass_with_a_prover_killed_while_it_writes_loses_nothing_and_lands_nothing_twice(
        largest: Path, tmp_path: Path, assert_root_verifies: Any) -> None:
    alone = fixed_clock_runner(tmp_path / "alone", largest, split_from_bytes=0, max_delta_bytes=65536)
    land_until_done(alone)
    runner = fixed_clock_runner(tmp_path / "proved", largest, split_from_bytes=1, max_delta_bytes=65536)
    env = {**os.environ, "ASZ_FAULT": "kill:temp-write:30"}  # deep in the first source, blocks out
    killed = run_cli_forked("run", "--config", str(runner.config_path), env=env, cwd=REPO, timeout=300)
    assert killed.returncode == -9, killed.stderr.decode()[-2000:]
    land_until_done(runner)
    assert_root_verifies(runner.root)
    for session in SESSIONS.values():
        assert landed_records(runner.root, session) == landed_records(alone.root, session)


@pytest.mark.slow
def test_a_generated_200_mb_transcript_lands_the_same_bytes_with_a_prover(
        generated_200_mb: Path, tmp_path: Path, taken: list[bool]) -> None:
    _same_root(generated_200_mb, tmp_path)
    assert sum(taken) > len(taken) // 2
