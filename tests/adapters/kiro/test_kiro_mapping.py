"""Each mapping rule of the three dialects, on the real captures where they hold the case and on
lines written here where they do not (images, thinking, failures, unknown shapes)."""

from __future__ import annotations

import base64
import json

import pytest
from kiro_helpers import CLI_ID, DB_ID, IDE_ID, configure, landed

from asz_adapters.kiro.dialect_cli import CliEventDialect
from asz_adapters.kiro.dialect_db import DatabaseTurnDialect
from asz_adapters.kiro.dialect_ide import IdeMessageDialect
from asz_core.collect import SourceLine
from asz_core.testing import as_record


def _line(value) -> SourceLine:
    return SourceLine(json.dumps(value, separators=(",", ":")).encode())


def _kinds(record):
    return [p.k for p in record.parts]


# ---- on the corpus ------------------------------------------------------------------------

@pytest.fixture
def corpus_root(asz_pass, kiro_corpus):
    configure(asz_pass, kiro_corpus)
    asz_pass.run()
    return asz_pass.root


def test_ide_corpus_mapping(corpus_root):
    records = landed(corpus_root, IDE_ID)
    user, turn_start, reasoning = records[0], records[1], records[2]
    assert (user.from_, user.trigger, user.flags, _kinds(user)) == (
        "external", "external", ["external_input"], ["text"])
    assert user.parts[0].text.startswith("Please summarise this project")
    assert (turn_start.from_, _kinds(turn_start), turn_start.run) == (
        "runtime", ["data"], "00000002-0000-4000-8000-000000000002")
    assert reasoning.parts[0].k == "reasoning" and reasoning.parts[0].state == "unavailable"
    assert reasoning.parts[0].text is None and reasoning.model == "qdev::auto"
    assert [d.to_json() for d in reasoning.dropped] == [{
        "what": "reasoning signature", "bytes": len("REDACTED-REASONING-SIGNATURE"),
        "why": "a provider verifies it; a reader cannot read it"}]
    calls = [r for r in records if _kinds(r) == ["call"]]
    results = [r for r in records if _kinds(r) == ["result"]]
    assert len(calls) == len(results) == 11
    first_call, first_result = calls[0].parts[0], results[0].parts[0]
    assert (first_call.id, first_call.name, first_call.server) == (
        "tooluse_0000000000000000000001", "read_file", None)
    assert first_call.value() == {"path": "c:\\Users\\dev\\workspace\\demo\\README.md",
                                  "offset": None, "limit": None}
    assert (first_result.of, first_result.failed) == ("tooluse_0000000000000000000001", False)
    assert first_result.text.startswith("<file name=")
    says = [r.parts[0].text for r in records if r.from_ == "agent" and _kinds(r) == ["text"]]
    assert says[-1].startswith("All three tasks are done")
    types = [r.parts[0].value()["type"] for r in records if _kinds(r) == ["data"]]
    assert set(types) == {"turn_start", "turn_end", "session_metadata", "usage_summary",
                          "pending_interaction", "interaction_resolved", "session_event",
                          "session_start"}
    start = records[-1]
    assert (start.flags, start.from_, start.trigger) == (["injected", "system_prompt"], "runtime", None)
    assert all(r.trigger is None for r in records[1:])  # only the person's prompt starts a loop
    assert all(r.time is not None and r.id is not None for r in records)


def test_cli_and_meta_corpus_mapping(corpus_root):
    prompt, reply = landed(corpus_root, CLI_ID)
    assert (prompt.from_, prompt.id, prompt.time) == ("external", "msg-user-0001", "2026-07-09T04:31:22Z")
    assert (prompt.trigger, prompt.flags, reply.trigger, reply.flags) == ("external", ["external_input"], None, [])
    assert (reply.from_, reply.id, reply.time, reply.parts[0].text) == ("agent", "msg-asst-0001", None, "READY")
    (meta,) = landed(corpus_root, CLI_ID, kind="agent_meta")
    assert (meta.label, meta.from_, meta.time, _kinds(meta)) == ("Reply READY", "runtime", None, ["data"])
    assert meta.parts[0].value()["session_id"] == CLI_ID
    (ide_meta,) = landed(corpus_root, IDE_ID, kind="agent_meta")
    assert ide_meta.label == "Create and Modify Hello World Python"


