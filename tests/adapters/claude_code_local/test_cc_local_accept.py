"""The way out of a conflict on a real transcript: a person accepts the rewrite as a new version.

Each test copies a real session from the corpus, lands it, rewrites the copy behind its cursor
(a conflict), and accepts it with ``asz-pipeline conflicts --accept``; the next pass lands the
rewritten file whole in ``streams/main.v2``, and nothing landed before changes.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cc_helpers import copy_session

from asz_core.cli.app import EXIT_CONFIG, EXIT_FAILED, EXIT_OK, App
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
CURSOR = f"{SESSION}/streams/main/transcript.cursor"
# a line of another session of the same version, appended as Claude Code would append it
OTHER = ("-Users-ingo-projects-irrlicht--claude-worktrees-268--build-refresh-claudecode-session-end"
         "-20260517T214305-cwd/5fcdc211-0552-4039-b849-53691549b3ba.jsonl")


@pytest.fixture
def projects(tmp_path: Path, cc_projects: Path) -> Path:
    target = tmp_path / "projects"
    copy_session(cc_projects, SLUG, SESSION, target)
    return target


def _cli(runner: PassRunner, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main([*args, "--config", str(runner.config_path)], App(out=out, err=err))
    return status, out.getvalue(), err.getvalue()


def _digests(root: Path) -> dict[str, str]:
    """Every landed file's SHA-256, by its path in the root."""
    return {path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for _, path in landed_files(root / SESSION)}


def _records(root: Path, stream: str) -> list[Record]:
    out: list[Record] = []
    for _, path in sorted(landed_files(root / SESSION)):
        if path.parent.name == stream and path.name.startswith("transcript-"):
            out.extend(open_file(path))
    return out


def _rewrite(source: Path, cc_projects: Path, lines: int = 1) -> None:
    """Rewrite a landed line in place (same length) and append ``lines`` new ones: a conflict."""
    data = source.read_bytes()
    at = data.index(b'"permissionMode":"auto"') + len(b'"permissionMode":"')
    extra = (cc_projects / OTHER).read_bytes().splitlines(keepends=True)[3:3 + lines]
    source.write_bytes(data[:at] + b"plan" + data[at + 4:] + b"".join(extra))


def _conflicted(projects: Path, cc_projects: Path, run_local: Callable[..., PassSummary],
                asz_pass: PassRunner) -> Path:
    source = projects / SLUG / f"{SESSION}.jsonl"
    run_local(projects)
    _rewrite(source, cc_projects)
    assert asz_pass.run().totals.conflicts == 1
    return source


def test_an_accepted_rewrite_lands_whole_as_a_new_version_and_every_landed_byte_stays(
        projects: Path, cc_projects: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner,
        assert_root_verifies: Callable[[Path], None]) -> None:
    source = projects / SLUG / f"{SESSION}.jsonl"
    run_local(projects)
    old = _records(asz_pass.root, "main")
    _rewrite(source, cc_projects)
    status, _, hint = _cli(asz_pass, "run")
    assert status == EXIT_FAILED and "conflicts --accept" in hint
    before = _digests(asz_pass.root)

    status, said, _ = _cli(asz_pass, "conflicts", "--accept", CURSOR)
    assert status == EXIT_OK and "main.v2" in said
    cursor = (asz_pass.root / CURSOR).read_text()
    assert "state accepted" in cursor and "next_version 2" in cursor
    assert os.stat(asz_pass.root / CURSOR).st_mode & 0o077 == 0  # owner-only

    summary = asz_pass.run()
    assert not summary.failed and summary.totals.conflicts == 0
    version = _records(asz_pass.root, "main.v2")
    data = source.read_bytes()
    # the rewritten file, whole, from its first byte: ord 1, 2, 3 over its own lines and bytes
    assert summary.totals.records == len(version) == data.count(b"\n")
    assert [r.ord for r in version] == list(range(1, len(version) + 1)) and version[0].off == 0
    for r in version:
        assert hashlib.sha256(data[r.off:r.off + r.bytes]).hexdigest()[:12] == r.sha
    after = _digests(asz_pass.root)
    assert {k: after[k] for k in before} == before  # nothing landed before changed
    assert all(k.startswith(f"{SESSION}/streams/main.v2/") for k in set(after) - set(before))
    assert_root_verifies(asz_pass.root)  # verify and sdcheck

    # assembly reads the version as the main stream, skipping what landed before under its id
    assert _cli(asz_pass, "parse")[0] == EXIT_OK
    status, folded, _ = _cli(asz_pass, "conversation", SESSION, "--json")
    streams = json.loads(folded)["streams"]  # the asz.view document's streams
    ids = {r.id for r in old if r.id}
    added = [r for r in version if not r.id or r.id not in ids]
    assert status == EXIT_OK and [s["id"] for s in streams] == ["stream/main"]
    assert streams[0]["records"] == len(old) + len(added) and len(added) < len(version)
    assert _cli(asz_pass, "view", SESSION)[0] == EXIT_OK

    # the version is a stream like any: it grows from where it stopped
    with open(source, "ab") as f:
        f.write((cc_projects / OTHER).read_bytes().splitlines(keepends=True)[4])
    grown = asz_pass.run()
    assert (grown.totals.records, grown.totals.conflicts) == (1, 0)
    assert _records(asz_pass.root, "main.v2")[-1].ord == len(version) + 1
    assert_root_verifies(asz_pass.root)


