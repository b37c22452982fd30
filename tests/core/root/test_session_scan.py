"""Opening a session: its next seq is one above the highest on disk in every file directory,
temporary files a crash left are removed, and the session directory is owner-only."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from asz_core.root.layout import RefusedId, file_name
from asz_core.root.storage import StorageRoot
from asz_core.sessiondata.model import Header

STAMP = "20260831T091204.481523000Z"


def _header() -> Header:
    return Header(kind="transcript", session="", src="a.jsonl", dialect="test/1", adapter="test")


def _touch(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")


def _next_seq(root: StorageRoot, session: str) -> int:
    with root.open_session(session) as handle:
        landing = handle.begin("streams/main", _header())
        landing.abort()
        return landing.header.seq


def test_a_new_session_starts_at_one_and_is_owner_only(tmp_path: Path) -> None:
    root = StorageRoot(tmp_path / "root")
    root.ensure()
    assert _next_seq(root, "s1") == 1
    assert os.stat(tmp_path / "root" / "s1").st_mode & 0o777 == 0o700
    assert os.listdir(tmp_path / "root" / "s1" / "streams" / "main") == []  # the aborted landing left nothing


def test_the_highest_seq_of_any_file_directory_counts_and_crash_leftovers_go(tmp_path: Path) -> None:
    root = StorageRoot(tmp_path / "root")
    root.ensure()
    session = tmp_path / "root" / "s1"
    _touch(session / "streams" / "main" / file_name("transcript", STAMP, 3))
    _touch(session / "streams" / "agent-a1" / file_name("transcript", STAMP, 4))
    _touch(session / "runs" / "r1" / file_name("journal", STAMP, 9))
    _touch(session / "provider_body" / file_name("provider_body", STAMP, 6))
    leftovers = [session / f".tmp-000000000000-{file_name('transcript', STAMP, 10)}",
                 session / "streams" / "main" / ".tmp-000000000001-transcript.cursor",
                 session / "runs" / "r1" / f".tmp-000000000002-{file_name('journal', STAMP, 11)}",
                 session / "provider_body" / ".tmp-000000000003-x.sd"]
    for leftover in leftovers:
        _touch(leftover)
    session.chmod(0o755)  # made by hand, or an older version: owner-only once opened

    assert _next_seq(root, "s1") == 10
    assert not any(leftover.exists() for leftover in leftovers)
    assert session.stat().st_mode & 0o777 == 0o700
    # runs only, or provider_body only: each is looked into when it is there
    _touch(tmp_path / "root" / "s2" / "runs" / "r2" / file_name("journal", STAMP, 12))
    _touch(tmp_path / "root" / "s3" / "provider_body" / file_name("provider_body", STAMP, 2))
    assert (_next_seq(root, "s2"), _next_seq(root, "s3")) == (13, 3)


def test_a_temporary_file_a_killed_pass_left_in_index_goes_when_the_session_is_opened(tmp_path: Path) -> None:
    root = StorageRoot(tmp_path / "root")
    root.ensure()
    session = tmp_path / "root" / "s1"
    _touch(session / "provider_body" / file_name("provider_body", STAMP, 2))
    leftover = session / "index" / ".tmp-000000000004-provider_bodies"
    _touch(leftover)
    _touch(session / "index" / "provider_bodies")
    # the assembly cache's directory is swept by the holder of its own lock, not by a landing
    theirs = session / "index" / "assembly" / ".tmp-000000000005-2.json"
    _touch(theirs)

    assert _next_seq(root, "s1") == 3
    assert not leftover.exists()
    assert (session / "index" / "provider_bodies").exists() and theirs.exists()


def test_a_linked_index_is_not_swept_through(tmp_path: Path) -> None:
    root = StorageRoot(tmp_path / "root")
    root.ensure()
    elsewhere = tmp_path / "elsewhere"
    outside = elsewhere / ".tmp-000000000006-provider_bodies"
    _touch(outside)
    (tmp_path / "root" / "s1").mkdir()
    (tmp_path / "root" / "s1" / "index").symlink_to(elsewhere)

    with root.open_session("s1"):  # (landing into it is refused: ``test_root_links``)
        pass
    assert outside.exists()


@pytest.mark.parametrize(("subdir", "kind"), [
    ("streams/../../elsewhere", "transcript"), ("streams/main/deeper", "transcript"), ("index", "transcript"),
    ("streams", "transcript"), ("streams/main", "../transcript"), ("streams/main", "transcript\n"),
    ("streams/main", "Transcript")])
def test_a_file_is_begun_only_under_a_place_of_the_session_and_a_kind_that_is_a_word(
        tmp_path: Path, subdir: str, kind: str) -> None:
    """The place and the kind name the file's directory and its name, and come from an adapter:
    one of another shape is refused before anything is made, never a path of its own."""
    root = StorageRoot(tmp_path / "root")
    root.ensure()
    with root.open_session("s1") as handle, pytest.raises(RefusedId):
        handle.begin(subdir, Header(kind=kind, session="", src="a.jsonl", dialect="test/1", adapter="test"))
    made = sorted(p.relative_to(tmp_path / "root").as_posix() for p in (tmp_path / "root").rglob("*"))
    assert made == ["s1", "s1/.lock"], made


@pytest.mark.parametrize("subdir", ["streams/main", "streams/agent-a1.v2", "runs/wf_1a2b", "provider_body"])
def test_every_place_a_collector_lands_in_is_one(tmp_path: Path, subdir: str) -> None:
    root = StorageRoot(tmp_path / "root")
    root.ensure()
    with root.open_session("s1") as handle:
        handle.begin(subdir, _header()).abort()