def test_database_corpus_mapping(corpus_root):
    first, second, third = landed(corpus_root, DB_ID)
    assert _kinds(first) == ["text", "call"] and (first.trigger, first.flags) == ("external", ["external_input"])
    assert (first.call, first.model, first.id, first.time) == (
        "req-0001", "auto", "msg-tooluse-0001", "2026-07-09T04:30:16.209Z")
    assert first.usage is None  # every token field is null in the capture
    call = first.parts[1]
    assert (call.id, call.name) == ("tooluse_AAAA0001", "fs_write")
    assert call.value() == {"command": "create", "path": "/home/dev/project/hello.txt",
                            "file_text": "hello from kiro"}
    assert _kinds(second) == ["result", "call"] and (second.trigger, second.flags) == (None, [])
    # an empty text is left out as upstream leaves it out, so it reads back as none
    assert (second.parts[0].of, second.parts[0].text, second.parts[0].failed) == ("tooluse_AAAA0001", None, False)
    assert _kinds(third) == ["result", "text"]
    assert third.parts[0].value() == {"exit_status": "0", "stdout": "README.md\nhello.txt\n", "stderr": ""}
    # the person's prompt and the model's reply share the first turn, which has no single author;
    # the turns that answer tool results hold no one's text but the model's
    assert (first.from_, second.from_, third.from_) == (None, "agent", "agent")


# ---- kiro-cli/1, lines written here -------------------------------------------------------

def test_cli_prompt_time_keeps_every_digit_of_epoch_seconds():
    record = as_record(CliEventDialect().convert(SourceLine(
        b'{"version":"v1","kind":"Prompt","data":{"message_id":"m","content":[],'
        b'"meta":{"timestamp":1770983426.420942}}}')))
    assert record.time == "2026-02-13T11:50:26.420942Z"


def test_cli_assistant_thinking_tools_and_unknown_items():
    record = as_record(CliEventDialect().convert(_line({"version": "v1", "kind": "AssistantMessage", "data": {
        "message_id": "a", "modelId": "claude-x", "content": [
            {"kind": "thinking", "data": {"text": "plan", "signature": "sig=="}},
            {"kind": "text", "data": "ok"},
            {"kind": "toolUse", "data": {"toolUseId": "t1", "name": "mcp__srv__tool", "input": {"a": 1}}},
            {"kind": "hologram", "data": {}}]}})))
    assert _kinds(record) == ["reasoning", "text", "call", "unknown"]
    assert (record.parts[0].text, record.model, record.time) == ("plan", "claude-x", None)
    assert record.dropped[0].bytes == 5
    assert (record.parts[2].server, record.parts[2].server_tool) == (None, None)  # never split
    assert record.parts[3].raw() == b'{"kind":"hologram","data":{}}'


def test_cli_tool_results_failed_only_where_kiro_said():
    record = as_record(CliEventDialect().convert(_line({"version": "v1", "kind": "ToolResults", "data": {
        "message_id": "r", "content": [
            {"kind": "toolResult", "data": {"toolUseId": "a", "status": "error",
                                            "content": [{"kind": "text", "data": "boom"}]}},
            {"kind": "toolResult", "data": {"toolUseId": "b", "status": "success",
                                            "content": [{"kind": "json", "data": {"exit": 0}}]}},
            {"kind": "toolResult", "data": {"toolUseId": "c",
                                            "content": [{"kind": "text", "data": "x"},
                                                        {"kind": "text", "data": "y"}]}}]}})))
    a, b, c = record.parts
    assert (a.of, a.failed, a.text) == ("a", True, "boom")
    assert (b.failed, b.value()) == (False, {"exit": 0})
    assert (c.failed, c.text, c.value()) == (None, None, [{"kind": "text", "data": "x"},
                                                          {"kind": "text", "data": "y"}])
    assert record.from_ == "external"