def test_accepting_a_source_not_in_conflict_is_refused_and_nothing_is_written(
        projects: Path, cc_projects: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner) -> None:
    run_local(projects)
    cursor = asz_pass.root / CURSOR
    kept = cursor.read_bytes()
    status, _, err = _cli(asz_pass, "conflicts", "--accept", CURSOR)
    assert status == EXIT_CONFIG and "is not in conflict (state active)" in err
    status, _, err = _cli(asz_pass, "conflicts", "--accept", "no-such/source.jsonl")
    assert status == EXIT_CONFIG and "no source in conflict is named so" in err
    status, _, err = _cli(asz_pass, "conflicts", "--accept", f"{SESSION}/streams/../../x.cursor")
    assert status == EXIT_CONFIG and "Traceback" not in err
    assert cursor.read_bytes() == kept

    # one refused among several: none is accepted
    _rewrite(projects / SLUG / f"{SESSION}.jsonl", cc_projects)
    assert asz_pass.run().totals.conflicts == 1
    status, _, err = _cli(asz_pass, "conflicts", "--accept", CURSOR, f"{SESSION}/streams/main/meta.cursor")
    assert status == EXIT_CONFIG and "no such cursor" in err
    assert "state conflict" in cursor.read_text()
    # the source as listed names the same cursor; accepted once, a second accept is refused
    source = f"{SLUG}/{SESSION}.jsonl"
    status, _, err = _cli(asz_pass, "conflicts", f"--accept={source}")  # a slug starts with "-"
    assert status == EXIT_OK, err
    status, _, err = _cli(asz_pass, "conflicts", "--accept", CURSOR)
    assert status == EXIT_CONFIG and "state accepted" in err


def test_a_version_that_conflicts_again_is_accepted_as_the_next(
        projects: Path, cc_projects: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner,
        assert_root_verifies: Callable[[Path], None]) -> None:
    source = _conflicted(projects, cc_projects, run_local, asz_pass)
    assert _cli(asz_pass, "conflicts", "--accept", CURSOR)[0] == EXIT_OK
    asz_pass.run()
    source.write_bytes(source.read_bytes()[:100])  # cut short: version 2 is a conflict too
    assert asz_pass.run().totals.conflicts == 1
    status, listed, _ = _cli(asz_pass, "conflicts", "--json")
    (item,) = json.loads(listed)["conflicts"]
    assert status == EXIT_FAILED and item["cursor"] == f"{SESSION}/streams/main.v2/transcript.cursor"
    assert _cli(asz_pass, "conflicts", "--accept", item["cursor"])[0] == EXIT_OK
    source.write_bytes(b'{"type":"mode"}\n')
    summary = asz_pass.run()
    assert (summary.totals.conflicts, summary.totals.records) == (0, 1)
    assert [r.ord for r in _records(asz_pass.root, "main.v3")] == [1]
    assert_root_verifies(asz_pass.root)


