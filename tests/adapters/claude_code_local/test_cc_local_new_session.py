"""A session new to the root, of one transcript, lands in one place (``asz_core.collect.fresh``):
the same files, bytes, settled entries and counts as ``asz_land`` gives it, and whatever that
landing does not take goes to ``asz_land`` with nothing made first."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cc_helpers import fixed_clock_runner, land_until_done, session_files

from asz_core.collect import fresh
from asz_core.host import PluginHost
from asz_core.root import durable
from asz_core.tally import SessionOutcome
from asz_core.testing import PassRunner

pytestmark = [pytest.mark.corpus,
              pytest.mark.skipif(not durable.can_sync_filesystem(),
                                 reason="a new session lands in one place only in a group commit (syncfs: Linux)")]


def _lone_sessions(projects: Path) -> Iterator[Path]:
    """The corpus's transcripts that are all their session holds (no subagents, no sidecars),
    smallest first."""
    lone = [p for p in projects.glob("*/*.jsonl") if not p.with_suffix("").exists()]
    yield from sorted(lone, key=lambda p: (p.stat().st_size, p.name))


def _copy(transcript: Path, target: Path) -> Path:
    dest = target / transcript.parent.name / transcript.name
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(transcript, dest)
    return dest


def _cut_mid_line(transcript: Path) -> None:
    """The last line half written, as a transcript being appended to is."""
    data = transcript.read_bytes()
    transcript.write_bytes(data[: len(data) - 40])


def _empty(transcript: Path) -> None:
    transcript.write_bytes(b"")


def _not_json_line(transcript: Path) -> None:
    lines = transcript.read_bytes().splitlines(keepends=True)
    transcript.write_bytes(b"".join([lines[0], b"this line is not JSON\n", *lines[1:]]))


def _settled(root: Path) -> dict[str, Any]:
    """The settled table's entries, each cursor's stamp left out (another inode either way) and
    the root's path made the same."""
    header, *batches = (root / ".settled-claude-code-local.state").read_bytes().splitlines()
    entries: dict[str, Any] = {}
    for batch in batches:
        entries.update(json.loads(batch))
    text = json.dumps(entries).replace(str(root), "ROOT")
    return {"header": header, "entries": {session: _without_cursor_stamps(entry)
                                          for session, entry in json.loads(text).items()}}


