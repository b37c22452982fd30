"""Sessions landed by worker processes land exactly what one process lands, byte for byte, and
the pass announces, counts and reports all of it as one process does."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from asz_core import hookimpl, land
from asz_core.context import PassContext
from asz_core.root.landing import LandedFile
from asz_core.tally import SessionOutcome
from asz_core.testing import PassRunner

pytestmark = pytest.mark.corpus

CLOCK = 1_780_000_000_123_456_789


class Observer:
    """Counts the files announced to observers, in the pass's own process."""

    def __init__(self) -> None:
        self.landed: list[str] = []

    @hookimpl
    def asz_file_landed(self, ctx: PassContext, adapter: str, landed: LandedFile) -> None:
        self.landed.append(landed.relpath)


def _tree(root: Path) -> dict[str, str]:
    """Every landed file and cursor by path, with the digest of its bytes."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and p.suffix in (".sd", ".cursor")}


def _run(tmp_path: Path, projects: Path, name: str, workers: int | None,
         monkeypatch: pytest.MonkeyPatch) -> tuple[PassRunner, Any, Observer]:
    monkeypatch.delenv("ASZ_WORKERS", raising=False)
    runner = PassRunner(tmp_path / name, tmp_path / name / "root")
    (tmp_path / name).mkdir()
    observer = Observer()
    runner.host.pm.register(observer, name=f"observer-{name}")
    runner.clock = lambda: CLOCK
    collector = {"workers": workers} if workers else {"workers": 1}
    runner.configure(adapters=[{"name": "claude-code-local", "source_root": str(projects), "exclude": [],
                                "collector": {**collector, "max_delta_bytes": 262144}}])
    return runner, runner.run(), observer


def _session_bytes(projects: Path, session: str) -> int:
    """The bytes of a session's transcript and of the files beside it (its subagents)."""
    files = [*projects.glob(f"*/{session}.jsonl"), *projects.glob(f"*/{session}/**/*")]
    return sum(f.stat().st_size for f in files if f.is_file())


@contextlib.contextmanager
def _stuck_after(seconds: int, what: str) -> Iterator[None]:
    """Fail with ``what`` rather than hang, should the pass inside wait for ever."""

    def stuck(signum: int, frame: object) -> None:
        raise TimeoutError(what)

    previous = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# The default lane shows each rule on fifteen sessions (``small_corpus``); ``--slow`` (CI) compares
# the whole corpus too, two passes of which cost seconds of CPU.
@pytest.mark.parametrize("whole", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["small", "corpus"])
def test_workers_land_what_one_process_lands(whole: bool, request: pytest.FixtureRequest, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch,
                                              assert_root_verifies: Callable[[Path], None]) -> None:
    corpus: Path = request.getfixturevalue("corpus" if whole else "small_corpus")
    projects = tmp_path / "projects"
    shutil.copytree(corpus / "claude-code" / "projects", projects)
    sessions = len(list(projects.glob("*/*.jsonl")))
    one, serial, seen_one = _run(tmp_path, projects, "one", None, monkeypatch)
    three, parallel, seen_three = _run(tmp_path, projects, "three", 3, monkeypatch)
    assert not parallel.failed and parallel.totals.landed > sessions
    assert parallel.totals.as_dict() == serial.totals.as_dict()
    assert _tree(three.root) == _tree(one.root)
    assert seen_three.landed == seen_one.landed and len(seen_three.landed) == parallel.totals.landed  # claim order
    assert sorted(three.reporter.warnings) == sorted(one.reporter.warnings)
    assert_root_verifies(three.root)
    # the settled table the workers reported lets the next pass open nothing
    again = three.run()
    assert again.totals.landed == 0 and again.totals.sources == parallel.totals.sources


