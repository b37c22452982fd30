"""The JSONL logs follow the append-cursor rules: one appended line lands as exactly one record, a
line still being written waits, and a rewrite of landed bytes is a sticky conflict."""

from __future__ import annotations

import json

from kiro_helpers import CLI_ID, IDE_BUCKET, IDE_ID, configure, landed


def _cli_log(tree):
    return tree / ".kiro" / "sessions" / "cli" / f"{CLI_ID}.jsonl"


def _ide_log(tree):
    return tree / ".kiro" / "sessions" / IDE_BUCKET / IDE_ID / "messages.jsonl"


def test_appending_a_cli_line_lands_exactly_that_line(asz_pass, kiro_copy, assert_root_verifies):
    configure(asz_pass, kiro_copy, database=False)
    asz_pass.run()
    line = json.dumps({"version": "v1", "kind": "Prompt", "data": {
        "message_id": "msg-user-0002", "content": [{"kind": "text", "data": "again"}],
        "meta": {"timestamp": 1783571500.5}}}, separators=(",", ":")).encode()
    with _cli_log(kiro_copy).open("ab") as f:
        f.write(line + b"\n")
    summary = asz_pass.run()
    assert (summary.totals.landed, summary.totals.records) == (1, 1)
    last = landed(asz_pass.root, CLI_ID)[-1]
    assert (last.ord, last.bytes, last.id, last.time) == (3, len(line), "msg-user-0002",
                                                          "2026-07-09T04:31:40.5Z")
    assert_root_verifies(asz_pass.root)


def test_a_line_still_being_written_waits_then_lands_once(asz_pass, kiro_copy, assert_root_verifies):
    configure(asz_pass, kiro_copy, database=False)
    asz_pass.run()
    line = (b'{"id":"x-1","timestamp":"2026-09-03T12:02:00.000Z","payload":{"type":"turn_start",'
            b'"executionId":"e-2"}}')
    with _ide_log(kiro_copy).open("ab") as f:
        f.write(line[:40])
    assert asz_pass.run().totals.records == 0
    with _ide_log(kiro_copy).open("ab") as f:
        f.write(line[40:] + b"\n")
    summary = asz_pass.run()
    assert summary.totals.records == 1
    last = landed(asz_pass.root, IDE_ID)[-1]
    assert (last.ord, last.run, last.from_) == (68, "e-2", "runtime")
    assert_root_verifies(asz_pass.root)


def test_a_rewritten_landed_line_is_a_sticky_conflict(asz_pass, kiro_copy, assert_root_verifies):
    configure(asz_pass, kiro_copy, database=False)
    asz_pass.run()
    log = _cli_log(kiro_copy)
    original = log.read_bytes()
    # longer, so the collector reads it (a same-size rewrite in place is not looked at)
    log.write_bytes(original.replace(b'"data":"READY"', b'"data":"READY!!"'))
    assert log.read_bytes() != original
    for _ in range(2):
        summary = asz_pass.run()
        assert (summary.totals.conflicts, summary.totals.records) == (1, 0)
        assert summary.failed
    log.write_bytes(original)
    assert asz_pass.run().totals.conflicts == 0
    assert_root_verifies(asz_pass.root)


def test_a_new_version_of_the_metadata_lands_as_a_new_snapshot(asz_pass, kiro_copy):
    configure(asz_pass, kiro_copy, database=False)
    asz_pass.run()
    meta = kiro_copy / ".kiro" / "sessions" / "cli" / f"{CLI_ID}.json"
    document = json.loads(meta.read_text())
    document["title"] = "Reply READY, twice"
    meta.write_text(json.dumps(document, indent=2))
    summary = asz_pass.run()
    assert (summary.totals.landed, summary.totals.records) == (1, 1)
    versions = landed(asz_pass.root, CLI_ID, kind="agent_meta")
    assert [v.label for v in versions] == ["Reply READY", "Reply READY, twice"]
    assert all((v.ord, v.off, v.from_) == (1, 0, "runtime") for v in versions)
    assert asz_pass.run().totals.landed == 0


def test_a_deleted_log_counts_gone_and_keeps_what_landed(asz_pass, kiro_copy, assert_root_verifies):
    configure(asz_pass, kiro_copy, database=False)
    asz_pass.run()
    _cli_log(kiro_copy).unlink()
    summary = asz_pass.run()
    assert (summary.totals.gone, summary.totals.conflicts) == (1, 0)
    assert len(landed(asz_pass.root, CLI_ID)) == 2
    assert_root_verifies(asz_pass.root)


def test_max_delta_bytes_cuts_a_log_into_files_that_chain(asz_pass, kiro_corpus, assert_root_verifies):
    configure(asz_pass, kiro_corpus, database=False, collector={"max_delta_bytes": 4096})
    summary = asz_pass.run()
    files = sorted((asz_pass.root / IDE_ID / "streams" / "main").glob("transcript-*.sd"))
    assert len(files) > 5
    assert all(f.stat().st_size <= 4096 for f in files)
    assert summary.totals.records == 74 and not summary.failed
    assert [r.ord for r in landed(asz_pass.root, IDE_ID)] == list(range(1, 68))
    assert_root_verifies(asz_pass.root)
