"""A session pruned whole, once every place of it is marked gone, is counted from the settled
table: later passes stat its cursors and recorded sources instead of listing and reading them,
and count exactly what reading them would; anything that could change that count is a miss.

Each test lands a real session with two subagents (three cursors) beside a second session from
the corpus, then deletes the first one's files as Claude Code's cleanup does.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from cc_helpers import ADAPTER, SUBAGENTS_SESSION, SUBAGENTS_SLUG, copy_session

from asz_adapters.claude_code_local import gone
from asz_core.context import PassSummary
from asz_core.root.places import SessionPlaces
from asz_core.root.settled import SETTLED_PREFIX
from asz_core.root.storage import landed_files
from asz_core.testing import PassRunner

pytestmark = pytest.mark.corpus

SLUG, SESSION = SUBAGENTS_SLUG, SUBAGENTS_SESSION


@pytest.fixture
def read(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The pruned sessions whose cursors a pass lists and reads, in order."""
    seen: list[str] = []
    real = gone.shared.session_places

    def session_places(session_dir: Path, *args: object, **kwargs: object) -> SessionPlaces:
        seen.append(session_dir.name)
        return real(session_dir, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(gone.shared, "session_places", session_places)
    return seen


def _pruned(two_sessions: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner) -> list[Path]:
    """Land both sessions, delete the first's files, and run the passes that mark and note it."""
    run_local(two_sessions)
    shutil.rmtree(two_sessions / SLUG)
    marking = asz_pass.run()
    assert marking.totals.gone == 3 and marking.totals.sessions == 2  # claimed, to mark its cursors
    noting = asz_pass.run()
    assert noting.totals.gone == 3 and noting.totals.sessions == 1
    return sorted((asz_pass.root / SESSION).glob("streams/*/transcript.cursor"))


def test_a_pruned_session_marked_gone_is_counted_without_reading_its_cursors(
        two_sessions: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner, read: list[str],
        assert_root_verifies: Callable[[Path], None]) -> None:
    cursors = _pruned(two_sessions, run_local, asz_pass)
    files = sorted(p for _, p in landed_files(asz_pass.root / SESSION))
    texts = [c.read_bytes() for c in cursors]
    assert read == [SESSION, SESSION]  # the pass that marked it, the one that noted it
    read.clear()
    for _ in range(2):
        again = asz_pass.run()
        assert (again.totals.gone, again.totals.sessions, again.totals.landed) == (3, 1, 0)
    assert read == []
    assert [c.read_bytes() for c in cursors] == texts
    assert sorted(p for _, p in landed_files(asz_pass.root / SESSION)) == files
    assert_root_verifies(asz_pass.root)


def test_a_rewritten_cursor_is_read_again_and_counts_the_same(
        two_sessions: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner, read: list[str]) -> None:
    cursors = _pruned(two_sessions, run_local, asz_pass)
    copy = cursors[0].with_name("copy")
    shutil.copy2(cursors[0], copy)
    copy.replace(cursors[0])  # the same bytes under another inode
    read.clear()
    assert asz_pass.run().totals.gone == 3 and read == [SESSION]
    read.clear()
    assert asz_pass.run().totals.gone == 3 and read == []


def test_a_cursor_no_longer_gone_is_not_counted_from_the_table(
        two_sessions: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner, read: list[str]) -> None:
    cursors = _pruned(two_sessions, run_local, asz_pass)
    text = cursors[0].read_text("utf-8")
    assert "state source_gone" in text
    # a cursor rewritten to say another state (as a restore from a backup would): only two of
    # its three places are marked, the third is marked again
    cursors[0].write_text(text.replace("state source_gone", "state active"), "utf-8")
    read.clear()
    again = asz_pass.run()
    assert again.totals.gone == 3 and again.totals.sessions == 2 and read == [SESSION]
    assert "state source_gone" in cursors[0].read_text("utf-8")


def test_a_source_back_lands_again_and_a_second_pruning_is_noted_again(
        two_sessions: Path, cc_projects: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner,
        read: list[str], assert_root_verifies: Callable[[Path], None]) -> None:
    _pruned(two_sessions, run_local, asz_pass)
    copy_session(cc_projects, SLUG, SESSION, two_sessions)
    back = asz_pass.run()
    assert back.totals.gone == 0 and back.totals.conflicts == 0 and back.totals.sessions == 2
    assert all("state active" in c.read_text("utf-8")
               for c in (asz_pass.root / SESSION).glob("streams/*/transcript.cursor"))
    (two_sessions / SLUG / f"{SESSION}.jsonl").unlink()  # the main transcript alone: still discovered
    assert asz_pass.run().totals.gone == 1
    shutil.rmtree(two_sessions / SLUG)
    read.clear()
    assert asz_pass.run().totals.gone == 3 and read == [SESSION]  # marks the two subagents
    assert asz_pass.run().totals.gone == 3 and read == [SESSION, SESSION]  # notes it
    assert asz_pass.run().totals.gone == 3 and read == [SESSION, SESSION]
    assert_root_verifies(asz_pass.root)


def test_a_source_that_exists_again_is_a_miss(
        two_sessions: Path, cc_projects: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner,
        read: list[str]) -> None:
    _pruned(two_sessions, run_local, asz_pass)
    # a directory where the main transcript was: not a transcript, so the session is still not
    # discovered, but its recorded source exists, so that place is not gone
    (two_sessions / SLUG / f"{SESSION}.jsonl").mkdir(parents=True)
    read.clear()
    assert asz_pass.run().totals.gone == 2 and read == [SESSION]  # and noted as it is now
    assert asz_pass.run().totals.gone == 2 and read == [SESSION]
    (two_sessions / SLUG / f"{SESSION}.jsonl").rmdir()
    assert asz_pass.run().totals.gone == 3 and read == [SESSION, SESSION]
    assert asz_pass.run().totals.gone == 3 and read == [SESSION, SESSION]


def test_include_exclude_and_the_source_root_still_decide(
        two_sessions: Path, tmp_path: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner,
        read: list[str]) -> None:
    _pruned(two_sessions, run_local, asz_pass)
    read.clear()
    assert run_local(two_sessions, exclude=[SLUG]).totals.gone == 0 and read == []
    assert run_local(two_sessions).totals.gone == 3 and read == []
    moved = tmp_path / "moved"
    shutil.copytree(two_sessions, moved)
    assert run_local(moved).totals.gone == 3 and read == [SESSION]  # another root: read, then noted
    assert run_local(moved).totals.gone == 3 and read == [SESSION]


def test_a_dry_run_neither_notes_nor_trusts_the_table(
        two_sessions: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner, read: list[str]) -> None:
    run_local(two_sessions)
    shutil.rmtree(two_sessions / SLUG)
    asz_pass.run()  # marks it
    table = asz_pass.root / f"{SETTLED_PREFIX}{ADAPTER}.state"
    before = table.read_bytes()
    read.clear()
    assert asz_pass.run(dry_run=True).totals.gone == 3 and read == [SESSION]
    assert table.read_bytes() == before