def test_cli_images_clear_compaction_and_unknown_kinds():
    png = bytes([137, 80, 78, 71])
    record = as_record(CliEventDialect().convert(_line({"version": "v1", "kind": "Prompt", "data": {
        "content": [{"kind": "image", "data": {"format": "Png", "source": {"Bytes": list(png)}}},
                    {"kind": "image", "data": {"path": "/tmp/x.png"}}]}})))
    media, unknown = record.parts
    assert (media.k, media.media, media.value()) == ("media", "image/png", base64.b64encode(png).decode())
    assert unknown.k == "unknown" and b"/tmp/x.png" in unknown.raw()
    compaction = as_record(CliEventDialect().convert(_line({"version": "v1", "kind": "Compaction",
                                                            "data": {"summary": "s"}})))
    assert (compaction.from_, _kinds(compaction)) == ("runtime", ["data"])
    assert compaction.parts[0].value()["kind"] == "Compaction"
    assert compaction.flags == ["context_reset", "reset_summary"]  # the context replaced by its summary
    clear = as_record(CliEventDialect().convert(_line({"version": "v1", "kind": "Clear", "data": {}})))
    assert (clear.from_, clear.flags, clear.trigger) == ("runtime", ["context_reset"], None)
    for value in ({"version": "v1", "kind": "Teleport", "data": {}}, {"version": "v2", "kind": "Prompt"}, [1]):
        assert _kinds(as_record(CliEventDialect().convert(_line(value)))) == ["unknown"]


# ---- kiro-ide/1, lines written here -------------------------------------------------------

def _ide(payload, **envelope):
    return as_record(IdeMessageDialect().convert(_line({"id": "i", "timestamp": "2026-09-03T12:00:00.000Z",
                                              **envelope, "payload": payload})))


def test_ide_user_blocks_images_and_documents():
    record = _ide({"type": "user", "content": [
        {"type": "text", "text": "look"}, {"type": "image", "data": "iVBO", "mimeType": "image/png"},
        {"type": "resource_link", "uri": "file:///a"}],
        "images": [{"type": "image", "data": "R0lG", "mimeType": "image/gif"}, {"url": "x"}],
        "documents": [{"name": "spec.md"}]})
    assert _kinds(record) == ["text", "media", "unknown", "media", "unknown", "data"]
    assert (record.parts[1].media, record.parts[1].bytes) == ("image/png", 4)
    assert record.parts[5].value() == {"name": "spec.md"}


def test_ide_reasoning_kept_text_and_unknown_operations():
    kept = _ide({"type": "assistant", "operationType": "Reasoning", "content": "because"})
    assert (kept.parts[0].text, kept.parts[0].state, kept.dropped) == ("because", "available", [])
    literal = _ide({"type": "assistant", "operationType": "Reasoning", "content": "..."})
    assert literal.parts[0].text == "..."  # no signature: the text is what was written
    printed = _ide({"type": "assistant", "operationType": "Print", "content": "p"})
    assert (printed.from_, printed.parts[0].k) == ("agent", "text")
    odd = _ide({"type": "assistant", "operationType": "Dream", "content": "z"})
    assert _kinds(odd) == ["unknown"]


def test_ide_tool_result_failure_sub_agent_and_unknown_type():
    failed = _ide({"type": "tool_result", "toolCallId": "t-result-synthetic", "content": {"e": 1},
                   "success": False})
    assert (failed.parts[0].failed, failed.parts[0].text, failed.parts[0].value()) == (True, None, {"e": 1})
    sub = _ide({"type": "sub_agent_start", "subSessionId": "sess_11111111-2222-4333-8444-555555555555"})
    assert sub.child == "sess_11111111-2222-4333-8444-555555555555"
    bad_child = _ide({"type": "sub_agent_start", "subSessionId": "../x"})
    assert bad_child.child is None
    tomb = _ide({"type": "tombstone", "kind": "summarization", "executionId": "e"})
    assert (tomb.run, _kinds(tomb), tomb.flags) == ("e", ["data"], ["context_reset"])
    assert _kinds(_ide({"type": "telepathy"})) == ["unknown"]
    no_time = _ide({"type": "turn_end"}, timestamp="yesterday")
    assert no_time.time is None


# ---- kiro-cli-db/1, turns written here ----------------------------------------------------

def test_database_turn_usage_time_fallback_images_and_unknown_variants():
    turn = {"user": {"content": {"CancelledToolUses": {"prompt": "stop"}},
                     "timestamp": "2026-07-09T10:00:16+05:30",
                     "images": [{"format": "Jpeg", "source": {"Bytes": [255, 216]}}, {"format": "Tiff"}],
                     "additional_context": "steering: be brief"},
            "assistant": {"Thinking": {"message_id": "m"}},
            "request_metadata": {"request_id": "q", "uncached_input_tokens": 12, "output_tokens": 3,
                                 "cache_read_input_tokens": None}}
    record = as_record(DatabaseTurnDialect().convert(_line(turn)))
    assert _kinds(record) == ["unknown", "media", "unknown", "data", "unknown"]
    assert record.parts[1].media == "image/jpeg"
    assert record.usage.to_json() == {"in": 12, "out": 3}
    assert record.time == "2026-07-09T10:00:16+05:30"  # no request start: the user's own time
    assert (record.call, record.trigger, record.flags) == ("q", None, ["injected"])  # the steering it added
    assert _kinds(as_record(DatabaseTurnDialect().convert(_line({"nothing": 1})))) == ["unknown"]


