"""A session directory its writer has just made and locked is known to it: what it made there is
listed, and a name it did not make is absent, without asking the system; nothing else changes,
and a link planted there is still never followed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from asz_core.root import confined
from asz_core.root.durable import make_dirs
from asz_core.root.storage import StorageRoot


def _no_system(*args: object, **kwargs: object) -> object:
    raise AssertionError("asked the system")


def test_a_new_session_is_listed_from_what_its_writer_made_without_a_system_call(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = StorageRoot(tmp_path / "root")
    root.ensure()
    with root.open_session("s1") as session:
        make_dirs(session.path("streams/main"))
        fd = confined.open_path(session.path("streams/main", "a.sd"), os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        os.close(fd)
        confined.rename(session.path("streams/main", "a.sd"), session.path("streams/main", "b.sd"), replace=False)
        with monkeypatch.context() as m:
            for name in ("listdir", "scandir", "open"):
                m.setattr(os, name, _no_system)
            assert sorted(confined.listdir(session.dir)) == [".lock", "streams"]
            assert confined.listdir(session.path("streams/main")) == ["b.sd"]
            assert [(e.name, e.is_dir) for e in confined.scandir(session.path("streams"))] == [("main", True)]
            with pytest.raises(FileNotFoundError):
                confined.open_path(session.path("streams/main", "transcript.cursor"), os.O_RDONLY)
            with pytest.raises(FileNotFoundError):
                confined.listdir(session.path("runs/r1"))
        # what it knows is what is there
        assert sorted(os.listdir(session.dir)) == [".lock", "streams"]
        assert os.listdir(session.path("streams/main")) == ["b.sd"]
    assert confined.known(root.path / "s1" / "streams") is None  # let go with the session


def test_a_session_landed_before_is_listed_by_the_system(tmp_path: Path) -> None:
    root = StorageRoot(tmp_path / "root")
    root.ensure()
    with root.open_session("s1") as session:
        make_dirs(session.path("streams/main"))
    (root.path / "s1" / "streams" / "main" / "by-hand.sd").write_bytes(b"")
    with root.open_session("s1") as session:
        assert confined.known(session.path("streams/main")) is None
        assert confined.listdir(session.path("streams/main")) == ["by-hand.sd"]


def test_a_link_planted_in_a_new_session_is_never_followed(tmp_path: Path) -> None:
    root = StorageRoot(tmp_path / "root")
    root.ensure()
    outside = tmp_path / "outside"
    outside.mkdir()
    with root.open_session("s1") as session:
        os.symlink(outside, session.path("streams"))  # behind the writer's back
        with pytest.raises(confined.LinkRefused):
            make_dirs(session.path("streams/main"))
        # found there all the same: the session is for the system to say from now on
        assert confined.known(session.path("streams")) is None
        with pytest.raises(confined.LinkRefused):
            confined.listdir(session.path("streams"))
    assert list(outside.iterdir()) == []


def test_letting_one_session_go_leaves_every_other_held_session_as_it_was(tmp_path: Path) -> None:
    root = StorageRoot(tmp_path / "root")
    root.ensure()
    first = root.open_session("s1").__enter__()
    second = root.open_session("s2").__enter__()
    for session in (first, second):
        make_dirs(session.path("streams/main"))
        confined.hold(session.path("streams/main"))
    held = confined.held_count()
    first._release()
    assert confined.held_count() == held - 2
    assert confined.known(first.path("streams")) is None
    assert confined.known(second.path("streams")) is True  # still made here, still its writer's
    assert confined.listdir(second.path("streams/main")) == []
    second._release()
    assert confined.held_count() == held - 4
    assert confined.known(second.path("streams")) is None


class _NotWalked(dict[str, list[str]]):
    """``confined``'s held directories, which may be looked up but not walked."""

    def __iter__(self):  # type: ignore[no-untyped-def]
        raise AssertionError("walked every held directory")


def test_letting_a_session_go_looks_at_no_other_sessions_held_directories(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = StorageRoot(tmp_path / "root")
    root.ensure()
    held = confined.held_count()
    sessions = [root.open_session(f"s{n}").__enter__() for n in range(3)]
    for session in sessions:
        make_dirs(session.path("streams/main"))
        confined.hold(session.path("streams/main"))
    original = confined._below
    with monkeypatch.context() as m:
        m.setattr(confined, "_below", _NotWalked(original))
        for session in sessions:
            session._release()
        left = dict(confined._below)
    original.clear()
    original.update(left)
    assert confined.held_count() == held and left == {}


def test_a_directory_held_before_the_one_above_it_is_let_go_with_it(tmp_path: Path) -> None:
    root = StorageRoot(tmp_path / "root")
    root.ensure()
    (root.path / "s1" / "streams" / "main").mkdir(parents=True)
    held = confined.held_count()
    confined.hold(root.path / "s1" / "streams" / "main")  # nothing above it held yet: filed on its own
    confined.hold(root.path / "s1")
    confined.release_held(root.path / "s1")
    assert confined.held_count() == held


@pytest.mark.parametrize("path", ["/a/b/c", "/a/b/", "/a", "/", "a", "a/b", "", "//a", "/a//b", "/a/b//c/"])
def test_a_path_splits_as_os_path_splits_it(path: str) -> None:
    assert confined.split(path) == os.path.split(path)
