"""kiro-cli's database: a row that grows by one turn lands one record; a rewrite of landed turns
is a sticky conflict; the database is opened read-only and only ``conversations_v2`` is read."""

from __future__ import annotations

import copy
import hashlib
import sqlite3
from contextlib import closing

import pytest
from kiro_helpers import DB_ID, configure, database_path, landed, update_history

import asz_adapters.kiro.cli_database as cli_database
from asz_core.sessiondata.jsonbytes import compact


def _next_turn(history):
    turn = copy.deepcopy(history[-1])
    turn["user"]["content"] = {"Prompt": {"prompt": "Now delete hello.txt."}}
    turn["user"]["timestamp"] = "2026-07-09T10:01:00.5+05:30"
    turn["assistant"] = {"Response": {"message_id": "msg-response-0004", "content": "Deleted."}}
    turn["request_metadata"]["request_id"] = "req-0004"
    turn["request_metadata"]["message_id"] = "msg-response-0004"
    turn["request_metadata"]["request_start_timestamp_ms"] = 1783571460500
    return turn


def test_a_row_that_grows_by_one_turn_lands_one_record(asz_pass, kiro_copy, assert_root_verifies):
    configure(asz_pass, kiro_copy)
    asz_pass.run()
    turns = landed(asz_pass.root, DB_ID)
    assert [t.ord for t in turns] == [1, 2, 3]
    update_history(kiro_copy, lambda h: h.append(_next_turn(h)))
    summary = asz_pass.run()
    assert (summary.totals.landed, summary.totals.records) == (1, 1)
    *_, last = landed(asz_pass.root, DB_ID)
    assert (last.ord, last.off) == (4, turns[-1].off + turns[-1].bytes + 1)
    assert (last.id, last.call, last.time) == ("msg-response-0004", "req-0004", "2026-07-09T04:31:00.5Z")
    assert [p.text for p in last.parts] == ["Now delete hello.txt.", "Deleted."]
    assert (last.trigger, last.flags) == ("external", ["external_input"])
    assert asz_pass.run().totals.records == 0
    assert_root_verifies(asz_pass.root)


def test_a_turn_record_covers_the_turns_compacted_bytes(asz_pass, kiro_corpus):
    """ord = index + 1; bytes/sha over the compacted turn; off = sum of (bytes + 1) before it."""
    import json

    configure(asz_pass, kiro_corpus)
    asz_pass.run()
    with closing(sqlite3.connect(database_path(kiro_corpus))) as db:
        (value,) = db.execute("SELECT value FROM conversations_v2").fetchone()
    history = json.loads(value)["history"]
    offset = 0
    for index, record in enumerate(landed(asz_pass.root, DB_ID)):
        raw = compact(json.dumps(history[index]).encode())
        assert (record.ord, record.off, record.bytes) == (index + 1, offset, len(raw))
        assert record.sha == hashlib.sha256(raw).hexdigest()[:12]
        offset += len(raw) + 1


def test_a_rewritten_landed_turn_is_a_sticky_conflict(asz_pass, kiro_copy, assert_root_verifies):
    configure(asz_pass, kiro_copy)
    asz_pass.run()

    def rewrite(history):
        history[0]["user"]["content"]["Prompt"]["prompt"] = "something else"
        history.append(_next_turn(history))

    update_history(kiro_copy, rewrite)
    for _ in range(2):
        summary = asz_pass.run()
        assert (summary.totals.conflicts, summary.totals.records) == (1, 0)
        assert summary.failed
    assert any("already landed was rewritten" in w for w in asz_pass.reporter.warnings)
    cursor = (asz_pass.root / DB_ID / "streams" / "main" / "transcript.cursor").read_text()
    assert "state conflict" in cursor

    def restore(history):
        history[0]["user"]["content"]["Prompt"]["prompt"] = (
            "Create a file hello.txt containing exactly: hello from kiro. Then run ls.")

    update_history(kiro_copy, restore)
    summary = asz_pass.run()
    assert (summary.totals.conflicts, summary.totals.records) == (0, 1)  # the new turn, now
    assert_root_verifies(asz_pass.root)


def test_a_shorter_history_is_a_conflict(asz_pass, kiro_copy):
    configure(asz_pass, kiro_copy)
    asz_pass.run()
    update_history(kiro_copy, lambda h: h.pop())
    summary = asz_pass.run()
    assert summary.totals.conflicts == 1
    assert any("holds 2 turn(s) but 3 landed" in w for w in asz_pass.reporter.warnings)


def test_a_lost_cursor_write_lands_no_turn_twice(asz_pass, kiro_copy, assert_root_verifies):
    configure(asz_pass, kiro_copy)
    asz_pass.run()
    cursor = asz_pass.root / DB_ID / "streams" / "main" / "transcript.cursor"
    before = cursor.read_bytes()
    update_history(kiro_copy, lambda h: h.append(_next_turn(h)))
    assert asz_pass.run().totals.records == 1
    cursor.write_bytes(before)  # as if the pass crashed after landing, before the cursor write
    summary = asz_pass.run()
    assert (summary.totals.records, summary.totals.conflicts) == (0, 0)
    assert "ord 4" in cursor.read_text()
    assert_root_verifies(asz_pass.root)


