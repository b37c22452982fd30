"""Settled sessions: a pass that finds a session exactly as it left it neither locks nor lands it,
counts it as landing it would, and anything that could change what lands makes it land again.

Each test copies a real session with two subagents from the corpus and changes the copy.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cc_helpers import ADAPTER, OTHER_SESSION, OTHER_SLUG, SUBAGENTS_SESSION, SUBAGENTS_SLUG

from asz_adapters.claude_code_local import sources
from asz_core.context import PassSummary
from asz_core.root.settled import SETTLED_PREFIX
from asz_core.testing import PassRunner

pytestmark = pytest.mark.corpus

SLUG, SESSION = SUBAGENTS_SLUG, SUBAGENTS_SESSION


def _line(summary: PassSummary) -> dict[str, int]:
    return {k: v for k, v in summary.totals.as_dict().items() if k not in ("landed", "records", "bytes")}


def test_a_second_pass_opens_no_session_and_counts_the_same(
        two_sessions: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner, opened: list[str],
        assert_root_verifies: Callable[[Path], None]) -> None:
    first = run_local(two_sessions)
    assert sorted(opened) == sorted([SESSION, OTHER_SESSION]) and first.totals.landed >= 4
    assert (asz_pass.root / f"{SETTLED_PREFIX}{ADAPTER}.state").is_file()
    opened.clear()
    second = asz_pass.run()
    assert opened == [] and second.totals.landed == 0
    assert _line(second) == _line(first)
    assert_root_verifies(asz_pass.root)


def test_a_lone_transcript_lands_when_it_or_its_cursor_changes_and_not_otherwise(
        two_sessions: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner, opened: list[str],
        assert_root_verifies: Callable[[Path], None]) -> None:
    """A main transcript alone in its directory is judged from the listing and two stats: a line
    appended to it, or its cursor rewritten, lands it; a pass with neither does not open it."""
    run_local(two_sessions)
    transcript = two_sessions / OTHER_SLUG / f"{OTHER_SESSION}.jsonl"
    lines = transcript.read_bytes().splitlines(keepends=True)
    with open(transcript, "ab") as f:
        f.write(lines[-1])
    opened.clear()
    assert asz_pass.run().totals.records == 1 and opened == [OTHER_SESSION]
    opened.clear()
    assert asz_pass.run().totals.landed == 0 and opened == []
    cursor = asz_pass.root / OTHER_SESSION / "streams" / "main" / "transcript.cursor"
    cursor.write_bytes(cursor.read_bytes())  # the same bytes, written again: another mtime, perhaps inode
    os.utime(cursor, ns=(0, 0))
    opened.clear()
    assert asz_pass.run().totals.landed == 0 and opened == [OTHER_SESSION]  # looked at, nothing new
    assert_root_verifies(asz_pass.root)


def test_appended_lines_land_in_the_next_pass(
        two_sessions: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner, opened: list[str],
        assert_root_verifies: Callable[[Path], None]) -> None:
    run_local(two_sessions)
    agent = next((two_sessions / SLUG / SESSION / "subagents").glob("agent-*.jsonl"))
    lines = agent.read_bytes().splitlines(keepends=True)
    with open(agent, "ab") as f:
        f.write(lines[0] + lines[1][: len(lines[1]) // 2])  # one whole line, and half of one
    opened.clear()
    second = asz_pass.run()
    assert opened == [SESSION] and second.totals.records == 1
    opened.clear()
    assert asz_pass.run().totals.landed == 0 and opened == [SESSION]  # a partial line: never settled
    with open(agent, "ab") as f:
        f.write(lines[1][len(lines[1]) // 2:])
    opened.clear()
    third = asz_pass.run()
    assert opened == [SESSION] and third.totals.records == 1
    opened.clear()
    assert asz_pass.run().totals.landed == 0 and opened == []
    assert_root_verifies(asz_pass.root)


def test_a_pass_that_lands_one_session_of_many_adds_one_line_to_the_table_and_the_next_opens_none(
        tmp_path: Path, cc_projects: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner,
        opened: list[str], assert_root_verifies: Callable[[Path], None]) -> None:
    """The table is written whole once, then only what a pass changed is added to it: the
    session landed again, and the one whose sources are all gone now, noted as pruned."""
    projects = tmp_path / "projects"
    shutil.copytree(cc_projects, projects)
    first = run_local(projects)
    table = asz_pass.root / f"{SETTLED_PREFIX}{ADAPTER}.state"
    whole = table.read_bytes()
    assert whole.count(b"\n") == 2 and first.totals.sessions > 40
    transcript = projects / OTHER_SLUG / f"{OTHER_SESSION}.jsonl"
    with open(transcript, "ab") as f:
        f.write(transcript.read_bytes().splitlines(keepends=True)[-1])
    opened.clear()
    assert asz_pass.run().totals.records == 1 and opened == [OTHER_SESSION]
    after = table.read_bytes()
    assert after.startswith(whole) and after.count(b"\n") == 3
    assert OTHER_SESSION.encode() in after[len(whole):]
    shutil.rmtree(projects / SLUG / SESSION)
    (projects / SLUG / f"{SESSION}.jsonl").unlink()
    gone = asz_pass.run()  # its places are marked gone: nothing settled changes yet
    assert gone.totals.gone > 0 and table.read_bytes() == after
    noted = asz_pass.run()  # nothing left to mark: noted as pruned, one line more
    lines = table.read_bytes()
    assert lines.startswith(after) and lines.count(b"\n") == 4 and SESSION.encode() in lines[len(after):]
    opened.clear()
    again = asz_pass.run()
    assert opened == [] and again.totals.landed == 0 and again.totals.gone == noted.totals.gone == gone.totals.gone
    assert table.read_bytes() == lines
    assert_root_verifies(asz_pass.root)


def test_a_touched_source_or_a_rewritten_cursor_is_landed_again_and_lands_nothing(
        two_sessions: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner, opened: list[str]) -> None:
    run_local(two_sessions)
    main = two_sessions / SLUG / f"{SESSION}.jsonl"
    st = main.stat()
    os.utime(main, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    opened.clear()
    assert asz_pass.run().totals.landed == 0 and opened == [SESSION]
    cursor = asz_pass.root / OTHER_SESSION / "streams" / "main" / "transcript.cursor"
    copy = cursor.with_name("copy")
    shutil.copy2(cursor, copy)
    os.replace(copy, cursor)  # the same bytes under a new inode, as a power cut could leave it
    opened.clear()
    assert asz_pass.run().totals.landed == 0 and opened == [OTHER_SESSION]
    opened.clear()
    assert asz_pass.run().totals.landed == 0 and opened == []


def test_a_source_gone_is_counted_gone_every_pass(
        two_sessions: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner, opened: list[str]) -> None:
    run_local(two_sessions)
    agent = next((two_sessions / SLUG / SESSION / "subagents").glob("agent-*.jsonl"))
    agent.unlink()
    opened.clear()
    second = asz_pass.run()
    assert opened == [SESSION] and second.totals.gone == 1
    opened.clear()
    third = asz_pass.run()
    assert opened == [] and _line(third) == _line(second)


def test_a_dry_run_writes_no_table(two_sessions: Path, run_local: Callable[..., PassSummary],
                                   asz_pass: PassRunner) -> None:
    run_local(two_sessions)
    table = asz_pass.root / f"{SETTLED_PREFIX}{ADAPTER}.state"
    table.unlink()
    asz_pass.run(dry_run=True)
    assert not table.exists()


def test_a_session_its_landing_made_looks_for_no_place_gone_nor_index_and_one_landed_before_does(
        two_sessions: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner,
        monkeypatch: pytest.MonkeyPatch, assert_root_verifies: Callable[[Path], None]) -> None:
    looked: list[tuple[str, str]] = []
    places, index = sources.landed_places, sources.add_landed

    def landed_places(session_dir: Path, **kwargs: Any) -> Any:
        looked.append(("places gone", session_dir.name))
        return places(session_dir, **kwargs)

    def add_landed(session_dir: str, *args: Any) -> None:
        looked.append(("index", Path(session_dir).name))
        index(session_dir, *args)

    monkeypatch.setattr(sources, "landed_places", landed_places)
    monkeypatch.setattr(sources, "add_landed", add_landed)
    assert run_local(two_sessions).totals.landed >= 4 and looked == []
    transcript = two_sessions / OTHER_SLUG / f"{OTHER_SESSION}.jsonl"
    with open(transcript, "ab") as f:
        f.write(transcript.read_bytes().splitlines(keepends=True)[-1])
    assert asz_pass.run().totals.records == 1
    assert looked == [("places gone", OTHER_SESSION), ("index", OTHER_SESSION)]
    assert_root_verifies(asz_pass.root)
