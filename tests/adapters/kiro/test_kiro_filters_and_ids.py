"""include/exclude judge a session by its directory; ids not in Kiro's own form are refused."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing

import pytest
from kiro_helpers import BROKEN_ID, CLI_ID, DB_ID, IDE_BUCKET, IDE_ID, configure, database_path


def _sessions(runner):
    return {p.name for p in runner.root.iterdir() if p.is_dir()} if runner.root.exists() else set()


@pytest.mark.parametrize(("include", "exclude", "expected"), [
    # the CLI session and the database row ran in /home/dev/project; the IDE one in c:\Users\...;
    # the broken CLI session has no .json, so no known directory
    ([], [], {CLI_ID, BROKEN_ID, IDE_ID, DB_ID}),
    (["/home/dev/project"], [], {CLI_ID, DB_ID}),
    ([], ["/home/dev/**"], {BROKEN_ID, IDE_ID}),
    (["c--Users-dev-*"], [], {IDE_ID}),
    ([], ["c--Users-dev-workspace-demo"], {CLI_ID, BROKEN_ID, DB_ID}),
])
def test_sessions_are_judged_by_their_directory(asz_pass, kiro_corpus, include, exclude, expected):
    configure(asz_pass, kiro_corpus, include=include, exclude=exclude)
    summary = asz_pass.run()
    assert _sessions(asz_pass) == expected
    assert summary.totals.sessions == len(expected)


def test_ids_not_in_kiros_form_are_refused(asz_pass, kiro_copy):
    cli = kiro_copy / ".kiro" / "sessions" / "cli"
    (cli / "not-a-uuid.jsonl").write_bytes((cli / f"{CLI_ID}.jsonl").read_bytes())
    child = "ffffffff-5555-4524-95d0-000000000005"
    meta = json.loads((cli / f"{CLI_ID}.json").read_text())
    meta.update(session_id=child, parent_session_id="../../etc")
    (cli / f"{child}.json").write_text(json.dumps(meta))
    (kiro_copy / ".kiro" / "sessions" / IDE_BUCKET / "sess_..%2F").mkdir()
    (kiro_copy / ".kiro" / "sessions" / IDE_BUCKET / "sess_nope").mkdir()
    with closing(sqlite3.connect(database_path(kiro_copy))) as db, db:
        db.execute("INSERT INTO conversations_v2 SELECT '/tmp', '../../evil', value, created_at, "
                   "updated_at FROM conversations_v2")
    configure(asz_pass, kiro_copy)
    summary = asz_pass.run()
    assert summary.totals.unreadable == 5 and not summary.failed
    assert _sessions(asz_pass) == {CLI_ID, BROKEN_ID, IDE_ID, DB_ID}
    warnings = "\n".join(asz_pass.reporter.warnings)
    for needle in ("'not-a-uuid' is not a UUID", "'../../etc' is not a UUID",
                   "'sess_nope' is not sess_ followed by a UUID", "'../../evil' is not a UUID"):
        assert needle in warnings


def test_a_half_written_metadata_file_waits(asz_pass, kiro_copy):
    meta = kiro_copy / ".kiro" / "sessions" / "cli" / f"{CLI_ID}.json"
    text = meta.read_text()
    meta.write_text(text[: len(text) // 2])
    configure(asz_pass, kiro_copy, database=False)
    summary = asz_pass.run()
    assert (summary.totals.waiting, summary.failed) == (1, False)
    assert CLI_ID not in _sessions(asz_pass)
    meta.write_text(text)
    assert asz_pass.run().totals.waiting == 0
    assert CLI_ID in _sessions(asz_pass)


def test_a_database_conversation_and_a_cli_session_share_no_stream(asz_pass, kiro_copy):
    """Same id in both stores: the first to land owns ``streams/main``; the other is refused."""
    with closing(sqlite3.connect(database_path(kiro_copy))) as db, db:
        db.execute("UPDATE conversations_v2 SET conversation_id = ?", (CLI_ID,))
    configure(asz_pass, kiro_copy)
    summary = asz_pass.run()
    assert summary.totals.unreadable == 1 and summary.totals.conflicts == 0
    assert any("one stream takes one source" in w for w in asz_pass.reporter.warnings)
