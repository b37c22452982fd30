"""Append cursors on real transcripts: growth lands exactly the new lines; changes are conflicts.

Each test copies a real session from the corpus to a temporary ``projects/`` and changes the copy.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from cc_helpers import copy_session

from asz_adapters.claude_code_provider.transcripts import Transcripts
from asz_core.cli.app import EXIT_FAILED, EXIT_OK, App
from asz_core.cli.main import main
from asz_core.context import PassSummary
from asz_core.root.storage import landed_files
from asz_core.sessiondata import Record, open_file
from asz_core.testing import PassRunner

pytestmark = pytest.mark.corpus

# 2.1.143, a foreground subagent run (26 KB): small enough to copy for every test.
SLUG = ("-Users-ingo-projects-irrlicht--claude-worktrees-268--build-refresh-claudecode-foreground-subagent"
        "-20260517T222904-cwd")
SESSION = "2bbb4a67-aabb-4d52-a003-2d5360d2e3ed"
# 2.1.39 with two subagents (a Task agent and a compaction agent).
SP_SLUG = "-home-marco-projects-spotter-worktrees-spotter-4te"
SP_SESSION = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"


def _records(root: Path, session: str, stream: str = "main") -> list[Record]:
    out: list[Record] = []
    for _, path in sorted(landed_files(root / session)):
        if path.parent.name == stream and path.name.startswith("transcript-"):
            out.extend(open_file(path))
    return out


def _assert_exact(records: list[Record], source: Path) -> None:
    data = source.read_bytes()
    assert [r.ord for r in records] == list(range(1, data.count(b"\n") + 1))
    for r in records:
        assert hashlib.sha256(data[r.off:r.off + r.bytes]).hexdigest()[:12] == r.sha


def _cli_run(runner: PassRunner) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(["run", "--config", str(runner.config_path)], App(out=out, err=err))
    return status, out.getvalue() + err.getvalue()


@pytest.fixture
def projects(tmp_path: Path, cc_projects: Path) -> Path:
    target = tmp_path / "projects"
    copy_session(cc_projects, SLUG, SESSION, target)
    return target


def test_appended_lines_land_exactly_once_and_a_partial_line_waits(
        projects: Path, cc_projects: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner,
        assert_root_verifies: Callable[[Path], None]) -> None:
    source = projects / SLUG / f"{SESSION}.jsonl"
    first = run_local(projects)
    before = source.read_bytes().count(b"\n")
    assert first.totals.records == before
    # Three real lines of another session of the same version, appended as Claude Code would.
    other = cc_projects / ("-Users-ingo-projects-irrlicht--claude-worktrees-268--build-refresh-claudecode-session-end"
                           "-20260517T214305-cwd") / "5fcdc211-0552-4039-b849-53691549b3ba.jsonl"
    extra = other.read_bytes().splitlines(keepends=True)
    one, two, three = extra[3], extra[4], extra[5]
    cut = len(three) // 2
    with open(source, "ab") as f:
        f.write(one + two + three[:cut])
    second = asz_pass.run()
    assert (second.totals.records, second.totals.landed, second.failed) == (2, 1, False)
    assert second.totals.pending == 0  # a line still being written waits; it is not pending
    with open(source, "ab") as f:
        f.write(three[cut:])
    third = asz_pass.run()
    assert (third.totals.records, third.totals.landed) == (1, 1)
    records = _records(asz_pass.root, SESSION)
    assert [r.ord for r in records[before:]] == [before + 1, before + 2, before + 3]
    _assert_exact(records, source)
    assert asz_pass.run().totals.records == 0
    assert_root_verifies(asz_pass.root)


def test_truncating_a_landed_file_is_a_sticky_conflict_until_it_is_restored(
        projects: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner,
        assert_root_verifies: Callable[[Path], None]) -> None:
    source = projects / SLUG / f"{SESSION}.jsonl"
    run_local(projects)
    original = source.read_bytes()
    source.write_bytes(original[: len(original) // 2])
    status, output = _cli_run(asz_pass)
    assert status == EXIT_FAILED and "conflicts=1" in output and "truncated" in output
    assert asz_pass.run().totals.conflicts == 1  # sticky: every pass counts it
    source.write_bytes(original + b"")  # the landed bytes are back
    status, output = _cli_run(asz_pass)
    assert status == EXIT_OK and "conflicts=0" in output and "landed=0" in output
    assert_root_verifies(asz_pass.root)


def test_rewriting_a_landed_line_in_place_is_a_conflict_until_it_is_restored(
        projects: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner) -> None:
    source = projects / SLUG / f"{SESSION}.jsonl"
    run_local(projects)
    original = source.read_bytes()
    at = original.index(b'"permissionMode":"auto"') + len(b'"permissionMode":"')
    changed = original[:at] + b"plan" + original[at + 4:]
    assert len(changed) == len(original)
    source.write_bytes(changed + b'{"type":"mode","mode":"normal"}\n')  # even with new lines after it
    summary = asz_pass.run()
    assert summary.failed and summary.totals.conflicts == 1 and summary.totals.records == 0
    assert any("rewritten" in w for w in asz_pass.reporter.warnings)
    source.write_bytes(original + b'{"type":"mode","mode":"normal"}\n')
    summary = asz_pass.run()
    assert not summary.failed and summary.totals.records == 1  # cleared, and the new line lands


def test_a_new_inode_holding_the_same_bytes_is_not_a_conflict(
        projects: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner) -> None:
    source = projects / SLUG / f"{SESSION}.jsonl"
    run_local(projects)
    replacement = source.with_name("replacement")
    replacement.write_bytes(source.read_bytes() + b'{"type":"mode","mode":"normal"}\n')
    inode = os.stat(source).st_ino
    os.replace(replacement, source)
    assert os.stat(source).st_ino != inode
    summary = asz_pass.run()
    assert not summary.failed and summary.totals.records == 1


def test_a_deleted_child_is_gone_and_what_landed_stays(
        tmp_path: Path, cc_projects: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner,
        assert_root_verifies: Callable[[Path], None]) -> None:
    projects = tmp_path / "projects"
    copy_session(cc_projects, SP_SLUG, SP_SESSION, projects)
    first = run_local(projects)
    assert first.totals.sources == 3
    files_before = sorted(p for _, p in landed_files(asz_pass.root / SP_SESSION))
    (projects / SP_SLUG / SP_SESSION / "subagents" / "agent-aac57f5.jsonl").unlink()
    second = asz_pass.run()
    assert (second.totals.gone, second.totals.sources, second.failed) == (1, 2, False)
    assert sorted(p for _, p in landed_files(asz_pass.root / SP_SESSION)) == files_before
    cursor = (asz_pass.root / SP_SESSION / "streams" / "aac57f5" / "transcript.cursor").read_text()
    assert "state source_gone" in cursor
    assert_root_verifies(asz_pass.root)


def test_a_session_pruned_whole_is_marked_gone_and_keeps_what_landed(
        tmp_path: Path, cc_projects: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner,
        assert_root_verifies: Callable[[Path], None]) -> None:
    projects = tmp_path / "projects"
    copy_session(cc_projects, SP_SLUG, SP_SESSION, projects)
    copy_session(cc_projects, SLUG, SESSION, projects)
    run_local(projects)
    files_before = sorted(p for _, p in landed_files(asz_pass.root / SP_SESSION))
    shutil.rmtree(projects / SP_SLUG)  # Claude Code's sweep: the transcript and its directory
    second = asz_pass.run()
    # both sessions are claimed: the one still there, and the pruned one, to mark its sources gone
    assert (second.totals.gone, second.totals.sessions, second.failed) == (3, 2, False)
    cursors = sorted((asz_pass.root / SP_SESSION).glob("streams/*/transcript.cursor"))
    assert len(cursors) == 3 and all("state source_gone" in c.read_text() for c in cursors)
    assert sorted(p for _, p in landed_files(asz_pass.root / SP_SESSION)) == files_before
    assert asz_pass.run().totals.gone == 3  # counted every pass, as the collector counts it
    assert_root_verifies(asz_pass.root)


def test_a_session_copied_under_two_project_directories_is_one_session(
        tmp_path: Path, cc_projects: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner,
        assert_root_verifies: Callable[[Path], None]) -> None:
    projects = tmp_path / "projects"
    copy_session(cc_projects, SP_SLUG, SP_SESSION, projects)
    backup = projects / "-home-marco-zz-backup"
    shutil.copytree(projects / SP_SLUG, backup)
    summary = run_local(projects)
    assert (summary.totals.sessions, summary.totals.sources, summary.failed) == (1, 3, False)
    assert [p.name for p in asz_pass.root.iterdir() if p.is_dir()] == [SP_SESSION]
    _assert_exact(_records(asz_pass.root, SP_SESSION), projects / SP_SLUG / f"{SP_SESSION}.jsonl")
    # equal: the first by name; its reader begins the session's index with it
    assert Transcripts(asz_pass.root).directories(SP_SESSION) == {SP_SLUG}
    assert asz_pass.run().totals.records == 0
    # Claude Code goes on writing to the copy: it holds more now, so it is followed from where
    # the landed bytes end (its tail is theirs), and its directory is indexed too.
    with open(backup / f"{SP_SESSION}.jsonl", "ab") as f:
        f.write(b'{"type":"mode","mode":"normal","sessionId":"ae4a77f8-aedd-4bc1-888f-c94edc91af04"}\n')
    grown = asz_pass.run()
    assert (grown.totals.records, grown.failed) == (1, False)
    _assert_exact(_records(asz_pass.root, SP_SESSION), backup / f"{SP_SESSION}.jsonl")
    assert Transcripts(asz_pass.root).directories(SP_SESSION) == {SP_SLUG, "-home-marco-zz-backup"}
    assert_root_verifies(asz_pass.root)


def test_a_larger_copy_that_does_not_continue_what_landed_is_a_conflict(
        tmp_path: Path, cc_projects: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner) -> None:
    projects = tmp_path / "projects"
    copy_session(cc_projects, SLUG, SESSION, projects)
    run_local(projects)
    other = projects / "-Users-ingo-elsewhere"
    other.mkdir()
    original = (projects / SLUG / f"{SESSION}.jsonl").read_bytes()
    (other / f"{SESSION}.jsonl").write_bytes(original.replace(b'"auto"', b'"plan"', 1) + b"{}\n")
    summary = asz_pass.run()
    assert summary.failed and summary.totals.conflicts == 1 and summary.totals.records == 0


def test_small_files_many_windows_then_pending_and_too_large_lines_reduced(
        tmp_path: Path, cc_projects: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner,
        assert_root_verifies: Callable[[Path], None]) -> None:
    # [IR-113]: a real 2.1.98 transcript of 1.1 MB, with lines larger than a 4 KiB file.
    slug, session = "-Users-ingo-projects-irrlicht--claude-worktrees-113", "2f3afc56-121b-4178-a4b7-d39e7f6f48ca"
    projects = tmp_path / "projects"
    copy_session(cc_projects, slug, session, projects)
    first = run_local(projects, collector={"max_delta_bytes": 4096})
    assert first.failed and (first.totals.pending, first.totals.landed) == (1, 65)
    passes = 1
    while asz_pass.run().totals.pending:
        passes += 1
    assert passes > 1
    records = _records(asz_pass.root, session)
    _assert_exact(records, projects / slug / f"{session}.jsonl")
    reduced = [p for r in records for p in r.parts if p.state in ("truncated", "too_large")]
    assert reduced and all(p.sha256 for p in reduced)  # what a line too large lost, it states
    assert asz_pass.run().totals.landed == 0
    assert_root_verifies(asz_pass.root)
