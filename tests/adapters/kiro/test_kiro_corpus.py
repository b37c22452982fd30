"""A pass over the real Kiro captures: every session of every generation lands, each source line
(and each database turn, each metadata document) is one record, the root verifies, and a second
pass lands nothing."""

from __future__ import annotations

import io
import json
import sqlite3
from collections import Counter
from contextlib import closing
from pathlib import Path

from kiro_helpers import (
    BROKEN_ID,
    CLI_ID,
    DB_ID,
    IDE_BUCKET,
    IDE_ID,
    configure,
    database_path,
    headers,
    landed,
)

from asz_core.cli.app import App
from asz_core.cli.main import main


def _source_units(tree: Path) -> dict[str, int]:
    """What the corpus holds, counted from the files themselves: lines, documents, turns."""
    home = tree / ".kiro"
    cli = home / "sessions" / "cli"
    ide = home / "sessions" / IDE_BUCKET / IDE_ID
    with closing(sqlite3.connect(f"file:{database_path(tree)}?mode=ro", uri=True)) as db:
        (value,) = db.execute("SELECT value FROM conversations_v2").fetchone()
    return {
        "cli lines": sum(p.read_bytes().count(b"\n") for p in cli.glob("*.jsonl")),
        "cli documents": len(list(cli.glob("*.json"))),
        "ide lines": (ide / "messages.jsonl").read_bytes().count(b"\n"),
        "ide documents": 1,
        "turns": len(json.loads(value)["history"]),
    }


def test_a_pass_lands_every_session_of_every_generation(asz_pass, kiro_corpus, assert_root_verifies):
    configure(asz_pass, kiro_corpus)
    summary = asz_pass.run()
    assert not summary.failed, summary.errors
    assert {p.name for p in asz_pass.root.iterdir() if p.is_dir()} == {CLI_ID, BROKEN_ID, IDE_ID, DB_ID}
    dialects = Counter((h["dialect"], h["kind"]) for h in headers(asz_pass.root))
    assert dialects == {("kiro-cli/1", "transcript"): 2, ("kiro-cli-meta/1", "agent_meta"): 1,
                        ("kiro-ide/1", "transcript"): 1, ("kiro-ide-meta/1", "agent_meta"): 1,
                        ("kiro-cli-db/1", "transcript"): 1}
    assert_root_verifies(asz_pass.root)


def test_every_source_line_is_one_record(asz_pass, kiro_corpus):
    configure(asz_pass, kiro_corpus)
    summary = asz_pass.run()
    units = _source_units(kiro_corpus)
    assert summary.totals.records == sum(units.values()) == 77
    root = asz_pass.root
    cli = kiro_corpus / ".kiro" / "sessions" / "cli"
    for session in (CLI_ID, BROKEN_ID):
        raw = (cli / f"{session}.jsonl").read_bytes().split(b"\n")[:-1]
        records = landed(root, session)
        assert [r.ord for r in records] == list(range(1, len(raw) + 1))
        assert [r.bytes for r in records] == [len(line) for line in raw]
    assert len(landed(root, IDE_ID)) == units["ide lines"]
    assert len(landed(root, DB_ID)) == units["turns"]
    assert len(landed(root, CLI_ID, kind="agent_meta")) == 1
    assert len(landed(root, IDE_ID, kind="agent_meta")) == 1


def test_records_point_at_their_source_bytes(asz_pass, kiro_corpus):
    """off/bytes/sha of a JSONL record address its line in the source file exactly."""
    import hashlib

    configure(asz_pass, kiro_corpus)
    asz_pass.run()
    source = (kiro_corpus / ".kiro" / "sessions" / IDE_BUCKET / IDE_ID / "messages.jsonl").read_bytes()
    for record in landed(asz_pass.root, IDE_ID):
        line = source[record.off: record.off + record.bytes]
        assert hashlib.sha256(line).hexdigest()[:12] == record.sha
        assert source[record.off + record.bytes: record.off + record.bytes + 1] == b"\n"


def test_a_second_pass_lands_nothing(asz_pass, kiro_corpus, assert_root_verifies):
    configure(asz_pass, kiro_corpus)
    first = asz_pass.run()
    second = asz_pass.run()
    assert first.totals.landed == 6
    assert (second.totals.landed, second.totals.records, second.totals.conflicts) == (0, 0, 0)
    assert second.totals.sources == first.totals.sources == 6
    assert_root_verifies(asz_pass.root)


def test_the_broken_line_is_an_unknown_part_and_the_lines_after_it_land(asz_pass, kiro_corpus):
    configure(asz_pass, kiro_corpus)
    asz_pass.run()
    first, broken, after = landed(asz_pass.root, BROKEN_ID)
    assert broken.parts[0].k == "unknown" and broken.parts[0].text == "the record is not valid JSON"
    assert broken.parts[0].raw() == b'{"version":"v1","kind":"Prompt","data":{"message_id":"BROKEN'
    assert (first.id, after.id) == ("msg-user-0003", "msg-asst-0003")
    assert after.parts[0].text == "ok"


def test_sources_lists_what_each_generation_holds(asz_pass, kiro_corpus):
    configure(asz_pass, kiro_corpus)
    out = io.StringIO()
    status = main(["sources", "--json", "--config", str(asz_pass.config_path)], app=App(out=out))
    assert status == 0
    (report,) = json.loads(out.getvalue())["adapters"]
    assert report["found"] == {"kiro-cli session": 2, "kiro-ide session": 1,
                               "kiro-cli database conversation": 1, "kiro-cli database": 1}
    assert report["sources"] == 6
    generations = Counter(u["generation"] for u in report["units"])
    assert generations == {"kiro-cli/1": 2, "kiro-ide/1": 1, "kiro-cli-db/1": 2}  # the database and its row
    assert any(d.endswith("data.sqlite3 (kiro-cli database)") for d in report["source_dirs"])
    assert not (asz_pass.root).exists()  # sources lands nothing