def test_a_source_gone_after_its_accept_is_counted_gone_once(
        projects: Path, cc_projects: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner) -> None:
    source = _conflicted(projects, cc_projects, run_local, asz_pass)
    assert _cli(asz_pass, "conflicts", "--accept", CURSOR)[0] == EXIT_OK
    asz_pass.run()
    source.unlink()
    summary = asz_pass.run()
    assert (summary.totals.gone, summary.totals.conflicts) == (1, 0)
    assert "state source_gone" in (asz_pass.root / SESSION / "streams/main.v2/transcript.cursor").read_text()
    assert "state accepted" in (asz_pass.root / CURSOR).read_text()


# ---- a kill at each step ---------------------------------------------------------------------


def _killed(runner: PassRunner, fault: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ASZ_FAULT": fault}
    return subprocess.run([sys.executable, "-m", "asz_core.cli", *args, "--config", str(runner.config_path)],
                          env=env, capture_output=True, text=True, check=False)


def _steps(quick: str, *rest: str) -> list[Any]:
    """Landing steps to kill a process at: ``quick`` in the default lane, the rest with ``--slow``
    (each kill is a process and two passes, most of a second of CPU; ``tests/core/root/test_root.py``
    kills a pass at every step in the default lane)."""
    return [quick, *(pytest.param(step, marks=pytest.mark.slow) for step in rest)]


@pytest.mark.parametrize("step", _steps("state-rename", "state-write"))
def test_a_kill_while_accepting_leaves_the_conflict_for_the_accept_to_be_run_again(
        step: str, projects: Path, cc_projects: Path, run_local: Callable[..., PassSummary],
        asz_pass: PassRunner, assert_root_verifies: Callable[[Path], None]) -> None:
    _conflicted(projects, cc_projects, run_local, asz_pass)
    before = _digests(asz_pass.root)
    done = _killed(asz_pass, f"kill:{step}:1", "conflicts", "--accept", CURSOR)
    assert done.returncode == -9
    assert "state conflict" in (asz_pass.root / CURSOR).read_text()
    summary = asz_pass.run()  # still a conflict; what the killed accept left is swept
    assert (summary.totals.conflicts, summary.totals.records) == (1, 0)
    assert not list((asz_pass.root / SESSION / "streams" / "main").glob(".tmp-*"))
    assert _cli(asz_pass, "conflicts", "--accept", CURSOR)[0] == EXIT_OK
    assert asz_pass.run().totals.conflicts == 0
    assert {k: v for k, v in _digests(asz_pass.root).items() if k in before} == before
    assert_root_verifies(asz_pass.root)


@pytest.mark.parametrize("step", _steps("install", "temp-write", "temp-fsync", "temp-readonly", "dir-fsync",
                                         "state-write", "state-rename"))
def test_a_kill_while_the_accepted_version_lands_is_completed_by_the_next_pass(
        step: str, projects: Path, cc_projects: Path, run_local: Callable[..., PassSummary],
        asz_pass: PassRunner, assert_root_verifies: Callable[[Path], None]) -> None:
    source = _conflicted(projects, cc_projects, run_local, asz_pass)
    assert _cli(asz_pass, "conflicts", "--accept", CURSOR)[0] == EXIT_OK
    before = _digests(asz_pass.root)
    done = _killed(asz_pass, f"kill:{step}:1", "run")
    assert done.returncode == -9, done.stderr
    assert any((asz_pass.root / SESSION / "streams" / "main.v2").iterdir())  # killed landing the version
    summary = asz_pass.run()
    assert summary.totals.conflicts == 0 and not summary.failed
    version = _records(asz_pass.root, "main.v2")
    ords = sorted({r.ord for r in version})
    assert ords == list(range(1, source.read_bytes().count(b"\n") + 1))  # every line, none twice
    assert len(version) == len(ords)
    assert {k: v for k, v in _digests(asz_pass.root).items() if k in before} == before
    assert_root_verifies(asz_pass.root)


def test_an_accepted_cursor_that_names_no_later_version_stops_its_source_until_accepted_again(
        projects: Path, cc_projects: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner,
        assert_root_verifies: Callable[[Path], None]) -> None:
    _conflicted(projects, cc_projects, run_local, asz_pass)
    assert _cli(asz_pass, "conflicts", "--accept", CURSOR)[0] == EXIT_OK
    cursor = asz_pass.root / CURSOR
    cursor.write_text(cursor.read_text().replace("next_version 2", "next_version 1"))  # a hand edit
    summary = asz_pass.run()
    assert (summary.totals.conflicts, summary.totals.records) == (1, 0)
    assert any("names no later version" in w for w in asz_pass.reporter.warnings)
    status, listed, _ = _cli(asz_pass, "conflicts", "--json")
    assert status == EXIT_FAILED and [c["cursor"] for c in json.loads(listed)["conflicts"]] == [CURSOR]
    assert _cli(asz_pass, "conflicts", "--accept", CURSOR)[0] == EXIT_OK
    assert "next_version 2" in cursor.read_text()
    assert asz_pass.run().totals.conflicts == 0
    assert_root_verifies(asz_pass.root)


def test_a_session_whose_accepted_version_has_landed_to_its_end_is_settled_again(
        projects: Path, cc_projects: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner,
        opened: list[str]) -> None:
    _conflicted(projects, cc_projects, run_local, asz_pass)
    assert _cli(asz_pass, "conflicts", "--accept", CURSOR)[0] == EXIT_OK
    asz_pass.run()  # lands the version, and notes the session settled
    opened.clear()
    summary = asz_pass.run()
    assert opened == [] and (summary.totals.conflicts, summary.totals.landed) == (0, 0)


def test_an_accept_undone_by_another_collector_is_accepted_again_into_the_version_it_has(
        projects: Path, cc_projects: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner,
        assert_root_verifies: Callable[[Path], None]) -> None:
    _conflicted(projects, cc_projects, run_local, asz_pass)
    assert _cli(asz_pass, "conflicts", "--accept", CURSOR)[0] == EXIT_OK
    landed = asz_pass.run().totals.records
    cursor = asz_pass.root / CURSOR
    # upstream's collector knows no `accepted`: it finds the rewrite again and writes its own keys
    kept = [line for line in cursor.read_text().splitlines() if not line.startswith(("next_version", "accepted_at"))]
    cursor.write_text("\n".join(kept).replace("state accepted", "state conflict") + "\n")
    assert asz_pass.run().totals.conflicts == 1
    status, said, _ = _cli(asz_pass, "conflicts", "--accept", CURSOR)
    assert status == EXIT_OK and "as version 2" in said
    summary = asz_pass.run()
    assert (summary.totals.conflicts, summary.totals.records) == (0, 0)  # no second copy of it
    assert len(_records(asz_pass.root, "main.v2")) == landed
    assert not (asz_pass.root / SESSION / "streams" / "main.v3").exists()
    assert_root_verifies(asz_pass.root)


def test_a_version_place_holding_another_source_is_passed_over(
        projects: Path, cc_projects: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner,
        assert_root_verifies: Callable[[Path], None]) -> None:
    _conflicted(projects, cc_projects, run_local, asz_pass)
    taken = asz_pass.root / SESSION / "streams" / "main.v2"
    taken.mkdir()
    (taken / "transcript.cursor").write_text("source elsewhere/other.jsonl\nstate active\n")
    status, said, _ = _cli(asz_pass, "conflicts", "--accept", CURSOR)
    assert status == EXIT_OK and "as version 3" in said
    summary = asz_pass.run()
    assert summary.totals.conflicts == 0 and summary.totals.records == len(_records(asz_pass.root, "main.v3"))
    assert (taken / "transcript.cursor").read_text() == "source elsewhere/other.jsonl\nstate active\n"
    assert_root_verifies(asz_pass.root)
