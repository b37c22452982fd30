"""``benchmarks/composed_landing.py``: the composed landing lands asz's bytes, in one process or
several, times each of its steps, and says so when it does not."""

from __future__ import annotations

import collections
import time
from pathlib import Path

import pytest

from tests.benchmarks import load_script, three_sessions

composed_landing = load_script("composed_landing")
session_phases = load_script("session_phases")


def test_the_composed_landing_lands_the_bytes_asz_lands_and_times_every_step(corpus: Path, tmp_path: Path) -> None:
    projects = three_sessions(corpus, tmp_path)
    roots = tmp_path / "roots"
    roots.mkdir()
    sessions, passes, composed = composed_landing.measure(projects, roots, 1)
    assert sessions == 3 and len(passes) == len(composed) == 1
    assert set(composed[0]) == {*composed_landing.STEPS, None} and all(cpu > 0 for cpu in composed[0].values())
    assert len(list((roots / "composed-1").glob("*/streams/main/*.sd"))) == 3
    rows = composed_landing.rows(passes, composed)
    assert [label for label, _, _ in rows] == [label for label, _, _ in composed_landing.ROWS]
    # every seam of the pass is in one row, and the rows add up to the whole pass
    assert all(theirs > 0 for label, theirs, _ in rows if label != "the group's two syncfs")
    assert sum(theirs for _, theirs, _ in rows) == pytest.approx(passes[0][None])
    assert sum(ours for _, _, ours in rows) <= composed[0][None]


def test_workers_deal_the_sessions_out_and_land_the_same_bytes(corpus: Path, tmp_path: Path) -> None:
    projects = three_sessions(corpus, tmp_path)
    config = session_phases.write_config(tmp_path / "asz.yaml", tmp_path / "asz", projects)
    started_ns = time.time_ns()
    session_phases.land_once(config, collections.Counter(), started_ns)
    todo = composed_landing.sources(projects)
    composed_landing.land_root(tmp_path / "composed", todo, 2, started_ns)
    assert list(composed_landing.differences(tmp_path / "composed", tmp_path / "asz")) == []
    table = (tmp_path / "composed" / ".settled-claude-code-local.state").read_bytes().splitlines()
    assert len(table) == 1 + len(todo)


def test_a_cursor_names_the_id_of_the_last_record_even_when_that_record_has_none(corpus: Path,
                                                                                tmp_path: Path) -> None:
    projects = corpus / "claude-code" / "projects"
    mine = tmp_path / "projects"
    for path in sorted(projects.glob("*/*.jsonl"))[:3]:  # a line with an id, then one without
        lines = path.read_bytes().splitlines()
        target = mine / path.relative_to(projects)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(next(line for line in lines if b'"uuid"' in line) + b"\n"
                           + next(line for line in lines if b'"uuid"' not in line) + b"\n")
    config = session_phases.write_config(tmp_path / "asz.yaml", tmp_path / "asz", mine)
    started_ns = time.time_ns()
    session_phases.land_once(config, collections.Counter(), started_ns)
    cursors = list((tmp_path / "asz").glob("*/streams/main/transcript.cursor"))
    assert len(cursors) == 3 and all(b"\nlast_uuid \n" in cursor.read_bytes() for cursor in cursors)
    composed_landing.land_root(tmp_path / "composed", composed_landing.sources(mine), 1, started_ns)
    assert list(composed_landing.differences(tmp_path / "composed", tmp_path / "asz")) == []


def test_a_byte_that_differs_from_asz_s_is_named(corpus: Path, tmp_path: Path) -> None:
    projects = three_sessions(corpus, tmp_path)
    config = session_phases.write_config(tmp_path / "asz.yaml", tmp_path / "asz", projects)
    started_ns = time.time_ns()
    session_phases.land_once(config, collections.Counter(), started_ns)
    composed_landing.land_root(tmp_path / "composed", composed_landing.sources(projects), 1,
                               started_ns + 1)  # another stamp: other names
    wrong = list(composed_landing.differences(tmp_path / "composed", tmp_path / "asz"))
    assert len(wrong) == 3 and all(line.endswith(".sd is missing") for line in wrong)


def test_a_corpus_with_more_than_main_transcripts_is_refused(tmp_path: Path) -> None:
    (tmp_path / "project" / "0a0a0a0a-0000-4000-8000-000000000000" / "subagents").mkdir(parents=True)
    with pytest.raises(SystemExit, match="only main transcripts"):
        composed_landing.sources(tmp_path)