def test_database_failed_results_and_tool_use_text():
    turn = {"user": {"content": {"ToolUseResults": {"tool_use_results": [
                {"tool_use_id": "a", "status": "Error", "content": [{"Text": "denied"}]}]}}},
            "assistant": {"ToolUse": {"message_id": "m", "content": "trying again",
                                      "tool_uses": [{"id": "b", "name": "execute_bash", "args": {"c": 1}}]}}}
    record = as_record(DatabaseTurnDialect().convert(_line(turn)))
    assert _kinds(record) == ["result", "text", "call"]
    assert (record.parts[0].failed, record.parts[0].text) == (True, "denied")
    assert (record.id, record.parts[2].id) == ("m", "b")


def test_a_prompt_with_context_the_runtime_added_is_external_input_and_injected():
    turn = {"user": {"content": {"Prompt": {"prompt": "go"}}, "additional_context": "steering: be brief"},
            "assistant": {"Response": {"message_id": "m", "content": "ok"}}}
    record = as_record(DatabaseTurnDialect().convert(_line(turn)))
    assert (record.trigger, record.flags, _kinds(record)) == ("external", ["external_input", "injected"],
                                                              ["text", "data", "text"])


# ---- trigger and flags: Session Data's words, by Kiro's rules -------------------------------

_CLI = {"version": "v1"}
_VOCABULARY = [
    pytest.param(CliEventDialect, {**_CLI, "kind": "Prompt", "data": {"content": [{"kind": "text", "data": "hi"}]}},
                 "external", ["external_input"], id="a kiro-cli prompt typed by a person starts a loop"),
    pytest.param(CliEventDialect, {**_CLI, "kind": "AssistantMessage", "data": {"content": []}}, None, [],
                 id="a kiro-cli reply is neither"),
    pytest.param(CliEventDialect, {**_CLI, "kind": "ToolResults", "data": {"content": []}}, None, [],
                 id="kiro-cli tool results are not a person's input"),
    pytest.param(CliEventDialect, {**_CLI, "kind": "Clear", "data": {}}, None, ["context_reset"],
                 id="a kiro-cli clear resets the context"),
    pytest.param(CliEventDialect, {**_CLI, "kind": "Compaction", "data": {"summary": "s"}}, None,
                 ["context_reset", "reset_summary"], id="a kiro-cli compaction resets the context with its summary"),
    pytest.param(IdeMessageDialect, {"id": "i", "payload": {"type": "user", "content": "hi"}}, "external",
                 ["external_input"], id="a kiro ide prompt typed by a person starts a loop"),
    pytest.param(IdeMessageDialect, {"id": "i", "payload": {"type": "session_start", "content": "You are"}}, None,
                 ["injected", "system_prompt"], id="the kiro ide system prompt is injected and named"),
    pytest.param(IdeMessageDialect, {"id": "i", "payload": {"type": "tombstone", "kind": "summarization"}}, None,
                 ["context_reset"], id="a kiro ide compaction tombstone resets the context"),
    pytest.param(IdeMessageDialect, {"id": "i", "payload": {"type": "turn_end", "stopReason": "end_turn"}}, None, [],
                 id="a kiro ide turn marker is neither"),
    pytest.param(DatabaseTurnDialect, {"user": {"content": {"Prompt": {"prompt": "hi"}}}}, "external",
                 ["external_input"], id="a kiro-cli database prompt starts a loop"),
    pytest.param(DatabaseTurnDialect, {"user": {"content": {"ToolUseResults": {"tool_use_results": []}},
                                                "additional_context": "steering"}}, None, ["injected"],
                 id="context kiro-cli adds to a turn is injected"),
]


@pytest.mark.parametrize(("dialect", "value", "trigger", "flags"), _VOCABULARY)
def test_each_kiro_rule_sets_session_datas_trigger_and_flags(dialect, value, trigger, flags):
    record = as_record(dialect().convert(_line(value)))
    assert (record.trigger, record.flags) == (trigger, flags)
