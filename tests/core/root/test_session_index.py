"""The ids index (``asz_core.root.index``): begun and brought up to date by its reader from the
landed transcripts, never by a landing; what it holds against what the files say."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from asz_core.root import index
from asz_core.root.index import CALL, DIRECTORY, SessionIndex, add_landed, session_ids
from tests.provider_support import land_transcript

SESSION = "0b0e7b5c-5d55-4a3c-9f55-1e4a9b1c2d3e"


@pytest.fixture
def session_dir(tmp_path: Path) -> Path:
    """A session holding two landed transcripts (seq 1 and 2), found under two directories."""
    land_transcript(tmp_path, SESSION, "-home-me-one", ["msg_a", "msg_b"])
    land_transcript(tmp_path, SESSION, "-home-me-two", ["msg_b", "msg_c"])
    return tmp_path / SESSION


def _lines(session_dir: Path) -> list[str]:
    return (session_dir / "index" / "ids").read_text().splitlines()


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The landed files the reader opens from now on, by name."""
    from asz_core.sessiondata import reader

    opened: list[str] = []
    real = reader.open_file

    def open_file(path: Path, *, fd: int | None = None) -> reader.SessionDataReader:
        opened.append(path.name)
        return real(path, fd=fd)

    monkeypatch.setattr(reader, "open_file", open_file)
    return opened


def test_a_session_with_no_index_has_one_begun_from_every_landed_transcript(session_dir: Path) -> None:
    assert SessionIndex(session_dir).load() is None
    ids = session_ids(session_dir)
    assert ids == {CALL: {"msg_a", "msg_b", "msg_c"}, DIRECTORY: {"-home-me-one", "-home-me-two"}}
    lines = _lines(session_dir)
    assert sorted(lines[:-1]) == sorted(["directory -home-me-one", "call msg_a", "call msg_b",
                                         "directory -home-me-two", "call msg_c"])
    assert lines[-1] == "seq 2"
    assert SessionIndex(session_dir).load() == (ids, 2)