def _without_cursor_stamps(entry: list[Any]) -> list[Any]:
    return [None if i and isinstance(entry[i - 1], str) and entry[i - 1].endswith(".cursor") else item
            for i, item in enumerate(entry)]


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The sessions landed in one place, in order."""
    landed: list[str] = []
    real = fresh.land_new_session

    def land_new(actx: Any, claim: Any, source: Any, group: Any) -> SessionOutcome | None:
        outcome = real(actx, claim, source, group)
        if outcome is not None:
            landed.append(claim.session)
        return outcome

    monkeypatch.setattr(fresh, "land_new_session", land_new)
    return landed


def _both_ways(tmp_path: Path, projects: Path, monkeypatch: pytest.MonkeyPatch,
               **collector: Any) -> tuple[PassRunner, list[str]]:
    """``projects`` landed as a pass lands them, and again with every claim given to
    ``asz_land``: every file alike, the settled tables and the counts alike. The first landing's
    runner, and the sessions it landed in one place."""
    landed = _counted(monkeypatch)
    here = fixed_clock_runner(tmp_path / "here", projects, **collector)
    passes_here = land_until_done(here)
    with monkeypatch.context() as m:
        m.setattr(PluginHost, "new_session", lambda self, name, ctx, claim: None)
        there = fixed_clock_runner(tmp_path / "there", projects, **collector)
        passes_there = land_until_done(there)
    files_here, files_there = session_files(here.root), session_files(there.root)
    assert files_here.keys() == files_there.keys()
    assert [name for name in files_here if files_here[name] != files_there[name]] == []
    assert _settled(here.root) == _settled(there.root)
    assert [p.totals.as_dict() for p in passes_here] == [p.totals.as_dict() for p in passes_there]
    assert [p.errors for p in passes_here] == [p.errors for p in passes_there]
    return here, landed


def test_new_sessions_of_one_transcript_land_the_bytes_asz_land_gives_them(
        cc_projects: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        assert_root_verifies: Callable[[Path], None]) -> None:
    projects = tmp_path / "projects"
    lone = [_copy(t, projects) for t in list(_lone_sessions(cc_projects))[:6]]
    with_subagents = next(p for p in cc_projects.glob("*/*.jsonl") if p.with_suffix("").is_dir())
    _copy(with_subagents, projects)
    shutil.copytree(with_subagents.with_suffix(""), projects / with_subagents.parent.name / with_subagents.stem)
    here, landed = _both_ways(tmp_path, projects, monkeypatch)
    assert sorted(landed) == sorted(t.stem for t in lone)  # the session with subagents: asz_land's
    assert_root_verifies(here.root)
    # the next pass finds each settled, and lands nothing
    again = here.run()
    assert again.totals.landed == 0 and not again.failed


@pytest.mark.parametrize("change", [_cut_mid_line, _empty, _not_json_line], ids=lambda f: f.__name__.strip("_"))
def test_a_new_session_lands_alike_either_way_whatever_its_transcript_holds(
        change: Callable[[Path], None], cc_projects: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        assert_root_verifies: Callable[[Path], None]) -> None:
    projects = tmp_path / "projects"
    transcripts = [_copy(t, projects) for t in list(_lone_sessions(cc_projects))[:2]]
    change(transcripts[0])
    here, landed = _both_ways(tmp_path, projects, monkeypatch)
    assert transcripts[1].stem in landed
    assert_root_verifies(here.root)


def test_a_new_session_of_more_than_one_files_worth_is_landed_by_asz_land(
        cc_projects: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        assert_root_verifies: Callable[[Path], None]) -> None:
    projects = tmp_path / "projects"
    lone = list(_lone_sessions(cc_projects))
    limit = 32 * 1024
    small, large = lone[0], next(t for t in lone if t.stat().st_size > 2 * limit)
    _copy(small, projects)
    _copy(large, projects)
    assert small.stat().st_size < limit < large.stat().st_size  # else this corpus shows nothing
    here, landed = _both_ways(tmp_path, projects, monkeypatch, max_delta_bytes=limit)
    assert landed == [small.stem]
    assert len(list((here.root / large.stem / "streams" / "main").glob("*.sd"))) > 1
    assert_root_verifies(here.root)


def test_a_session_already_in_the_root_is_landed_by_asz_land(
        cc_projects: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    projects = tmp_path / "projects"
    transcript = _copy(next(_lone_sessions(cc_projects)), projects)
    lines = transcript.read_bytes().splitlines(keepends=True)
    transcript.write_bytes(b"".join(lines[:-1]))
    landed = _counted(monkeypatch)
    runner = fixed_clock_runner(tmp_path / "root-work", projects)
    assert runner.run().totals.landed == 1 and landed == [transcript.stem]
    transcript.write_bytes(b"".join(lines))  # its last line appended
    grown = runner.run()
    assert grown.totals.landed == 1 and grown.totals.records == 1 and landed == [transcript.stem]


def test_a_link_at_a_new_sessions_name_is_refused_as_asz_land_refuses_it(
        cc_projects: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    projects = tmp_path / "projects"
    transcript = _copy(next(_lone_sessions(cc_projects)), projects)
    outside = tmp_path / "outside"
    outside.mkdir()
    runner = fixed_clock_runner(tmp_path / "work", projects)
    runner.root.mkdir(mode=0o700)
    (runner.root / transcript.stem).symlink_to(outside)
    landed = _counted(monkeypatch)
    summary = runner.run()
    assert landed == [] and summary.failed
    assert any("link" in str(error) for error in summary.errors)
    assert list(outside.iterdir()) == []
