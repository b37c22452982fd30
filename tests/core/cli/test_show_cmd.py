"""``asz-pipeline show SESSION ID``: the landed record behind a tool-use id or a record id, read from
the root alone, strictly and whole, and every other outcome by name with exit 1."""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import pytest

from asz_core.cli.app import EXIT_CONFIG, EXIT_FAILED, EXIT_OK, App
from asz_core.cli.commands.show_cmd import SHOWN
from asz_core.cli.main import main
from asz_core.sessiondata import open_file
from tests.core.view.view_helpers import SESSION, land, prompt, reply, request, response, result


def show(root: Path, *args: str) -> tuple[int, str, str]:
    config = root.parent / "asz.yaml"
    config.write_text(f"storage:\n  root: {root}\nadapters: []\n", "utf-8")
    out, err = io.StringIO(), io.StringIO()
    code = main(["show", "--config", str(config), *args], app=App(out=out, err=err))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """One session: a prompt, a call that runs tool ``t1``, its result and a last call, with
    both bodies of the first call."""
    land(tmp_path / "root", {"main": [prompt("P1", "the secret plan"), reply("m1", tools=("t1",)),
                                      result("t1", "P1", text="the tool's output"), reply("m2")]},
         [request("q1", "P1"), response("req_1", "m1")])
    return tmp_path / "root"


def _lines(root: Path, group: str) -> list[bytes]:
    """The landed record lines of the session's one file under ``group``."""
    (path,) = (root / SESSION).glob(f"{group}/*.sd")
    with open_file(path) as landed:
        return [line for line, _ in landed.raw_records()]


def test_a_tool_use_id_shows_its_call_and_its_result_as_they_landed(root: Path) -> None:
    code, out, err = show(root, SESSION, "t1")
    assert (code, err) == (EXIT_OK, "")
    lines = _lines(root, "streams/main")
    (file,) = (p.relative_to(root).as_posix() for p in (root / SESSION).glob("streams/main/*.sd"))
    assert out == (
        "tool-use id t1 resolves to 2 block(s)\n\n"
        "── tool_use  block 1 of record  stream=main\n"
        "   index : seq=1 row=2\n"
        f"   file  : {file}\n"
        "   source: ord=2 off=41 sha=" + _sha(2) + "   (from the record's envelope)\n"
        f"   payload ({len(lines[1])} bytes):\n   {lines[1].decode()}\n\n"
        "── tool_result  block 0 of record  stream=main\n"
        "   index : seq=1 row=3\n"
        f"   file  : {file}\n"
        "   source: ord=3 off=82 sha=" + _sha(3) + "   (from the record's envelope)\n"
        f"   payload ({len(lines[2])} bytes):\n   {lines[2].decode()}\n\n")
    assert "the tool's output" in out and "the secret plan" not in out  # only what was asked for


def _sha(ord_: int) -> str:
    import hashlib

    return hashlib.sha256(f"{ord_}".encode()).hexdigest()[:12]  # as view_helpers numbers a record


def test_a_record_id_shows_the_first_record_landed_with_it_and_counts_its_repeats(root: Path) -> None:
    code, out, _ = show(root, SESSION, "main-1")
    assert code == EXIT_OK
    assert out.startswith("record id main-1  stream=main\n   index : seq=1 row=1\n")
    assert "the secret plan" in out and "landed" not in out
    # the same lines landed again, as a pass killed before its cursor moved lands them
    land(root, {"main": [prompt("P1", "the secret plan")]})
    code, again, _ = show(root, SESSION, "main-1")
    assert code == EXIT_OK and again.startswith(out.rstrip("\n"))
    assert again.endswith("   (landed 2 times; the first is shown, the others are repeats)\n")


def test_a_body_is_shown_by_its_record_id_its_line_cut_unless_full(root: Path) -> None:
    (line, _) = _lines(root, "provider_body")
    assert len(line) > SHOWN
    code, out, _ = show(root, SESSION, "q1.request")
    assert code == EXIT_OK and out.startswith("record id q1.request  provider_body\n   index : seq=2 row=1\n")
    assert f"   payload ({len(line)} bytes, truncated):\n   {line[:SHOWN].decode()}…\n" in out
    code, full, _ = show(root, SESSION, "q1.request", "--full")
    assert code == EXIT_OK and f"   payload ({len(line)} bytes):\n   {line.decode()}\n" in full


def test_an_unknown_session_is_named_and_exit_1(root: Path) -> None:
    for name in ("0f0f0f0f-1111-4222-8333-000000000000", "../root", "_conversations", ".", "a/b"):
        code, out, err = show(root, name, "t1")
        assert (code, out) == (EXIT_FAILED, ""), name
        assert err.startswith("show: unknown session") and "`asz-pipeline view` lists the sessions" in err


def test_a_session_that_is_a_link_is_not_followed(root: Path, tmp_path: Path) -> None:
    shutil.copytree(root / SESSION, tmp_path / "elsewhere")
    other = "0f0f0f0f-1111-4222-8333-555555555555"
    (root / other).symlink_to(tmp_path / "elsewhere")
    code, out, err = show(root, other, "t1")
    assert (code, out) == (EXIT_FAILED, "") and err.startswith("show: unknown session")


def test_an_id_no_record_carries_is_not_found_and_prints_nothing_of_the_session(root: Path) -> None:
    code, out, err = show(root, SESSION, "toolu_nothing")
    assert (code, out) == (EXIT_FAILED, "")
    assert err.startswith("show: not found: no record of session") and "toolu_nothing" in err
    assert "secret" not in err


def test_a_stream_directory_that_is_a_link_is_not_read(root: Path, tmp_path: Path) -> None:
    main_dir = root / SESSION / "streams" / "main"
    shutil.move(main_dir, tmp_path / "moved")
    main_dir.symlink_to(tmp_path / "moved")
    code, out, err = show(root, SESSION, "t1")
    assert (code, out) == (EXIT_FAILED, "") and err.startswith("show: not found")


def test_a_damaged_file_is_unreadable_and_nothing_of_it_is_shown(root: Path) -> None:
    (path,) = (root / SESSION).glob("streams/main/*.sd")
    os.chmod(path, 0o600)
    data = bytearray(path.read_bytes())
    data[data.index(b"the tool's output")] ^= 0x20  # the line still reads; the file's digest does not
    path.write_bytes(bytes(data))
    code, out, err = show(root, SESSION, "t1")
    assert (code, out) == (EXIT_FAILED, "")
    assert f"show: unreadable: {path.relative_to(root).as_posix()}: " in err
    assert "t1 is in none of the readable files" in err and "tool's output" not in err
    # an id found in a file that reads is shown, and the answer is still exit 1: the damaged
    # file may carry it too
    code, out, err = show(root, SESSION, "q1.request")
    assert code == EXIT_FAILED and out.startswith("record id q1.request") and "show: unreadable:" in err


def test_show_needs_a_session_and_an_id(root: Path) -> None:
    code, out, err = show(root, SESSION)
    assert (code, out) == (EXIT_CONFIG, "") and "ID" in err
