"""Child sessions land as streams of their parent: a CLI session by its ``parent_session_id``, an
IDE session by its parent's ``sub_agent_start``. Placement, once made, is kept."""

from __future__ import annotations

import json
import shutil

from kiro_helpers import CLI_ID, IDE_BUCKET, IDE_CHILD, IDE_ID, add_ide_sub_agent, configure, headers, landed

CHILD = "bbbbbbbb-2222-4524-95d0-000000000002"
GRANDCHILD = "dddddddd-4444-4524-95d0-000000000004"


def _cli_child(tree, session, parent, text):
    cli = tree / ".kiro" / "sessions" / "cli"
    meta = json.loads((cli / f"{CLI_ID}.json").read_text())
    meta.update(session_id=session, parent_session_id=parent, title=f"child {session[:8]}")
    (cli / f"{session}.json").write_text(json.dumps(meta))
    line = {"version": "v1", "kind": "Prompt",
            "data": {"message_id": f"m-{session[:8]}", "content": [{"kind": "text", "data": text}],
                     "meta": {"timestamp": 1783571490}}}
    (cli / f"{session}.jsonl").write_text(json.dumps(line) + "\n")


def test_a_cli_session_with_a_parent_lands_as_its_stream(asz_pass, kiro_copy, assert_root_verifies):
    _cli_child(kiro_copy, CHILD, CLI_ID, "child work")
    _cli_child(kiro_copy, GRANDCHILD, CHILD, "grandchild work")
    configure(asz_pass, kiro_copy, database=False)
    summary = asz_pass.run()
    assert not summary.failed
    root = asz_pass.root
    assert not (root / CHILD).exists() and not (root / GRANDCHILD).exists()
    streams = {p.name for p in (root / CLI_ID / "streams").iterdir()}
    assert streams == {"main", CHILD, GRANDCHILD}  # flat under the topmost session
    (record,) = landed(root, CLI_ID, CHILD)
    assert record.parts[0].text == "child work"
    (meta,) = landed(root, CLI_ID, GRANDCHILD, kind="agent_meta")
    assert (meta.child, meta.label) == (GRANDCHILD, f"child {GRANDCHILD[:8]}")
    (main_meta,) = landed(root, CLI_ID, kind="agent_meta")
    assert main_meta.child is None
    assert {h["stream"] for h in headers(root) if h["session"] == CLI_ID} == {"main", CHILD, GRANDCHILD}
    assert asz_pass.run().totals.records == 0
    assert_root_verifies(root)


def test_session_created_reason_alone_does_not_make_a_child(asz_pass, kiro_corpus):
    """The corpus's CLI session says ``session_created_reason: subagent`` and has no parent."""
    configure(asz_pass, kiro_corpus, database=False)
    asz_pass.run()
    assert {p.name for p in (asz_pass.root / CLI_ID / "streams").iterdir()} == {"main"}


def test_an_ide_sub_agent_lands_as_a_stream_of_its_parent(asz_pass, kiro_copy, assert_root_verifies):
    parent_dir = kiro_copy / ".kiro" / "sessions" / IDE_BUCKET / IDE_ID
    configure(asz_pass, kiro_copy, database=False)
    asz_pass.run()
    add_ide_sub_agent(kiro_copy, parent_dir)
    summary = asz_pass.run()
    assert summary.totals.records == 3  # the parent's new line, the child's line and its metadata
    root = asz_pass.root
    assert not (root / IDE_CHILD).exists()
    start = landed(root, IDE_ID)[-1]
    assert (start.child, start.from_) == (IDE_CHILD, "runtime")
    (line,) = landed(root, IDE_ID, IDE_CHILD)
    assert line.parts[0].text == "list the files"
    # the sub_agent_start line has landed now; the child is known from where it landed
    with (parent_dir.parent.parent / "0123456789abcdef" / IDE_CHILD / "messages.jsonl").open("a") as f:
        f.write(json.dumps({"id": "c-2", "payload": {"type": "turn_end"}}) + "\n")
    assert asz_pass.run().totals.records == 1
    assert [r.id for r in landed(root, IDE_ID, IDE_CHILD)] == ["c-1", "c-2"]
    assert_root_verifies(root)


def test_a_session_that_landed_on_its_own_stays_there(asz_pass, kiro_copy, assert_root_verifies):
    configure(asz_pass, kiro_copy, database=False)
    cli = kiro_copy / ".kiro" / "sessions" / "cli"
    shutil.copy(cli / f"{CLI_ID}.jsonl", cli / f"{CHILD}.jsonl")  # no .json yet: no parent known
    asz_pass.run()
    assert (asz_pass.root / CHILD / "streams" / "main").is_dir()
    meta = json.loads((cli / f"{CLI_ID}.json").read_text())
    meta.update(session_id=CHILD, parent_session_id=CLI_ID)
    (cli / f"{CHILD}.json").write_text(json.dumps(meta))
    summary = asz_pass.run()
    assert summary.totals.records == 1  # its metadata, beside its transcript
    assert not (asz_pass.root / CLI_ID / "streams" / CHILD).exists()
    assert_root_verifies(asz_pass.root)


def test_a_cli_child_whose_json_is_deleted_goes_on_landing_under_its_parent(asz_pass, kiro_copy,
                                                                             assert_root_verifies):
    _cli_child(kiro_copy, CHILD, CLI_ID, "child work")
    configure(asz_pass, kiro_copy, database=False)
    asz_pass.run()
    cli = kiro_copy / ".kiro" / "sessions" / "cli"
    (cli / f"{CHILD}.json").unlink()  # the parent link with it
    line = json.loads((cli / f"{CHILD}.jsonl").read_text())
    line["data"]["message_id"] = "m-later"
    with (cli / f"{CHILD}.jsonl").open("a") as f:
        f.write(json.dumps(line) + "\n")
    summary = asz_pass.run()
    assert not summary.failed and summary.totals.records == 1
    root = asz_pass.root
    assert not (root / CHILD).exists()  # not a session of its own: its first line is not landed twice
    assert len(landed(root, CLI_ID, CHILD)) == 2
    assert_root_verifies(root)