def test_a_session_failing_or_a_worker_dying_fails_the_pass_and_the_next_pass_completes(
        tmp_path: Path, small_corpus: Path, monkeypatch: pytest.MonkeyPatch,
        assert_root_verifies: Callable[[Path], None]) -> None:
    projects = tmp_path / "projects"
    shutil.copytree(small_corpus / "claude-code" / "projects", projects)
    sessions = sorted(p.stem for p in projects.glob("*/*.jsonl"))
    # claims go to the workers largest first: the failure is sent first and reported before
    # the death, sent last, can take its worker's unreported sessions with it
    by_size = sorted(sessions, key=lambda session: _session_bytes(projects, session))
    failing, dying = by_size[-1], by_size[0]
    real = land.land_claim  # GroupLanding calls it by its module's name

    def land_claim(host: Any, actx: Any, claim: Any, group: Any = None) -> SessionOutcome:
        if claim.session == failing:
            failed = SessionOutcome(claim.session)
            failed.error("a failure inside one session")
            return failed
        if claim.session == dying:
            os._exit(9)  # the worker is killed mid-pass
        return real(host, actx, claim, group)

    monkeypatch.setattr(land, "land_claim", land_claim)  # inherited by the forked workers
    runner, summary, _ = _run(tmp_path, projects, "w", 2, monkeypatch)
    assert summary.failed
    messages = [str(e) for e in summary.errors]
    assert any(failing in m and "a failure inside one session" in m for m in messages)
    assert any(dying in m and "worker process died" in m for m in messages)
    monkeypatch.setattr(land, "land_claim", real)
    again = runner.run()
    assert not again.failed and again.totals.landed > 0
    assert {p.name for p in runner.root.iterdir() if p.is_dir() and not p.name.startswith("_")} == set(sessions)
    assert_root_verifies(runner.root)


