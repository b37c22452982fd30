"""A session its landing made (``SessionHandle.fresh``) holds nothing but what that landing
writes, so its places are made through the descriptors the writer holds, no cursor is read that
the landing did not write, and its settled entry names the cursors it wrote: the same entry, the
same files and the same durable steps as a session looked at on disk."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from asz_core.collect import versions
from asz_core.context import AdapterContext, PassContext
from asz_core.root import confined, durable, storage
from asz_core.root.cursors import AppendCursor, SnapshotCursor
from asz_core.root.group import CommitGroup
from asz_core.root.settled import settled_entry
from asz_core.root.storage import SessionHandle, StorageRoot
from asz_core.sessiondata.model import Header

#: cursors in places whose names sort differently as paths and by place (``main-2/`` before
#: ``main/`` as text), and a state that is no cursor of a place
_STATES = ("streams/main/transcript.cursor", "streams/main-2/transcript.cursor", "streams/main/meta.cursor",
           "runs/r1/journal.cursor", "streams/agent-a/transcript.cursor")


@pytest.fixture
def root(tmp_path: Path) -> StorageRoot:
    made = StorageRoot(tmp_path / "root", pass_started_ns=1_700_000_000_000_000_000)
    made.ensure()
    return made


def _land(session: SessionHandle, subdir: str) -> None:
    landing = session.begin(subdir, Header(kind="transcript", session="", src="a.jsonl", dialect="jsonl",
                                           adapter="test/1"))
    landing.write(b'{"t":"r","ord":1}', 1, 0, 10, None)
    session.commit(landing)


def test_a_session_made_in_this_landing_is_fresh_and_one_landed_before_is_not(tmp_path: Path,
                                                                              root: StorageRoot) -> None:
    with root.open_session("s1") as session:
        assert session.fresh
        _land(session, "streams/main")
    with root.open_session("s1") as session:
        assert not session.fresh
    dry = StorageRoot(root.path, dry_run=True)
    with dry.open_session("s2") as session:
        assert not session.fresh


def test_a_fresh_sessions_places_are_made_through_held_directories_never_by_path(
        root: StorageRoot, monkeypatch: pytest.MonkeyPatch) -> None:
    def by_path(*args: object) -> None:
        raise AssertionError("a place made by its path")

    with root.open_session("s1") as session:
        monkeypatch.setattr(confined, "mkdir", by_path)
        for subdir in ("streams/main", "streams/agent-a", "runs/r1", "streams/main"):
            _land(session, subdir)
        assert confined.known(session.path("streams/agent-a")) is True
        assert sorted(confined.listdir(session.path("streams"))) == ["agent-a", "main"]
    monkeypatch.undo()
    landed = sorted(str(p.relative_to(root.path / "s1")) for p in (root.path / "s1").rglob("*.sd"))
    assert [name.split("/transcript-")[0] for name in landed] == [
        "runs/r1", "streams/agent-a", "streams/main", "streams/main"]
    assert all(p.stat().st_mode & 0o777 == 0o700 for p in (root.path / "s1").rglob("*") if p.is_dir())


def test_outside_a_group_each_new_level_is_fsynced_before_a_state_names_it(
        root: StorageRoot, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[str] = []
    monkeypatch.setattr(storage, "fsync_dir", lambda directory: synced.append(os.fspath(directory)))
    with root.open_session("s1") as session:
        _land(session, "streams/main")
        session.sync(created=True)
    top = os.fspath(root.path)
    assert sorted(synced) == sorted([top, f"{top}/s1", f"{top}/s1/streams", f"{top}/s1/streams/main"])


def test_a_place_someone_else_made_meanwhile_ends_freshness_and_the_file_lands_by_its_path(
        root: StorageRoot) -> None:
    with root.open_session("s1") as session:
        os.mkdir(root.path / "s1" / "streams", 0o700)  # behind the writer's back, lock or not
        _land(session, "streams/main")
        assert not session.fresh
        assert AppendCursor.load(session.path("streams/main", "transcript.cursor")) is None
    assert len(list((root.path / "s1" / "streams" / "main").glob("transcript-*.sd"))) == 1


@pytest.fixture
def fresh_in_group(root: StorageRoot) -> Iterator[tuple[SessionHandle, list[str]]]:
    """A fresh session in a group, each of :data:`_STATES` saved, committed when done with."""
    group = CommitGroup.open(root.path, dry_run=False)
    if group is None:
        pytest.skip("group commit needs syncfs (Linux)")
    with root.open_session("s1", group=group) as session:
        for state in _STATES:
            durable.make_dirs(session.path(state.rpartition("/")[0]))
            cursor = SnapshotCursor(source=state) if state.endswith("meta.cursor") else AppendCursor(source=state)
            session.save_state(session.path(*state.rsplit("/", 1)), cursor.encode())
    yield session, list(session.states_saved)
    group.close()


def test_a_fresh_sessions_settled_entry_names_the_cursors_it_wrote_as_a_listing_would(
        fresh_in_group: tuple[SessionHandle, list[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    session, written = fresh_in_group
    entries: list[object] = []
    session.after_commit = lambda: entries.extend([settled_entry(session.dir, [], {"sources": 0}),
                                                   settled_entry(session.dir, [], {"sources": 0}, written)])
    assert session.group is not None
    session.group.commit()
    listed, known = entries
    assert listed == known and isinstance(known, list)
    top = os.fspath(session.dir)
    assert known[2::2] == [f"{top}/{state}" for state in (
        "streams/agent-a/transcript.cursor", "streams/main/meta.cursor", "streams/main/transcript.cursor",
        "streams/main-2/transcript.cursor", "runs/r1/journal.cursor")]


def test_a_fresh_session_reads_no_cursor_it_did_not_write(root: StorageRoot, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = AdapterContext(name="test", options={}, pass_ctx=PassContext(root=root))
    reads: list[Path] = []
    real = versions.load_cursor
    monkeypatch.setattr(versions, "load_cursor", lambda *args: reads.append(args[2]) or real(*args))
    with root.open_session("s1") as session:
        place = versions.current_place(ctx, session, "streams/main", "transcript", AppendCursor)
        assert place.cursor is None and reads == []
        durable.make_dirs(session.path("streams/main"))
        session.save_state(place.path, AppendCursor(source="a.jsonl", offset=12, ord=1).encode())
        again = versions.current_place(ctx, session, "streams/main", "transcript", AppendCursor)
        assert again.cursor is not None and again.cursor.offset == 12 and reads == [place.path]
    with root.open_session("s1") as session:
        kept = versions.current_place(ctx, session, "streams/main", "transcript", AppendCursor)
        assert kept.cursor is not None and kept.cursor.offset == 12 and len(reads) == 2
