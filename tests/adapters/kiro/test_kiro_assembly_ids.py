"""The ids Kiro's lines do not carry (a CLI line's loop, an IDE line's model call, a database
turn's loop), derived from the lines before them: every corpus session with model turns
assembles talks and its calls, the ids do not depend on how the lines were split between
passes, and each rule shows on a capture changed on purpose."""

from __future__ import annotations

import io
import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from kiro_helpers import BROKEN_ID, CLI_ID, DB_ID, IDE_BUCKET, IDE_ID, configure, database_path, landed, update_history

from asz_core.assembly.chain import Chain
from asz_core.assembly.parse import parse_root
from asz_core.cli.app import App
from asz_core.cli.main import main
from asz_core.testing import PassRunner

SESSIONS = (CLI_ID, BROKEN_ID, IDE_ID, DB_ID)


def _cli_log(tree: Path, session: str = CLI_ID) -> Path:
    return tree / ".kiro" / "sessions" / "cli" / f"{session}.jsonl"


def _ide_log(tree: Path) -> Path:
    return tree / ".kiro" / "sessions" / IDE_BUCKET / IDE_ID / "messages.jsonl"


def _line(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode() + b"\n"


def _runner(tmp_path: Path, name: str) -> PassRunner:
    """A pass runner of its own root, beside the test's ``asz_pass``."""
    (tmp_path / name).mkdir()
    return PassRunner(tmp_path / name, tmp_path / name / "root")


def _ids(root: Path, session: str) -> list[tuple[int, str | None, str | None, str | None]]:
    """Each landed record's source line and the ids assembly builds on."""
    return [(r.ord, r.from_, r.call, r.run) for r in landed(root, session)]


def _fold(root: Path, session: str) -> dict[str, dict[str, Any]]:
    parse_root(root)
    return Chain(root, session).fold().nodes


def _of_kind(nodes: dict[str, dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {k: n for k, n in nodes.items() if n["kind"] == kind}


# ---- the corpus -------------------------------------------------------------------------------

def test_every_corpus_session_with_model_turns_assembles_talks_and_its_calls(asz_pass, kiro_corpus):
    configure(asz_pass, kiro_corpus)
    assert not asz_pass.run().failed
    for session in SESSIONS:
        nodes = _fold(asz_pass.root, session)
        # the model's calls the records name, each with the records of the agent that name it
        named = {r.call for r in landed(asz_pass.root, session) if r.call and r.from_ == "agent"}
        calls = _of_kind(nodes, "llm.call")
        assert named and set(calls) == {f"call/{c}" for c in named}, session
        assert len(_of_kind(nodes, "talk")) >= 1, session
        for call in calls.values():  # inside the talk: under its run, or the talk where no run is known
            assert nodes[call["parent"]]["kind"] in ("run", "talk"), session
    counts = {s: len(_of_kind(_fold(asz_pass.root, s), "llm.call")) for s in SESSIONS}
    assert counts == {CLI_ID: 1, BROKEN_ID: 1, IDE_ID: 12, DB_ID: 2}


def test_the_cli_loops_agree_with_kiro_clis_own_record_of_its_turns(asz_pass, kiro_corpus):
    """The session's ``.json`` lists each finished turn's message ids and its request count: the
    loop derived from the log holds those messages, and as many calls."""
    configure(asz_pass, kiro_corpus, database=False)
    asz_pass.run()
    meta = json.loads((kiro_corpus / ".kiro" / "sessions" / "cli" / f"{CLI_ID}.json").read_text())
    turns = meta["session_state"]["conversation_metadata"]["user_turn_metadatas"]
    records = landed(asz_pass.root, CLI_ID)
    for turn in turns:
        run = turn["message_ids"][0]
        assert [r.id for r in records if r.run == run] == turn["message_ids"]
        assert len({r.call for r in records if r.run == run and r.call}) == turn["total_request_count"]


def test_every_ide_model_line_is_in_one_call_and_every_tool_is_under_one(asz_pass, kiro_corpus):
    configure(asz_pass, kiro_corpus, database=False)
    asz_pass.run()
    records = landed(asz_pass.root, IDE_ID)
    assert all(r.call for r in records if r.from_ == "agent")
    assert not any(r.call for r in records if r.from_ != "agent")
    nodes = _fold(asz_pass.root, IDE_ID)
    tools = _of_kind(nodes, "tool")
    assert len(tools) == 11 and all(nodes[t["parent"]]["kind"] == "llm.call" for t in tools.values())
    # the approval of a command names the command's call as its execution: it makes no talk
    assert list(_of_kind(nodes, "talk")) == ["talk/main/00000002-0000-4000-8000-000000000002"]
    approval = records[20]
    assert (approval.ord, approval.run) == (21, None)


def test_conversation_and_view_show_the_talks_and_calls(asz_pass, kiro_corpus):
    configure(asz_pass, kiro_corpus)
    asz_pass.run()
    config = ["--config", str(asz_pass.config_path)]
    assert main(["parse", *config], app=App(out=io.StringIO())) == 0
    for session in SESSIONS:
        out = io.StringIO()
        assert main(["conversation", session, "--json", *config], app=App(out=out)) == 0
        kinds = json.loads(out.getvalue())["summary"]["kinds"]  # the asz.view document's count of the fold
        assert kinds.get("talk", 0) >= 1 and kinds.get("llm.call", 0) >= 1, (session, kinds)
        out = io.StringIO()
        assert main(["view", session, *config], app=App(out=out)) == 0
        assert "\ntalk/" in out.getvalue() and " talks=0 " not in out.getvalue(), session


# ---- stable ids -------------------------------------------------------------------------------

def test_the_ids_are_the_same_in_two_landings(tmp_path, kiro_corpus):
    roots = []
    for name in ("one", "two"):
        runner = _runner(tmp_path, name)
        configure(runner, kiro_corpus)
        assert not runner.run().failed
        roots.append(runner.root)
    for session in SESSIONS:
        assert _ids(roots[0], session) == _ids(roots[1], session)
        assert any(run for _, _, _, run in _ids(roots[0], session)), session


@pytest.mark.parametrize("cut", [1, 2, 10, 12, 21, 33, 66])
def test_the_ids_do_not_depend_on_where_a_pass_stopped_reading(asz_pass, kiro_corpus, kiro_copy, tmp_path, cut):
    """A log landed in two passes, the first ending mid-loop or mid-call, lands the ids one pass
    lands: the second pass reads the loop and the call in effect from the lines before."""
    whole = _runner(tmp_path, "whole")
    configure(whole, kiro_corpus, database=False)
    whole.run()
    log = _ide_log(kiro_copy)
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:cut]))
    configure(asz_pass, kiro_copy, database=False)
    asz_pass.run()
    with log.open("ab") as f:
        f.write(b"".join(lines[cut:]))
    assert asz_pass.run().totals.records == len(lines) - cut
    assert _ids(asz_pass.root, IDE_ID) == _ids(whole.root, IDE_ID)


