"""Links planted where a command walks or lists a session: ``streams/``, a stream's directory, a
cursor. No walk (a repack's, a removal's check of what is landed, the conflicts listing, the
page's) lists, reads or stats anything through one, whether or not anything entered the root
before the command did; each gives the session its named outcome and goes on with the rest.

The roots are the bundled demo's Claude Code sessions, landed and parsed, and a scenario build
the removal keeps or lets go; what a link points at lies outside the root and is checked to be
exactly as it was.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from asz_core.cli.app import App
from asz_core.page.catalogue import Catalogue
from asz_core.testing import PassRunner
from tests.core.removal import test_keep_rules as keep
from tests.core.removal.test_keep_rules import SESSION as BUILT
from tests.core.removal.test_keep_rules import Copy
from tests.faults import test_reader_links as reader
from tests.faults.test_reader_links import SESSION
from tests.helpers import run_cli

#: the fixtures those modules land their roots with, used here by name
base, rx, copy, parsed = keep.base, keep.rx, keep.copy, reader.parsed

#: a modification time no directory of the root has: 2100-01-01, in nanoseconds
FUTURE_NS = 4102444800 * 10**9


def _move_out(place: Path, outside: Path) -> dict[str, bytes]:
    """``place`` moved to ``outside`` and a link to it left in its name; every file outside by
    name with its bytes, as it is now."""
    shutil.move(place, outside)
    os.symlink(outside, place)
    return _files(outside)


def _files(outside: Path) -> dict[str, bytes]:
    return {str(p.relative_to(outside)): p.read_bytes() for p in sorted(outside.rglob("*")) if p.is_file()}


def _root_copy(root: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A copy of ``root`` nothing in this process has entered, and a configuration naming it."""
    copied = tmp_path / "copy"
    shutil.copytree(root, copied, symlinks=True, ignore=shutil.ignore_patterns(".lock"))
    config = tmp_path / "copy.yaml"
    config.write_text(f"storage:\n  root: {copied}\nadapters: []\n", encoding="utf-8")
    return copied, config


@pytest.mark.parametrize("linked", ["streams", "streams/AGENT"])
def test_a_removal_keeps_a_session_with_a_linked_stream_directory_and_names_the_link(
        copy: Copy, tmp_path: Path, capsys: pytest.CaptureFixture[str], linked: str) -> None:
    """Its landed files and cursors behind the link are out of sight: judged without them, the
    session would say nothing is landed, or wait for good for a stream it cannot see."""
    copy.configure()
    streams = copy.root / BUILT / "streams"
    agent = next(p.name for p in streams.iterdir() if p.name != "main")
    place = copy.root / BUILT / linked.replace("AGENT", agent)
    outside = tmp_path / "outside"
    before = _move_out(place, outside)
    copy.run()
    err = capsys.readouterr().err
    assert f"kept: {BUILT}: " in err and f"{BUILT}/{linked.replace('AGENT', agent)} is a link" in err, err
    assert "remove the link" in err
    assert copy.whole() and _files(outside) == before


@pytest.mark.parametrize("linked", ["streams/main", "streams/main/transcript.cursor"])
def test_a_repack_refuses_a_session_with_a_link_in_it_and_repacks_the_others(
        parsed: Path, asz_pass: PassRunner, tmp_path: Path, linked: str) -> None:
    """A linked stream directory would be left out of DEST without a word, a linked cursor read
    from outside the root: the session is refused before anything of it is written."""
    place = parsed / SESSION / linked
    outside = tmp_path / "outside"
    if place.is_dir():
        before = _move_out(place, outside)
    else:
        outside.mkdir()
        shutil.copyfile(place, outside / place.name)
        place.unlink()
        os.symlink(outside / place.name, place)
        before = _files(outside)
    dest = tmp_path / "dest"
    done = run_cli("repack", "--config", str(asz_pass.config_path), str(dest), "--json")
    assert done.returncode == 1, done.stderr
    rows = {row["session"]: row for row in json.loads(done.stdout)["sessions"]}
    assert f"{SESSION}/{linked} is a link" in rows[SESSION]["refused"], rows[SESSION]
    assert "remove the link" in rows[SESSION]["refused"]
    assert not (dest / SESSION).exists()
    others = [row for session, row in rows.items() if session != SESSION]
    assert others and all(not row["refused"] and row["rounds"] for row in others), others
    assert _files(outside) == before


def test_conflicts_lists_no_cursor_reached_through_a_linked_streams_directory(
        parsed: Path, tmp_path: Path) -> None:
    """A cursor outside the root that says ``conflict`` is not a conflict of the root's."""
    copied, config = _root_copy(parsed, tmp_path)
    outside = tmp_path / "outside"
    _move_out(copied / SESSION / "streams", outside)
    cursor = outside / "main" / "transcript.cursor"
    cursor.chmod(0o600)
    cursor.write_bytes(cursor.read_bytes().replace(b"state active", b"state conflict"))
    before = _files(outside)
    assert b"state conflict" in before["main/transcript.cursor"]
    done = run_cli("conflicts", "--config", str(config), "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["conflicts"] == []
    assert _files(outside) == before


def test_the_page_of_a_command_stats_nothing_through_a_linked_streams_directory(
        parsed: Path, tmp_path: Path) -> None:
    """As ``serve`` builds it: from the configuration, on a root nothing entered before the
    command; a stream directory outside, newer than any of the root's, is never the root's last
    landing."""
    copied, config = _root_copy(parsed, tmp_path)
    outside = tmp_path / "outside"
    _move_out(copied / SESSION / "streams", outside)
    for directory in (outside, *outside.iterdir()):
        os.utime(directory, ns=(FUTURE_NS, FUTURE_NS))
    catalogue = Catalogue(App(config_path=str(config)).config.root)
    newest = catalogue.last_landed_ms()
    assert newest is not None and newest < FUTURE_NS // 10**6
    assert SESSION in catalogue.session_ids()
