"""Group commit: several sessions' files made durable together, then installed, then their
cursors moved, with what a landing reads back consistent meanwhile and a failure confined to the
session it hits. Kills at each step are in ``test_root.py`` (every ``faults.STEPS``) and
``tests/faults``."""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from asz_core import land
from asz_core.root import durable, faults, group
from asz_core.root.cursors import AppendCursor
from asz_core.root.durable import DEFERRED
from asz_core.root.group import CommitGroup
from asz_core.root.storage import StorageRoot
from asz_core.tally import SessionOutcome
from asz_core.testing import PassRunner
from tests.helpers import count_syncs, jsonl_config, records_of, run_cli, run_cli_forked, temp_files

pytestmark = pytest.mark.skipif(not durable.can_sync_filesystem(), reason="group commit needs syncfs (Linux)")


def _source(tmp_path: Path, sessions: int, lines: int = 30, pad: int = 300) -> Path:
    src = tmp_path / "src"
    src.mkdir(exist_ok=True)
    for s in range(1, sessions + 1):
        (src / f"s{s}.jsonl").write_bytes(b"".join(b'{"n":%d,"pad":"%s"}\n' % (i, b"p" * pad)
                                                   for i in range(1, lines + 1)))
    return src


def _cursor(root: Path, session: str) -> AppendCursor | None:
    cursors = sorted((root / session / "streams").glob("*/*.cursor"))
    return AppendCursor.load(cursors[0]) if cursors else None


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many ``fsync`` and ``syncfs`` the pass makes (in this process)."""
    return count_syncs(monkeypatch, group)


def test_a_group_of_sessions_is_made_durable_with_two_syncfs_and_no_fsync_per_session(
        asz_pass: PassRunner, tmp_path: Path, counted: dict[str, int], monkeypatch: pytest.MonkeyPatch,
        assert_root_verifies: Callable[[Path], None]) -> None:
    monkeypatch.setattr(group, "GROUP_SESSIONS", 4)
    asz_pass.configure(**jsonl_config(_source(tmp_path, sessions=10)))
    summary = asz_pass.run()
    assert not summary.failed and summary.totals.landed == 10
    # three groups (4, 4, 2), two syncfs each; the only fsyncs left are once a pass, whatever
    # the number of sessions: each owed log's ``start``, ``end`` and its new name (``.parse-owed``,
    # ``.metrics-owed``: 6), and the derivation's settling of its log (the file, the root: 2)
    assert counted["syncfs"] == 6
    assert counted["fsync"] == 8
    for s in range(1, 11):
        assert [r.ord for _, r in records_of(asz_pass.root, f"s{s}")] == list(range(1, 31))
        cursor = _cursor(asz_pass.root, f"s{s}")
        assert cursor is not None and cursor.ord == 30
    assert not DEFERRED and temp_files(asz_pass.root) == []
    assert_root_verifies(asz_pass.root)


def test_a_cursor_read_back_before_the_commit_reads_as_it_will_be_and_is_on_disk_only_after(
        tmp_path: Path) -> None:
    root = StorageRoot(tmp_path / "root")
    root.ensure()
    commit = CommitGroup(root.path)
    path = root.path / "s1" / "streams" / "main" / "transcript.cursor"
    with root.open_session("s1", group=commit) as session:
        durable.make_dirs(session.path("streams/main"))  # as a writer makes it: through the root's own calls
        session.save_state(path, AppendCursor(state="active", offset=7, ord=3).encode())
        seen = AppendCursor.load(path)
        assert seen is not None and (seen.offset, seen.ord) == (7, 3)
        assert not path.exists()
    assert not path.exists()  # held by the group until it commits
    commit.close()
    on_disk = AppendCursor.read(path)
    assert on_disk is not None and on_disk.offset == 7 and not DEFERRED
    assert temp_files(root.path) == []


def test_a_session_whose_install_fails_loses_only_its_own_steps(
        asz_pass: PassRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        assert_root_verifies: Callable[[Path], None]) -> None:
    # s1 lands four files (30 lines of ~320 bytes, 4 KiB each); its third install fails
    asz_pass.configure(**jsonl_config(_source(tmp_path, sessions=2), max_delta_bytes=4096))
    monkeypatch.setattr(faults, "_spec", "enospc:install:3")
    monkeypatch.setattr(faults, "_counts", {})
    summary = asz_pass.run()
    assert summary.failed and [e.session for e in summary.errors] == ["s1"]
    assert "no space left" in summary.errors[0].message
    assert len(list((asz_pass.root / "s1/streams/main").glob("*.sd"))) == 2
    assert _cursor(asz_pass.root, "s1") is None  # the files landed before the failure lead it
    s2 = _cursor(asz_pass.root, "s2")
    assert s2 is not None and s2.ord == 30
    assert temp_files(asz_pass.root) == [] and not DEFERRED
    monkeypatch.setattr(faults, "_spec", "")
    assert not asz_pass.run().failed
    for session in ("s1", "s2"):
        assert [r.ord for _, r in records_of(asz_pass.root, session)] == list(range(1, 31))
    assert_root_verifies(asz_pass.root)


def test_a_syncfs_that_fails_fails_every_session_of_its_group_and_leaves_no_file(
        asz_pass: PassRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        assert_root_verifies: Callable[[Path], None]) -> None:
    asz_pass.configure(**jsonl_config(_source(tmp_path, sessions=3)))
    real = durable.sync_filesystem

    def failing(fd: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(group, "sync_filesystem", failing)
    summary = asz_pass.run()
    assert summary.failed and sorted(e.session for e in summary.errors) == ["s1", "s2", "s3"]
    assert all("Input/output error" in e.message for e in summary.errors)
    assert records_of(asz_pass.root, "s1") == [] and temp_files(asz_pass.root) == [] and not DEFERRED
    monkeypatch.setattr(group, "sync_filesystem", real)
    assert not asz_pass.run().failed
    for session in ("s1", "s2", "s3"):
        assert [r.ord for _, r in records_of(asz_pass.root, session)] == list(range(1, 31))
    assert_root_verifies(asz_pass.root)


def test_the_outcomes_of_a_group_are_merged_only_once_its_files_are_in_place(
        asz_pass: PassRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(group, "GROUP_SESSIONS", 2)
    asz_pass.configure(**jsonl_config(_source(tmp_path, sessions=5)))
    missing: list[Path] = []
    real = land.land_claims

    def watching(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        for outcome in real(*args, **kwargs):  # type: ignore[arg-type]
            missing.extend(f.path for f in outcome.landed if not f.path.is_file())
            yield outcome

    monkeypatch.setattr("asz_core.pipeline.land_claims", watching)
    assert asz_pass.run().totals.landed == 5
    assert missing == []


#: a group's sessions, and the sessions of the passes killed below: a group and eight more
_GROUP = group.GROUP_SESSIONS
_SESSIONS = _GROUP + 8
#: the third session of the second group
_THIRD = _GROUP + 3

#: kills with two groups in flight, :data:`_SESSIONS` sessions, each one file of six records in
#: one directory with one cursor. The first occurrence of a commit's step is the first group's,
#: made behind the second group's landing (at least its first session landed); the
#: :data:`_THIRD` is the second group's own (the first has finished), or, for the steps a landing
#: makes, the third session of the second group's (the first group's steps may still be in
#: flight). The default lane kills at an install of each; --slow at every step (each kill is two
#: passes).
_IN_FLIGHT = [pytest.param(step, nth, marks=() if step == "install" else pytest.mark.slow, id=f"{step}-{nth}")
              for step in ("temp-fsync", "install", "dir-fsync", "state-write", "state-rename", "group-release")
              for nth in (1, _THIRD)] + [
    pytest.param("temp-write", 6 * (_THIRD - 1) + 1, marks=pytest.mark.slow, id="temp-write-second-groups-third"),
    pytest.param("temp-readonly", _THIRD, marks=pytest.mark.slow, id=f"temp-readonly-{_THIRD}")]
#: the steps only a commit makes: their :data:`_THIRD` is the second group's, after the first
#: has finished
_COMMIT_STEPS = {"temp-fsync", "install", "dir-fsync", "state-write", "state-rename", "group-release"}


@pytest.mark.parametrize(("step", "nth"), _IN_FLIGHT)
def test_killed_with_a_group_committing_behind_the_next_a_pass_loses_nothing_and_lands_the_rest_once(
        step: str, nth: int, tmp_path: Path, assert_root_verifies: Callable[[Path], None]) -> None:
    runner = PassRunner(tmp_path, tmp_path / "root")
    config = runner.configure(**jsonl_config(_source(tmp_path, sessions=_SESSIONS, lines=6, pad=50)))
    # in the pass's own process, whose full groups commit behind the next (a worker's commit at once)
    killed = run_cli_forked("run", "--config", str(config),
                            env={**os.environ, "ASZ_FAULT": f"kill:{step}:{nth}", "ASZ_WORKERS": "1"})
    assert killed.returncode == -9, killed.stderr.decode()
    kept = {path: path.read_bytes() for path in runner.root.rglob("*.sd") if not path.name.startswith(".")}
    if step in _COMMIT_STEPS and nth == _THIRD:
        whole = [n for n in range(1, _SESSIONS + 1) if len(records_of(runner.root, f"s{n}")) == 6]
        assert len(whole) >= _GROUP  # the first group had finished before the second's steps began
    finished = run_cli("run", "--config", str(config))  # the pass after the kill: no process of its own needed
    assert finished.returncode == 0, finished.stderr
    for s in range(1, _SESSIONS + 1):
        assert [r.ord for _, r in records_of(runner.root, f"s{s}")] == list(range(1, 7)), f"s{s}"
    assert {path: path.read_bytes() for path in kept} == kept  # nothing landed before the kill changed
    assert temp_files(runner.root) == []
    assert_root_verifies(runner.root)


def test_a_full_groups_syncfs_waits_in_a_thread_while_the_next_group_lands(
        asz_pass: PassRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        assert_root_verifies: Callable[[Path], None]) -> None:
    monkeypatch.setattr(group, "GROUP_SESSIONS", 2)
    asz_pass.configure(**jsonl_config(_source(tmp_path, sessions=3)))
    third_landed = threading.Event()
    waited: list[bool] = []
    real_sync, real_land = durable.sync_filesystem, land.land_claim

    def syncfs(fd: int) -> None:
        if not waited:  # the first group's first: it returns only once s3 has landed
            waited.append(third_landed.wait(timeout=5))
        real_sync(fd)

    def landing(*args: Any, **kwargs: Any) -> SessionOutcome:
        outcome = real_land(*args, **kwargs)
        if outcome.session == "s3":
            third_landed.set()
        return outcome

    monkeypatch.setattr(group, "sync_filesystem", syncfs)
    monkeypatch.setattr(land, "land_claim", landing)
    summary = asz_pass.run()
    assert waited == [True]  # made in the landing's own thread, it would have waited in vain
    assert not summary.failed and summary.totals.landed == 3
    assert not DEFERRED and temp_files(asz_pass.root) == []
    assert_root_verifies(asz_pass.root)


def test_each_group_in_flight_syncs_through_a_descriptor_of_its_own_and_a_failure_stays_in_its_group(
        asz_pass: PassRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        assert_root_verifies: Callable[[Path], None]) -> None:
    monkeypatch.setattr(group, "GROUP_SESSIONS", 2)
    asz_pass.configure(**jsonl_config(_source(tmp_path, sessions=4)))
    real = durable.sync_filesystem
    calls: list[int] = []

    def syncfs(fd: int) -> None:  # the first group's files fail to reach the disk
        calls.append(fd)
        if len(calls) == 1:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real(fd)

    monkeypatch.setattr(group, "sync_filesystem", syncfs)
    summary = asz_pass.run()
    # the first group stops at its first syncfs; the second makes both of its own, through the
    # descriptor opened for it while the first was still in flight
    assert len(calls) == 3 and calls[1] == calls[2] != calls[0]
    assert sorted(e.session for e in summary.errors) == ["s1", "s2"]
    assert records_of(asz_pass.root, "s1") == [] and len(records_of(asz_pass.root, "s3")) == 30
    assert temp_files(asz_pass.root) == [] and not DEFERRED
    monkeypatch.setattr(group, "sync_filesystem", real)
    assert not asz_pass.run().failed
    for session in ("s1", "s2", "s3", "s4"):
        assert [r.ord for _, r in records_of(asz_pass.root, session)] == list(range(1, 31))
    assert_root_verifies(asz_pass.root)


@pytest.mark.parametrize(("release", "grouped"),
                         [("5.4.0-150-generic", False), ("5.8.0", True), ("6.1.0-18-amd64", True)])
def test_a_kernel_whose_syncfs_hides_failed_writes_fsyncs_each_file_instead(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, release: str, grouped: bool) -> None:
    monkeypatch.setattr(os, "uname", lambda: os.uname_result(("Linux", "h", release, "#1", "x86_64")))
    monkeypatch.setattr(durable, "_syncfs_fn", durable._UNLOADED)
    assert durable.can_sync_filesystem() is grouped
    assert (CommitGroup.open(tmp_path, dry_run=False) is not None) is grouped
    monkeypatch.setattr(durable, "_syncfs_fn", durable._UNLOADED)


def test_where_there_is_no_syncfs_each_session_fsyncs_its_own_and_lands_the_same_records(
        asz_pass: PassRunner, tmp_path: Path, counted: dict[str, int], monkeypatch: pytest.MonkeyPatch,
        assert_root_verifies: Callable[[Path], None]) -> None:
    monkeypatch.setattr(durable, "_syncfs_fn", None)  # macOS, or Linux before 5.8
    asz_pass.configure(**jsonl_config(_source(tmp_path, sessions=3)))
    summary = asz_pass.run()
    assert not summary.failed and summary.totals.landed == 3
    assert counted["syncfs"] == 0 and counted["fsync"] >= 3 * 3  # a file, its directory, its cursor
    for s in range(1, 4):
        assert [r.ord for _, r in records_of(asz_pass.root, f"s{s}")] == list(range(1, 31))
        cursor = _cursor(asz_pass.root, f"s{s}")
        assert cursor is not None and cursor.ord == 30
    assert not DEFERRED and temp_files(asz_pass.root) == []
    assert_root_verifies(asz_pass.root)