def test_a_cli_log_split_between_passes_lands_the_loops_one_pass_lands(asz_pass, kiro_copy, tmp_path):
    log = _cli_log(kiro_copy)
    extra = _cli_turn("msg-user-0002", "msg-asst-0002", "msg-tool-0002", "msg-asst-0003")
    with log.open("ab") as f:
        f.write(extra)
    whole = _runner(tmp_path, "whole")
    configure(whole, kiro_copy, database=False)
    whole.run()
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:4]))  # the second turn's prompt and its first reply
    configure(asz_pass, kiro_copy, database=False)
    asz_pass.run()
    with log.open("ab") as f:
        f.write(b"".join(lines[4:]))
    asz_pass.run()
    assert _ids(asz_pass.root, CLI_ID) == _ids(whole.root, CLI_ID)
    assert [run for *_, run in _ids(whole.root, CLI_ID)][2:] == ["msg-user-0002"] * 4


# ---- each rule, on a capture changed on purpose ------------------------------------------------

def _cli_turn(prompt: str, reply: str, results: str, answer: str) -> bytes:
    """A turn with a tool: the prompt, a reply that calls the tool, its result, the answer."""
    return b"".join([
        _line({"version": "v1", "kind": "Prompt", "data": {
            "message_id": prompt, "content": [{"kind": "text", "data": "list"}], "meta": {"timestamp": 1783571500}}}),
        _line({"version": "v1", "kind": "AssistantMessage", "data": {"message_id": reply, "content": [
            {"kind": "toolUse", "data": {"toolUseId": f"t-{reply}", "name": "ls", "input": {}}}]}}),
        _line({"version": "v1", "kind": "ToolResults", "data": {"message_id": results, "content": [
            {"kind": "toolResult", "data": {"toolUseId": f"t-{reply}", "status": "success",
                                            "content": [{"kind": "text", "data": "a b"}]}}]}}),
        _line({"version": "v1", "kind": "AssistantMessage", "data": {
            "message_id": answer, "content": [{"kind": "text", "data": "a and b"}]}}),
    ])


