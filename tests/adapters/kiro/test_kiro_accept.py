"""A Kiro source stopped by a conflict goes on once a person accepts the rewrite: the rewritten
database row or log lands whole, from its first turn or line, as a new version of the stream."""

from __future__ import annotations

import hashlib
import io

from kiro_helpers import CLI_ID, DB_ID, configure, landed, update_history

from asz_core.cli.app import EXIT_OK, App
from asz_core.cli.main import main
from asz_core.root.storage import landed_files


def _accept(runner, cursor):
    out, err = io.StringIO(), io.StringIO()
    status = main(["conflicts", "--accept", cursor, "--config", str(runner.config_path)], App(out=out, err=err))
    return status, out.getvalue() + err.getvalue()


def _digests(root, session):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for _, p in landed_files(root / session)}


def test_an_accepted_rewritten_row_lands_every_turn_again_as_a_new_version(asz_pass, kiro_copy,
                                                                          assert_root_verifies):
    configure(asz_pass, kiro_copy)
    asz_pass.run()
    first = landed(asz_pass.root, DB_ID)

    def rewrite(history):
        history[0]["user"]["content"]["Prompt"]["prompt"] = "something else"

    update_history(kiro_copy, rewrite)
    assert asz_pass.run().totals.conflicts == 1
    before = _digests(asz_pass.root, DB_ID)
    status, said = _accept(asz_pass, f"{DB_ID}/streams/main/transcript.cursor")
    assert status == EXIT_OK and "main.v2" in said
    summary = asz_pass.run()
    assert (summary.totals.conflicts, summary.totals.records) == (0, len(first))
    version = landed(asz_pass.root, DB_ID, stream="main.v2")
    assert [r.ord for r in version] == list(range(1, len(first) + 1)) and version[0].off == 0
    assert version[0].sha != first[0].sha and [r.sha for r in version[1:]] == [r.sha for r in first[1:]]
    assert {k: v for k, v in _digests(asz_pass.root, DB_ID).items() if k in before} == before
    assert asz_pass.run().totals.records == 0  # the version's cursor holds: nothing lands twice
    assert_root_verifies(asz_pass.root)


def test_an_accepted_rewritten_log_lands_whole_as_a_new_version(asz_pass, kiro_copy, assert_root_verifies):
    configure(asz_pass, kiro_copy, database=False)
    asz_pass.run()
    log = kiro_copy / ".kiro" / "sessions" / "cli" / f"{CLI_ID}.jsonl"
    log.write_bytes(log.read_bytes().replace(b'"data":"READY"', b'"data":"READY!!"'))
    assert asz_pass.run().totals.conflicts == 1
    assert _accept(asz_pass, f"{CLI_ID}/streams/main/transcript.cursor")[0] == EXIT_OK
    summary = asz_pass.run()
    assert summary.totals.conflicts == 0 and summary.totals.records == log.read_bytes().count(b"\n")
    assert landed(asz_pass.root, CLI_ID, stream="main.v2")[0].ord == 1
    assert_root_verifies(asz_pass.root)