def test_an_unchanged_row_is_not_read_again(asz_pass, kiro_corpus, monkeypatch):
    configure(asz_pass, kiro_corpus)
    asz_pass.run()

    def fail(unit):
        raise AssertionError("the value was read although the row did not change")

    monkeypatch.setattr("asz_adapters.kiro.db_collector.read_value", fail)
    assert asz_pass.run().totals.sources == 6


def test_a_row_deleted_after_it_was_listed_counts_gone(asz_pass, kiro_copy, monkeypatch):
    configure(asz_pass, kiro_copy)
    asz_pass.run()
    update_history(kiro_copy, lambda h: h.append(_next_turn(h)))

    def delete_then_read(unit):
        with closing(sqlite3.connect(database_path(kiro_copy))) as db, db:
            db.execute("DELETE FROM conversations_v2")
        return cli_database.read_value(unit)

    monkeypatch.setattr("asz_adapters.kiro.db_collector.read_value", delete_then_read)
    summary = asz_pass.run()
    assert (summary.totals.gone, summary.totals.records, summary.totals.errors) == (1, 0, 0)
    assert "state source_gone" in (asz_pass.root / DB_ID / "streams/main/transcript.cursor").read_text()
    assert len(landed(asz_pass.root, DB_ID)) == 3


def test_only_conversations_v2_is_read_and_the_file_is_not_written(asz_pass, kiro_copy, monkeypatch):
    path = database_path(kiro_copy)
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE auth_kv (key TEXT, value TEXT)")
        db.execute("INSERT INTO auth_kv VALUES ('token', 'secret')")
        db.execute("CREATE TABLE history (command TEXT)")
    before = path.read_bytes()
    statements: list[str] = []
    real_connect = sqlite3.connect

    def traced(*args, **kwargs):
        connection = real_connect(*args, **kwargs)
        connection.set_trace_callback(statements.append)
        return connection

    monkeypatch.setattr(cli_database.sqlite3, "connect", traced)
    configure(asz_pass, kiro_copy)
    assert asz_pass.run().totals.records == 77
    assert statements and all("conversations_v2" in s or "sqlite_master" in s for s in statements)
    assert not any(word in s for s in statements for word in ("auth_kv", "FROM history", "FROM state"))
    assert path.read_bytes() == before
    # the adapter's own connection is read-only
    with pytest.raises(sqlite3.OperationalError), cli_database._connect(path) as db:
        db.execute("DELETE FROM conversations_v2")


def test_max_delta_bytes_cuts_turns_into_files_that_chain(asz_pass, kiro_copy, assert_root_verifies):
    def widen(history):
        for turn in history:
            for reply in turn["assistant"].values():
                reply["content"] = "x" * 2000

    update_history(kiro_copy, widen)
    configure(asz_pass, kiro_copy, collector={"max_delta_bytes": 4096})
    asz_pass.run()
    files = list((asz_pass.root / DB_ID / "streams" / "main").glob("transcript-*.sd"))
    assert len(files) == 3 and all(f.stat().st_size <= 4096 for f in files)

    def grow_large(history):
        turn = _next_turn(history)
        turn["assistant"]["Response"]["content"] = "y" * 20000
        history.append(turn)

    update_history(kiro_copy, grow_large)
    assert asz_pass.run().totals.records == 1
    *_, last = landed(asz_pass.root, DB_ID)
    assert last.ord == 4 and last.bytes > 20000
    assert [p.state for p in last.parts] == ["available", "too_large"]  # reduced to fit, alone
    assert_root_verifies(asz_pass.root)


def test_a_value_that_is_not_json_is_unreadable(asz_pass, kiro_copy):
    with closing(sqlite3.connect(database_path(kiro_copy))) as db, db:
        db.execute("UPDATE conversations_v2 SET value = '{\"history\": [' ")
    configure(asz_pass, kiro_copy)
    summary = asz_pass.run()
    assert (summary.totals.unreadable, summary.totals.errors) == (1, 0)
    assert not (asz_pass.root / DB_ID).exists() or not landed(asz_pass.root, DB_ID)


def test_a_database_another_writer_holds_waits(asz_pass, kiro_copy, monkeypatch):
    monkeypatch.setattr(cli_database, "_BUSY_TIMEOUT_S", 0.05)
    configure(asz_pass, kiro_copy)
    with closing(sqlite3.connect(database_path(kiro_copy), isolation_level=None)) as holder:
        holder.execute("BEGIN EXCLUSIVE")
        summary = asz_pass.run()
        holder.execute("ROLLBACK")
    assert (summary.totals.waiting, summary.totals.unreadable, summary.failed) == (1, 0, False)
    assert not (asz_pass.root / DB_ID).exists()
    assert asz_pass.run().totals.records == 3  # the lock is gone: it lands


def test_a_file_that_is_not_a_database_is_unreadable(asz_pass, kiro_copy):
    database_path(kiro_copy).write_bytes(b"not sqlite at all" * 100)
    configure(asz_pass, kiro_copy)
    summary = asz_pass.run()
    assert (summary.totals.unreadable, summary.totals.waiting, summary.failed) == (1, 0, False)