def test_workers_start_the_largest_sessions_first_and_announce_them_in_claim_order(
        tmp_path: Path, small_corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    projects = small_corpus / "claude-code" / "projects"
    started = tmp_path / "started"
    real = land.land_claim

    def land_claim(host: Any, actx: Any, claim: Any, group: Any = None) -> SessionOutcome:  # in each worker
        with started.open("a", encoding="utf-8") as out:
            out.write(f"{os.getpid()} {claim.session}\n")
        return real(host, actx, claim, group)

    monkeypatch.setattr(land, "land_claim", land_claim)
    _, serial, seen_one = _run(tmp_path, projects, "one", None, monkeypatch)
    in_claim_order = [line.split()[1] for line in started.read_text("utf-8").splitlines()]
    started.unlink()
    _, parallel, seen_two = _run(tmp_path, projects, "two", 2, monkeypatch)
    assert not parallel.failed and parallel.totals.as_dict() == serial.totals.as_dict()
    largest = sorted(in_claim_order, key=lambda session: -_session_bytes(projects, session))[:2]
    assert in_claim_order[:2] != largest  # else this corpus shows nothing
    # each worker's first session is one of the two largest (which of the two starts first, and
    # whether a worker starts its second before the other its first, is the scheduler's)
    first: dict[str, str] = {}
    for line in started.read_text("utf-8").splitlines():
        pid, session = line.split()
        first.setdefault(pid, session)
    assert sorted(first.values()) == sorted(largest)
    assert seen_two.landed == seen_one.landed


def test_a_worker_commits_one_group_across_its_tasks_not_one_per_task(
        tmp_path: Path, small_corpus: Path, monkeypatch: pytest.MonkeyPatch,
        assert_root_verifies: Callable[[Path], None]) -> None:
    from asz_core import workers
    from asz_core.root import durable, group

    if not durable.can_sync_filesystem():
        pytest.skip("group commit needs syncfs (Linux)")
    projects = small_corpus / "claude-code" / "projects"
    sessions = len(list(projects.glob("*/*.jsonl")))
    calls = tmp_path / "syncfs-calls"
    real = durable.sync_filesystem

    def counted(fd: int) -> None:  # in each worker too: they are forks of this process
        with calls.open("ab") as out:
            out.write(b".")
        real(fd)

    monkeypatch.setattr(group, "sync_filesystem", counted)
    monkeypatch.setattr(workers, "_MOST_PER_TASK", 1)  # every claim a task of its own
    runner, summary, _ = _run(tmp_path, projects, "w", 2, monkeypatch)
    assert not summary.failed and summary.totals.landed > 0
    commits = calls.stat().st_size // 2  # two syncfs a commit
    # a group per task would commit once per session; each worker commits when it has nothing
    # left to land (and, in a longer pass, each time its group is full)
    assert 2 <= commits <= sessions // 2, (commits, sessions)
    assert_root_verifies(runner.root)


def test_workers_whose_groups_commit_at_every_session_land_every_claim(
        tmp_path: Path, small_corpus: Path, monkeypatch: pytest.MonkeyPatch,
        assert_root_verifies: Callable[[Path], None]) -> None:
    from asz_core import workers
    from asz_core.root import group

    # a worker reports every outcome before it reports the task they came in: the pass must
    # still hear that report, or it waits for ever on workers that have nothing left to send
    monkeypatch.setattr(group, "GROUP_SESSIONS", 1)
    monkeypatch.setattr(workers, "_MOST_PER_TASK", 1)

    def late() -> float:  # each task's report comes well after the outcomes it follows
        time.sleep(0.05)
        return time.process_time()

    monkeypatch.setattr(workers, "time", types.SimpleNamespace(process_time=late))

    with _stuck_after(120, "the pass waited for workers that had nothing to send"):
        runner, summary, _ = _run(tmp_path, small_corpus / "claude-code" / "projects", "w", 2, monkeypatch)
    assert not summary.failed and summary.totals.landed > len(list(runner.root.iterdir())) // 2
    assert_root_verifies(runner.root)


def test_a_worker_landing_a_long_session_does_not_leave_the_others_without_claims(
        tmp_path: Path, small_corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from asz_core import workers

    # small tasks and blocks, so that fifteen sessions are more than a worker may hold unreported
    monkeypatch.setattr(workers, "_MOST_PER_TASK", 1)
    monkeypatch.setattr(workers, "_MOST_PENDING", 4)
    monkeypatch.setattr(workers, "_ORDERED_AHEAD", 4)
    projects = small_corpus / "claude-code" / "projects"
    sessions = len(list(projects.glob("*/*.jsonl")))
    # the long session and the one claim its worker holds behind it wait; every other may start
    others = sessions - workers._TASKS_AHEAD
    assert others > workers._MOST_PENDING  # else this corpus shows nothing
    started, waited = tmp_path / "started", tmp_path / "waited"
    real = land.land_claim

    def land_claim(host: Any, actx: Any, claim: Any, group: Any = None) -> SessionOutcome:  # in each worker
        with started.open("a", encoding="utf-8") as out:
            out.write(f"{claim.session}\n")
        if started.read_text("utf-8").split()[0] == claim.session:  # the first to start is long
            deadline = time.monotonic() + 20
            while len(started.read_text("utf-8").split()) < 1 + others and time.monotonic() < deadline:
                time.sleep(0.01)
            waited.write_text(str(len(started.read_text("utf-8").split()) - 1), "utf-8")
        return real(host, actx, claim, group)

    monkeypatch.setattr(land, "land_claim", land_claim)
    _, summary, _ = _run(tmp_path, projects, "w", 2, monkeypatch)
    assert not summary.failed and summary.totals.landed > 0
    # outcomes merge in claim order, so those landed meanwhile wait behind the long one unmerged:
    # the pass had room for them, and went on sending claims to the other worker
    assert int(waited.read_text("utf-8")) == others


def test_workers_that_may_hold_fewer_claims_than_a_block_still_land_every_claim(
        tmp_path: Path, small_corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from asz_core import workers

    # a block (all fifteen sessions) is sent largest first: the next claim to merge may be the
    # last of them sent, after more claims than the workers may hold unreported
    monkeypatch.setattr(workers, "_MOST_PER_TASK", 1)
    monkeypatch.setattr(workers, "_MOST_PENDING", 1)

    with _stuck_after(60, "the pass stopped sending the claim it waited to merge"):
        _, summary, _ = _run(tmp_path, small_corpus / "claude-code" / "projects", "w", 2, monkeypatch)
    assert not summary.failed and summary.totals.landed > 0
