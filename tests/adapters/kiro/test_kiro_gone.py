"""Kiro sources deleted since they landed: a session deleted whole, a child stream deleted while
its parent remains, a database row deleted. Their cursors say ``source_gone`` once, every pass
counts them ``gone``, what landed stays; nothing of another adapter's is touched."""

from __future__ import annotations

import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

from kiro_helpers import CLI_ID, DB_ID, IDE_BUCKET, IDE_CHILD, IDE_ID, add_ide_sub_agent, configure, database_path

import asz_adapters.kiro.cli_database as cli_database

CHILD_ID = "bbbbbbbb-2222-4524-95d0-000000000002"
CC_SLUG = "-tmp-tmphwsm9u6c"
CC_ID = "063004b7-9c12-446a-a977-ca545d9e3cac"


def _cli(tree: Path) -> Path:
    return tree / ".kiro" / "sessions" / "cli"


def _snapshot(directory: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every file under ``directory``: inode, mtime and bytes (what "not rewritten" means)."""
    out = {}
    for path in sorted(directory.rglob("*")):
        if path.is_file() and not path.name.startswith("."):
            st = path.stat()
            out[str(path.relative_to(directory))] = (st.st_ino, st.st_mtime_ns, path.read_bytes())
    return out


def _landed(directory: Path) -> dict[str, tuple[int, int, bytes]]:
    return {k: v for k, v in _snapshot(directory).items() if k.endswith(".sd")}


def _state(cursor: Path) -> str:
    return dict(line.split(" ", 1) for line in cursor.read_text().splitlines())["state"]


def _gone_twice(asz_pass, expected: int) -> None:
    """The pass that notices counts ``expected``; the next counts the same and rewrites nothing."""
    first = asz_pass.run()
    assert (first.totals.gone, first.totals.conflicts, first.totals.errors) == (expected, 0, 0)
    before = _snapshot(asz_pass.root)
    second = asz_pass.run()
    assert (second.totals.gone, second.totals.landed) == (expected, 0)
    assert _snapshot(asz_pass.root) == before


def test_a_cli_session_deleted_whole_is_marked_gone(asz_pass, kiro_copy, assert_root_verifies):
    configure(asz_pass, kiro_copy, database=False)
    assert asz_pass.run().totals.gone == 0
    landed = _landed(asz_pass.root / CLI_ID)
    for path in _cli(kiro_copy).glob(f"{CLI_ID}.*"):
        path.unlink()
    _gone_twice(asz_pass, 2)  # the events log and the metadata document
    main = asz_pass.root / CLI_ID / "streams" / "main"
    assert [_state(main / c) for c in ("transcript.cursor", "meta.cursor")] == ["source_gone"] * 2
    assert _landed(asz_pass.root / CLI_ID) == landed
    assert_root_verifies(asz_pass.root)


def test_a_session_all_marked_is_counted_without_reading_its_cursors(asz_pass, kiro_copy, monkeypatch):
    configure(asz_pass, kiro_copy, database=False)
    asz_pass.run()
    for path in _cli(kiro_copy).glob(f"{CLI_ID}.*"):
        path.unlink()
    _gone_twice(asz_pass, 2)

    def fail(*args, **kwargs):
        raise AssertionError("a session whose places are all marked had its cursors read")

    monkeypatch.setattr("asz_core.root.places.landed_places", fail)
    assert asz_pass.run().totals.gone == 2
    (asz_pass.root / CLI_ID / "streams" / "main" / "meta.cursor").touch()  # a cursor changed: read again
    monkeypatch.undo()
    assert asz_pass.run().totals.gone == 2


def test_an_ide_session_deleted_whole_is_marked_gone(asz_pass, kiro_copy, assert_root_verifies):
    configure(asz_pass, kiro_copy, database=False)
    asz_pass.run()
    landed = _landed(asz_pass.root / IDE_ID)
    shutil.rmtree(kiro_copy / ".kiro" / "sessions" / IDE_BUCKET / IDE_ID)
    _gone_twice(asz_pass, 2)
    main = asz_pass.root / IDE_ID / "streams" / "main"
    assert [_state(main / c) for c in ("transcript.cursor", "meta.cursor")] == ["source_gone"] * 2
    assert _landed(asz_pass.root / IDE_ID) == landed
    assert_root_verifies(asz_pass.root)


def _add_cli_child(tree: Path) -> None:
    """A CLI session whose ``.json`` names ``CLI_ID`` its parent: it lands as a stream of it."""
    cli = _cli(tree)
    shutil.copy(cli / f"{CLI_ID}.jsonl", cli / f"{CHILD_ID}.jsonl")
    meta = json.loads((cli / f"{CLI_ID}.json").read_text())
    meta.update(session_id=CHILD_ID, parent_session_id=CLI_ID)
    (cli / f"{CHILD_ID}.json").write_text(json.dumps(meta))


def test_a_child_deleted_while_its_parent_remains(asz_pass, kiro_copy, assert_root_verifies):
    _add_cli_child(kiro_copy)
    configure(asz_pass, kiro_copy, database=False)
    asz_pass.run()
    child = asz_pass.root / CLI_ID / "streams" / CHILD_ID
    assert (child / "transcript.cursor").is_file()
    landed = _landed(asz_pass.root / CLI_ID)
    for path in _cli(kiro_copy).glob(f"{CHILD_ID}.*"):
        path.unlink()
    _gone_twice(asz_pass, 2)
    assert [_state(child / c) for c in ("transcript.cursor", "meta.cursor")] == ["source_gone"] * 2
    main = asz_pass.root / CLI_ID / "streams" / "main"
    assert [_state(main / c) for c in ("transcript.cursor", "meta.cursor")] == ["active"] * 2
    assert _landed(asz_pass.root / CLI_ID) == landed
    assert_root_verifies(asz_pass.root)


def test_a_parent_deleted_while_its_child_remains(asz_pass, kiro_copy, assert_root_verifies):
    _add_cli_child(kiro_copy)
    configure(asz_pass, kiro_copy, database=False)
    asz_pass.run()
    for path in _cli(kiro_copy).glob(f"{CLI_ID}.*"):
        path.unlink()
    _gone_twice(asz_pass, 2)
    main = asz_pass.root / CLI_ID / "streams" / "main"
    assert [_state(main / c) for c in ("transcript.cursor", "meta.cursor")] == ["source_gone"] * 2
    child = asz_pass.root / CLI_ID / "streams" / CHILD_ID
    assert _state(child / "transcript.cursor") == "active"
    assert_root_verifies(asz_pass.root)


def _delete_row(tree: Path) -> None:
    with closing(sqlite3.connect(database_path(tree))) as db, db:
        db.execute("DELETE FROM conversations_v2 WHERE conversation_id = ?", (DB_ID,))


def test_a_database_row_deleted_is_marked_gone(asz_pass, kiro_copy, assert_root_verifies):
    configure(asz_pass, kiro_copy)
    asz_pass.run()
    cursor = asz_pass.root / DB_ID / "streams" / "main" / "transcript.cursor"
    keys = [line.split(" ")[0] for line in cursor.read_text().splitlines()]
    landed = _landed(asz_pass.root / DB_ID)
    _delete_row(kiro_copy)
    _gone_twice(asz_pass, 1)
    assert _state(cursor) == "source_gone"
    assert [line.split(" ")[0] for line in cursor.read_text().splitlines()] == keys  # its keys kept
    assert _landed(asz_pass.root / DB_ID) == landed
    assert_root_verifies(asz_pass.root)


def test_a_database_deleted_marks_its_rows_gone_and_one_not_mounted_nothing(asz_pass, kiro_copy,
                                                                          assert_root_verifies):
    configure(asz_pass, kiro_copy)
    asz_pass.run()
    cursor = asz_pass.root / DB_ID / "streams" / "main" / "transcript.cursor"
    landed = _landed(asz_pass.root / DB_ID)
    database = database_path(kiro_copy)
    hidden = database.parent.with_name("unmounted")
    database.parent.rename(hidden)  # its directory not there: nothing can be decided
    summary = asz_pass.run()
    assert summary.totals.gone == 0 and _state(cursor) == "active"
    hidden.rename(database.parent)
    for path in database.parent.glob(database.name + "*"):
        path.unlink()  # kiro-cli reset: the file is deleted, its directory stays
    _gone_twice(asz_pass, 1)
    assert _state(cursor) == "source_gone"
    assert _landed(asz_pass.root / DB_ID) == landed
    assert_root_verifies(asz_pass.root)


def test_a_busy_or_unconfigured_database_marks_nothing(asz_pass, kiro_copy, monkeypatch):
    configure(asz_pass, kiro_copy)
    asz_pass.run()
    cursor = asz_pass.root / DB_ID / "streams" / "main" / "transcript.cursor"
    before = cursor.read_bytes()
    _delete_row(kiro_copy)
    monkeypatch.setattr(cli_database, "_BUSY_TIMEOUT_S", 0.05)
    with closing(sqlite3.connect(database_path(kiro_copy), isolation_level=None)) as holder:
        holder.execute("BEGIN EXCLUSIVE")
        summary = asz_pass.run()
        holder.execute("ROLLBACK")
    assert (summary.totals.gone, summary.totals.waiting) == (0, 1)
    assert cursor.read_bytes() == before
    configure(asz_pass, kiro_copy, database=False)  # source_root set, no cli_database: not read
    assert asz_pass.run().totals.gone == 0
    assert cursor.read_bytes() == before
    configure(asz_pass, kiro_copy)
    assert asz_pass.run().totals.gone == 1
    assert _state(cursor) == "source_gone"


def test_a_claude_code_session_in_the_same_root_is_never_touched(asz_pass, kiro_copy, corpus,
                                                                tmp_path, assert_root_verifies):
    cc_projects = corpus / "claude-code" / "projects"
    projects = tmp_path / "projects"
    (projects / CC_SLUG).mkdir(parents=True)
    shutil.copy(cc_projects / CC_SLUG / f"{CC_ID}.jsonl", projects / CC_SLUG / f"{CC_ID}.jsonl")
    kiro = {"name": "kiro", "source_root": str(kiro_copy / ".kiro")}
    asz_pass.configure(adapters=[{"name": "claude-code-local", "source_root": str(projects)}, kiro])
    asz_pass.run()
    claude = _snapshot(asz_pass.root / CC_ID)
    assert claude
    (projects / CC_SLUG / f"{CC_ID}.jsonl").unlink()
    for path in _cli(kiro_copy).glob(f"{CLI_ID}.*"):
        path.unlink()
    asz_pass.configure(adapters=[kiro])  # kiro alone: only its own session is marked
    (asz_pass.root / ".landed-kiro.state").unlink()  # and its list is rebuilt from the root
    assert asz_pass.run().totals.gone == 2
    assert _snapshot(asz_pass.root / CC_ID) == claude
    listed = json.loads((asz_pass.root / ".landed-kiro.state").read_text())["sessions"]
    assert CLI_ID in listed and CC_ID not in listed
    assert_root_verifies(asz_pass.root)


def test_an_excluded_session_deleted_whole_is_left_alone(asz_pass, kiro_copy):
    configure(asz_pass, kiro_copy, database=False)
    asz_pass.run()
    for path in _cli(kiro_copy).glob(f"{CLI_ID}.*"):
        path.unlink()
    cursor = asz_pass.root / CLI_ID / "streams" / "main" / "transcript.cursor"
    before = cursor.read_bytes()
    configure(asz_pass, kiro_copy, database=False, exclude=["/home/dev/project"])
    assert asz_pass.run().totals.gone == 0
    assert cursor.read_bytes() == before


def test_an_ide_sub_agent_deleted_while_its_parent_remains(asz_pass, kiro_copy, assert_root_verifies):
    sessions = kiro_copy / ".kiro" / "sessions"
    parent_dir = sessions / IDE_BUCKET / IDE_ID
    child_dir = add_ide_sub_agent(kiro_copy, parent_dir)
    configure(asz_pass, kiro_copy, database=False)
    asz_pass.run()
    child = asz_pass.root / IDE_ID / "streams" / IDE_CHILD
    assert (child / "transcript.cursor").is_file()
    shutil.rmtree(child_dir)
    _gone_twice(asz_pass, 2)
    assert [_state(child / c) for c in ("transcript.cursor", "meta.cursor")] == ["source_gone"] * 2
    main = asz_pass.root / IDE_ID / "streams" / "main"
    assert _state(main / "transcript.cursor") == "active"
    assert_root_verifies(asz_pass.root)


def test_a_home_that_is_not_there_marks_nothing(asz_pass, kiro_copy):
    configure(asz_pass, kiro_copy, database=False)
    asz_pass.run()
    cursor = asz_pass.root / CLI_ID / "streams" / "main" / "transcript.cursor"
    before = cursor.read_bytes()
    (kiro_copy / ".kiro").rename(kiro_copy / "unmounted")
    summary = asz_pass.run()
    assert (summary.totals.gone, summary.totals.errors) == (0, 0)
    assert cursor.read_bytes() == before


def test_ownership_is_kiro_own_paths_for_the_id_each_place_holds():
    from asz_adapters.kiro.gone import owns
    from asz_core.root.places import LandedPlace

    def place(subdir, kind, source):
        return LandedPlace(subdir, kind, source, "active")

    assert owns(CLI_ID, place("streams/main", "transcript", f"sessions/cli/{CLI_ID}.jsonl"))
    assert owns(CLI_ID, place("streams/main", "agent_meta", f"sessions/cli/{CLI_ID}.json"))
    assert owns(CLI_ID, place(f"streams/{CHILD_ID}", "transcript", f"sessions/cli/{CHILD_ID}.jsonl"))
    assert owns(IDE_ID, place("streams/main", "transcript", f"sessions/{IDE_BUCKET}/{IDE_ID}/messages.jsonl"))
    assert owns(DB_ID, place("streams/main", "transcript",
                             f"../.local/share/kiro-cli/data.sqlite3#conversations_v2/{DB_ID}"))
    # Claude Code's sources, another id than the place holds, a kind that does not match
    assert not owns(CC_ID, place("streams/main", "transcript", f"{CC_SLUG}/{CC_ID}.jsonl"))
    assert not owns(CC_ID, place("streams/main", "transcript", f"sessions/{CC_ID}.jsonl"))
    assert not owns(CLI_ID, place("streams/main", "transcript", f"sessions/cli/{CHILD_ID}.jsonl"))
    assert not owns(CLI_ID, place("streams/main", "agent_meta", f"sessions/cli/{CLI_ID}.jsonl"))
    assert not owns(CLI_ID, place(f"streams/{CHILD_ID}", "transcript",
                                  f"../x.sqlite3#conversations_v2/{CLI_ID}"))