def test_only_the_transcripts_landed_since_are_read_and_their_new_ids_appended(
        session_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    begun = session_ids(session_dir)
    land_transcript(tmp_path, SESSION, "-home-me-one", ["msg_c", "msg_d"])
    opened = _reads(monkeypatch)
    ids = session_ids(session_dir)
    assert len(opened) == 1 and opened[0].endswith("-000003.sd")
    assert ids[CALL] == begun[CALL] | {"msg_d"} and ids[DIRECTORY] == begun[DIRECTORY]
    assert _lines(session_dir)[-2:] == ["call msg_d", "seq 3"]
    opened.clear()
    assert session_ids(session_dir) == ids and opened == []  # nothing new: the index alone


def test_an_append_cut_short_has_its_files_read_again_and_repeats_no_id(session_dir: Path, tmp_path: Path) -> None:
    session_ids(session_dir)
    land_transcript(tmp_path, SESSION, "-home-me-one", ["msg_d"])
    with open(session_dir / "index" / "ids", "a") as f:
        f.write("call msg_d\nse")  # the append's id written, its seq cut short
    assert SessionIndex(session_dir).load() == ({CALL: {"msg_a", "msg_b", "msg_c", "msg_d"},
                                                 DIRECTORY: {"-home-me-one", "-home-me-two"}}, 2)
    assert "msg_d" in session_ids(session_dir)[CALL]
    lines = _lines(session_dir)
    assert lines[-3:] == ["call msg_d", "se", "seq 3"] and lines.count("call msg_d") == 1
    loaded = SessionIndex(session_dir).load()
    assert loaded is not None and loaded[1] == 3


def test_a_dry_run_reads_the_files_and_writes_nothing(session_dir: Path) -> None:
    assert session_ids(session_dir, keep=False)[CALL] == {"msg_a", "msg_b", "msg_c"}
    assert not (session_dir / "index").exists()


def test_an_index_covering_more_than_the_session_numbers_is_begun_anew(session_dir: Path) -> None:
    (session_dir / "index").mkdir()
    (session_dir / "index" / "ids").write_text("call msg_gone\nseq 9\n")
    assert session_ids(session_dir)[CALL] == {"msg_a", "msg_b", "msg_c"}
    assert "call msg_gone" not in _lines(session_dir) and _lines(session_dir)[-1] == "seq 2"


@pytest.mark.parametrize("link", ["symlink_to", "hardlink_to"])
def test_a_link_in_the_index_s_place_is_read_as_none_and_replaced_not_written_through(
        session_dir: Path, tmp_path: Path, link: str) -> None:
    planted = tmp_path / "planted"
    planted.write_text("call msg_planted\nseq 2\n")
    (session_dir / "index").mkdir()
    getattr(session_dir / "index" / "ids", link)(planted)
    assert SessionIndex(session_dir).load() is None
    assert session_ids(session_dir)[CALL] == {"msg_a", "msg_b", "msg_c"}
    assert planted.read_text() == "call msg_planted\nseq 2\n"
    assert not (session_dir / "index" / "ids").is_symlink() and _lines(session_dir)[-1] == "seq 2"
    assert (session_dir / "index" / "ids").stat().st_nlink == 1


def test_only_transcripts_are_read(session_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index, "_TRANSCRIPT", "no-such-kind")
    assert session_ids(session_dir) == {CALL: set(), DIRECTORY: set()}


def test_a_landing_appends_to_an_index_its_ids_and_seq_so_the_reader_lists_nothing(
        session_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    session_ids(session_dir)
    land_transcript(tmp_path, SESSION, "-home-me-one", ["msg_c", "msg_d"])  # noted: next_seq 4
    add_landed(session_dir, lambda: [(CALL, "msg_c"), (CALL, "msg_d")], 3, 3)
    assert _lines(session_dir)[-2:] == ["call msg_d", "seq 3"]  # msg_c was there
    monkeypatch.setattr(index, "landed_files", None)  # listing the files would fail
    assert session_ids(session_dir)[CALL] == {"msg_a", "msg_b", "msg_c", "msg_d"}


def test_an_append_the_disk_takes_a_few_bytes_at_a_time_holds_every_byte(
        session_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    session_ids(session_dir)
    land_transcript(tmp_path, SESSION, "-home-me-one", ["msg_d", "msg_e"])
    real_write = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: real_write(fd, bytes(data[:5])))  # a short write each
    add_landed(session_dir, lambda: [(CALL, "msg_d"), (CALL, "msg_e")], 3, 3)
    monkeypatch.undo()
    assert _lines(session_dir)[-3:] == ["call msg_d", "call msg_e", "seq 3"]


def test_a_session_with_no_index_costs_a_landing_nothing(session_dir: Path) -> None:
    def landed() -> list[tuple[str, str]]:
        raise AssertionError("asked for what it landed")

    add_landed(session_dir, landed, 3, 3)
    assert not (session_dir / "index").exists()


@pytest.mark.parametrize("note", ["next_seq 9\n", "", None], ids=["higher", "unreadable", "none"])
def test_a_session_noted_past_its_index_or_not_noted_has_its_files_listed(
        session_dir: Path, tmp_path: Path, note: str | None) -> None:
    session_ids(session_dir)
    # as a writer that does not know the index lands: a file, and whatever note it leaves
    land_transcript(tmp_path, SESSION, "-home-me-three", ["msg_e"])
    state = session_dir / "session.state"
    if note is None:
        state.unlink()
    else:
        state.write_text(note)
    ids = session_ids(session_dir)
    assert "msg_e" in ids[CALL] and "-home-me-three" in ids[DIRECTORY]


def test_a_landing_after_another_writer_s_leaves_that_writer_s_files_to_the_reader(
        session_dir: Path, tmp_path: Path) -> None:
    session_ids(session_dir)  # covers 2
    land_transcript(tmp_path, SESSION, "-home-me-one", ["msg_theirs"])  # 3: a writer that does not know it
    land_transcript(tmp_path, SESSION, "-home-me-one", ["msg_ours"])  # 4: ours, which appends
    add_landed(session_dir, lambda: [(CALL, "msg_ours")], 4, 4)
    assert _lines(session_dir)[-2:] == ["call msg_ours", "seq 2"]  # 3 is not covered yet
    assert {"msg_theirs", "msg_ours"} <= session_ids(session_dir)[CALL]
    assert _lines(session_dir)[-2:] == ["call msg_theirs", "seq 4"]