def test_cli_a_prompt_starts_a_loop_and_clear_or_an_unreadable_line_ends_it(asz_pass, kiro_copy):
    log = _cli_log(kiro_copy)
    with log.open("ab") as f:
        f.write(_cli_turn("p2", "a2", "r2", "a3"))
        f.write(_line({"version": "v1", "kind": "Compaction", "data": {"summary": "s"}}))  # goes on
        f.write(_line({"version": "v1", "kind": "AssistantMessage", "data": {"message_id": "a4", "content": []}}))
        f.write(_line({"version": "v1", "kind": "Clear", "data": {}}))  # ends the loop
        f.write(_line({"version": "v1", "kind": "AssistantMessage", "data": {"message_id": "a5", "content": []}}))
        f.write(_cli_turn("p3", "a6", "r6", "a7")[:-1].rsplit(b"\n", 1)[0] + b"\n")  # the turn without its answer
        f.write(b'{"version":"v1","kind":"Prompt","data":{"message_id":"BRO\n')  # may have been a prompt
        f.write(_line({"version": "v1", "kind": "AssistantMessage", "data": {"message_id": "a8", "content": []}}))
    configure(asz_pass, kiro_copy, database=False)
    asz_pass.run()
    got = [(r.id, r.call, r.run) for r in landed(asz_pass.root, CLI_ID)][2:]
    assert got == [("p2", None, "p2"), ("a2", "a2", "p2"), ("r2", None, "p2"), ("a3", "a3", "p2"),
                   (None, None, "p2"), ("a4", "a4", "p2"), (None, None, None), ("a5", "a5", None),
                   ("p3", None, "p3"), ("a6", "a6", "p3"), ("r6", None, "p3"),
                   (None, None, None), ("a8", "a8", None)]
    nodes = _fold(asz_pass.root, CLI_ID)
    assert set(_of_kind(nodes, "talk")) == {"talk/main/msg-user-0001", "talk/main/p2", "talk/main/p3"}
    assert nodes["tool/t-a2"]["parent"] == "call/a2"


def _ide(id: str, type: str, execution: str | None = "e-2", **payload: Any) -> bytes:
    if execution is not None:
        payload["executionId"] = execution
    return _line({"id": id, "timestamp": "2026-09-03T12:05:00.000Z", "payload": {"type": type, **payload}})


def test_ide_inputs_and_turn_edges_end_a_call_and_runtime_notes_do_not(asz_pass, kiro_copy):
    with _ide_log(kiro_copy).open("ab") as f:
        f.write(_ide("u", "user", None, content="again"))
        f.write(_ide("ts", "turn_start"))
        f.write(_ide("r1", "assistant", content="...", operationType="Reasoning"))
        f.write(_ide("m1", "session_metadata", key="contextUsage", value={}))  # beside a call
        f.write(_ide("p1", "pending_interaction", toolCallId="k1"))
        f.write(_ide("k1-call", "tool_call", toolCallId="k1", toolName="ls", args={}))
        f.write(_ide("k2-call", "tool_call", toolCallId="k2", toolName="ls", args={}))
        f.write(_ide("k1-result", "tool_result", toolCallId="k1", content="a", success=True))  # an input
        f.write(_ide("k2-result", "tool_result", toolCallId="k2", content="b", success=True))
        f.write(_ide("s1", "assistant", content="done", operationType="Say"))
        f.write(_ide("x1", "assistant", "e-3", content="other", operationType="Say"))  # another execution
        f.write(_ide("a1", "interaction_resolved", "k9", toolCallId="k9"))  # names its tool call
        f.write(_ide("te", "turn_end"))
    configure(asz_pass, kiro_copy, database=False)
    asz_pass.run()
    got = [(r.id, r.call, r.run) for r in landed(asz_pass.root, IDE_ID)][67:]
    assert got == [("u", None, None), ("ts", None, "e-2"), ("r1", "r1", "e-2"), ("m1", None, "e-2"),
                   ("p1", None, "e-2"), ("k1-call", "r1", "e-2"), ("k2-call", "r1", "e-2"),
                   ("k1-result", None, "e-2"), ("k2-result", None, "e-2"), ("s1", "s1", "e-2"),
                   ("x1", "x1", "e-3"), ("a1", None, None), ("te", None, "e-2")]
    nodes = _fold(asz_pass.root, IDE_ID)
    assert nodes["tool/k1"]["parent"] == nodes["tool/k2"]["parent"] == "call/r1"


def test_database_a_prompt_turn_starts_a_loop_and_tool_result_turns_are_the_models(asz_pass, kiro_copy):
    configure(asz_pass, kiro_copy)
    asz_pass.run()
    document = json.loads(json.dumps(_history(kiro_copy)))

    def add(history: list[Any]) -> None:
        prompt, tools, answer = (_renamed(t, f"req-000{n}") for n, t in enumerate(document, start=4))
        answer["user"]["images"] = [{"format": "Png", "source": {"Bytes": [1]}}]  # a person's image
        later = _renamed(document[2], "req-0007")  # a tool-results turn after a loop has ended
        history.extend([prompt, tools, answer, {"user": {"content": {"Other": {}}}, "assistant": {}}, later])

    update_history(kiro_copy, add)
    asz_pass.run()
    got = [(r.ord, r.from_, r.call, r.run) for r in landed(asz_pass.root, DB_ID)]
    assert got == [(1, None, "req-0001", "req-0001"), (2, "agent", "req-0002", "req-0001"),
                   (3, "agent", "req-0003", "req-0001"), (4, None, "req-0004", "req-0004"),
                   (5, "agent", "req-0005", "req-0004"), (6, None, "req-0006", "req-0004"),
                   (7, None, None, None), (8, "agent", "req-0007", None)]
    nodes = _fold(asz_pass.root, DB_ID)
    assert set(_of_kind(nodes, "talk")) == {"talk/main/req-0001", "talk/main/req-0004"}


def _renamed(turn: dict[str, Any], name: str) -> dict[str, Any]:
    """A copy of a turn whose request, reply and tool ids are new (``name``), so it is a turn of
    its own and not a repeat of one landed."""
    text = json.dumps(turn)
    for old in ("req-0001", "req-0002", "req-0003"):
        text = text.replace(f'"{old}"', f'"{name}"')
    for old in ("msg-tooluse-0001", "msg-tooluse-0002", "msg-response-0003"):
        text = text.replace(f'"{old}"', f'"msg-{name}"')
    for old in ("tooluse_AAAA0001", "tooluse_BBBB0002"):
        text = text.replace(f'"{old}"', f'"{old}-{name}"')
    copy: dict[str, Any] = json.loads(text)
    return copy


def _history(tree: Path) -> list[Any]:
    with closing(sqlite3.connect(database_path(tree))) as db:
        (value,) = db.execute("SELECT value FROM conversations_v2 WHERE conversation_id = ?", (DB_ID,)).fetchone()
    history: list[Any] = json.loads(value)["history"]
    return history


# ---- a root landed before these ids -------------------------------------------------------------

def test_a_root_landed_before_keeps_its_records_and_the_lines_after_carry_the_ids(
        asz_pass, kiro_copy, monkeypatch):
    """What landed stays as it landed; the lines landed after the change carry the ids, read from
    the whole log, so a loop begun before the change goes on under its prompt's name."""
    from asz_adapters.kiro import dialect_cli

    log = _cli_log(kiro_copy)
    turn = _cli_turn("p2", "a2", "r2", "a3").splitlines(keepends=True)
    with log.open("ab") as f:
        f.write(b"".join(turn[:2]))
    real = dialect_cli.CliEventDialect.convert

    def as_before(self: Any, line: Any) -> Any:  # what the adapter landed before: no call, no run
        record = real(self, line)
        record.pop("call", None)
        record.pop("run", None)
        return record

    monkeypatch.setattr(dialect_cli.CliEventDialect, "convert", as_before)
    configure(asz_pass, kiro_copy, database=False)
    asz_pass.run()
    before = {p: p.read_bytes() for p in (asz_pass.root / CLI_ID).rglob("*.sd")}
    _fold(asz_pass.root, CLI_ID)
    monkeypatch.setattr(dialect_cli.CliEventDialect, "convert", real)
    with log.open("ab") as f:
        f.write(b"".join(turn[2:]) + _cli_turn("p3", "a6", "r6", "a7"))
    asz_pass.run()
    assert all(p.read_bytes() == data for p, data in before.items())
    assert [(r.id, r.call, r.run) for r in landed(asz_pass.root, CLI_ID)] == [
        ("msg-user-0001", None, None), ("msg-asst-0001", None, None), ("p2", None, None), ("a2", None, None),
        ("r2", None, "p2"), ("a3", "a3", "p2"),
        ("p3", None, "p3"), ("a6", "a6", "p3"), ("r6", None, "p3"), ("a7", "a7", "p3")]
    nodes = _fold(asz_pass.root, CLI_ID)  # a second round, after the first
    assert set(_of_kind(nodes, "talk")) == {"talk/main/p2", "talk/main/p3"}
    assert set(_of_kind(nodes, "llm.call")) == {"call/a3", "call/a6", "call/a7"}
    assert Chain(asz_pass.root, CLI_ID).fold().rounds == 2
