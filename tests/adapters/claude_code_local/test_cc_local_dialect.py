"""The claude-code/1 mapping on real lines, one line kind and block type at a time.

Where the shared corpus has the shape, the test takes a real line from it (found by what it
holds, not by position) and checks the record against that line's own fields and bytes. Where it
has none (images, redacted thinking, server tools, MCP calls, unknown block types, lines that are
not objects), the test builds a small line in Claude Code's shape and says so. Every row of
upstream's mapping tables, with the whole expected record written out, is in
``test_cc_local_golden.py``.
"""

from __future__ import annotations

import base64
import pickle
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from asz_adapters.claude_code_local.dialect import ClaudeCodeDialect
from asz_adapters.claude_code_local.source_facts import AGENT_META, JOURNAL, TRANSCRIPT, SourceFacts
from asz_core.collect import NOT_JSON, SourceLine, convert_line
from asz_core.sessiondata import Record, record
from asz_core.testing import as_record

SIGNATURE_WHY = "a provider verifies it; a reader cannot read it"


@pytest.fixture(scope="module")
def corpus_lines(cc_projects: Path) -> list[tuple[bytes, dict[str, Any]]]:
    out = []
    for path in sorted(cc_projects.rglob("*.jsonl")):
        for raw in path.read_bytes().splitlines():
            out.append((raw, orjson.loads(raw)))
    return out


Find = Callable[[Callable[[dict[str, Any]], bool]], tuple[bytes, dict[str, Any]]]


@pytest.fixture(scope="module")
def real(corpus_lines: list[tuple[bytes, dict[str, Any]]]) -> Find:
    """The first corpus line for which ``predicate(value)`` holds."""
    def find(predicate: Callable[[dict[str, Any]], bool]) -> tuple[bytes, dict[str, Any]]:
        for raw, value in corpus_lines:
            if predicate(value):
                return raw, value
        raise AssertionError("the corpus holds no such line")
    return find


def transcript_dialect() -> ClaudeCodeDialect:
    return ClaudeCodeDialect(SourceFacts(TRANSCRIPT, "s", "main"))


def convert(raw: bytes) -> Record:
    """The line's record, as it lands and reads back: every record must encode as the writer lands it."""
    return as_record(convert_line(transcript_dialect(), SourceLine(raw, 1, 0)))


def blocks(value: dict[str, Any]) -> Iterator[dict[str, Any]]:
    content = value.get("message", {}).get("content")
    yield from content if isinstance(content, list) else []


def has_block(kind: str, test: Callable[[dict[str, Any]], bool] = lambda b: True) -> Callable[[dict[str, Any]], bool]:
    return lambda v: any(b.get("type") == kind and test(b) for b in blocks(v))


def line(**fields: Any) -> bytes:
    """A constructed line (for shapes the corpus lacks), with an envelope like Claude Code's."""
    base: dict[str, Any] = {"parentUuid": "p-1", "isSidechain": False, "type": "assistant",
                            "uuid": "u-1", "timestamp": "2026-06-03T09:14:03.000Z", "sessionId": "s"}
    base.update(fields)
    return orjson.dumps(base)


def assistant(*content: dict[str, Any], stop: str | None = None) -> bytes:
    return line(message={"model": "claude-opus-4-7", "id": "msg_01X", "type": "message", "role": "assistant",
                         "content": list(content), "stop_reason": stop, "usage": {"input_tokens": 1}},
                requestId="req_011X")


# ---- the envelope ------------------------------------------------------------------------


def test_an_assistant_text_line(real: Find) -> None:  # real
    raw, value = real(lambda v: v.get("type") == "assistant" and has_block("text")(v)
                      and v["message"]["stop_reason"] == "end_turn" and v.get("promptId") is None)
    record = convert(raw)
    message = value["message"]
    assert (record.id, record.parent, record.time) == (value["uuid"], value["parentUuid"], value["timestamp"])
    assert (record.call, record.model, record.from_) == (message["id"], message["model"], "agent")
    usage = message["usage"]
    counts = {"in": usage["input_tokens"], "out": usage["output_tokens"],
              "cache_read": usage["cache_read_input_tokens"], "cache_write": usage["cache_creation_input_tokens"]}
    assert record.usage is not None
    assert record.usage.to_json() == {name: count for name, count in counts.items() if count}  # zeros left out
    assert record.flags == ["finished"]
    assert [(p.k, p.text, p.state) for p in record.parts] == [("text", message["content"][0]["text"], "available")]
    assert record.parts[0].bytes == len(message["content"][0]["text"].encode())


def test_a_line_whose_stop_reason_is_null_is_not_finished(real: Find) -> None:  # real
    raw, _ = real(lambda v: v.get("type") == "assistant" and v["message"]["stop_reason"] is None)
    assert convert(raw).flags == []


def test_the_dialect_keeps_each_assistant_lines_call(real: Find) -> None:  # real
    raw, value = real(lambda v: v.get("type") == "assistant" and "requestId" in v)
    dialect = transcript_dialect()
    dialect.convert(SourceLine(raw, 7, 0))
    assert dialect.calls == [(7, value["message"]["id"])]
    user_raw, _ = real(lambda v: v.get("type") == "user")
    dialect.convert(SourceLine(user_raw, 8, 0))
    assert len(dialect.calls) == 1


def test_a_split_part_sent_back_by_pickle_keeps_its_calls(real: Find) -> None:  # real
    # a split source's part is pickled back to the pass's process (asz_core.collect.split), the
    # dialect compiled by mypyc or not; joining it keeps what it converted after the source's own
    raw, value = real(lambda v: v.get("type") == "assistant" and "requestId" in v)
    dialect = transcript_dialect()
    dialect.convert(SourceLine(raw, 1, 0))
    part = dialect.split()
    part.convert(SourceLine(raw, 9, 0))
    back = pickle.loads(pickle.dumps(part))
    assert back.source == dialect.source and back is not part
    dialect.join(back)
    call = value["message"]["id"]
    assert dialect.calls == [(1, call), (9, call)]


def test_a_user_prompt_as_a_string_is_one_text_part(real: Find) -> None:  # real
    raw, value = real(lambda v: v.get("type") == "user" and isinstance(v["message"]["content"], str)
                      and "promptId" in v)
    record = convert(raw)
    assert (record.from_, record.run, record.call) == ("external", value["promptId"], None)
    assert [(p.k, p.text) for p in record.parts] == [("text", value["message"]["content"])]


# ---- blocks ------------------------------------------------------------------------------


def test_thinking_with_empty_text_is_unavailable_and_its_signature_dropped(real: Find) -> None:  # real (2.1.9x+)
    raw, value = real(has_block("thinking", lambda b: b["thinking"] == "" and b.get("signature")))
    record = convert(raw)
    (block,) = [b for b in blocks(value) if b["type"] == "thinking"]
    assert [(p.k, p.state, p.text) for p in record.parts] == [("reasoning", "unavailable", None)]
    assert [d.to_json() for d in record.dropped] == [
        {"what": "reasoning signature", "bytes": len(block["signature"]), "why": SIGNATURE_WHY}]


def test_thinking_with_text_keeps_it(real: Find) -> None:  # real (2.1.39)
    raw, value = real(has_block("thinking", lambda b: len(b["thinking"]) > 20))
    (block,) = [b for b in blocks(value) if b["type"] == "thinking"]
    (part,) = convert(raw).parts
    assert (part.k, part.state, part.text) == ("reasoning", "available", block["thinking"])


def test_redacted_thinking_is_redacted_reasoning_and_its_data_is_not_counted() -> None:  # constructed
    record = convert(assistant({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5"}))
    (part,) = record.parts
    # upstream reads only a thinking block's ``thinking`` and ``signature``: neither is here
    assert (part.k, part.state, part.text, part.bytes) == ("reasoning", "redacted", None, 0)
    assert record.dropped == []


def test_a_tool_use_is_a_call_with_its_input_byte_for_byte(real: Find) -> None:  # real
    raw, value = real(has_block("tool_use", lambda b: b["name"] == "Bash"))
    (block,) = [b for b in blocks(value) if b["type"] == "tool_use"]
    record = convert(raw)
    (part,) = record.parts
    assert (part.k, part.id, part.name, part.server, part.server_tool) == ("call", block["id"], "Bash", None, None)
    assert bytes(part.data or b"") in raw and part.value() == block["input"]
    assert record.flags == (["finished"] if value["message"]["stop_reason"] else [])
    assert part.bytes == len(part.data or b"")


@pytest.mark.parametrize(("name", "server", "tool"), [
    ("mcp__github__get_issue", "github", "get_issue"),
    ("mcp__claude_ai_Claude_Docs__search", "claude_ai_Claude_Docs", "search"),
    ("mcp__mcp-agent-mail__macro_start_session", "mcp-agent-mail", "macro_start_session"),
    ("mcp__a__b__c", None, None),          # two ways to split: left whole
    ("mcp__foo___bar", None, None),
])
def test_an_mcp_call_is_split_only_exactly(name: str, server: str | None, tool: str | None) -> None:
    # constructed: no MCP call is in the shared corpus
    (part,) = convert(assistant({"type": "tool_use", "id": "toolu_1", "name": name, "input": {"n": 41}})).parts
    assert (part.k, part.name, part.server, part.server_tool) == ("call", name, server, tool)


def test_a_server_tool_use_is_a_call_keyed_by_its_own_id() -> None:  # constructed: none in the corpus
    raw = assistant({"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search",
                     "input": {"query": "dst  rollover"}})
    (part,) = convert(raw).parts
    assert (part.k, part.id, part.name) == ("call", "srvtoolu_01", "web_search")
    assert part.data == b'{"query":"dst  rollover"}'


def test_a_string_tool_use_result_is_carried_nowhere(real: Find) -> None:  # real
    raw, value = real(lambda v: has_block("tool_result", lambda b: b.get("is_error") is True
                                          and isinstance(b.get("content"), str))(v)
                      and isinstance(v.get("toolUseResult"), str))
    (block,) = blocks(value)
    record = convert(raw)
    (part,) = record.parts
    assert (part.k, part.of, part.failed, part.text) == ("result", block["tool_use_id"], True, block["content"])
    assert part.data is None and part.bytes == len(block["content"].encode())  # only an object is read
    assert record.from_ == "external" and record.tool is None


def test_a_result_without_is_error_says_nothing_about_failure(real: Find) -> None:  # real
    raw, _ = real(has_block("tool_result", lambda b: "is_error" not in b and isinstance(b.get("content"), str)))
    (part,) = convert(raw).parts
    assert part.failed is None
    raw, _ = real(has_block("tool_result", lambda b: b.get("is_error") is False))
    assert convert(raw).parts[0].failed is False


def test_a_completed_agent_result_names_its_child_but_its_tool_use_result_does_not_read(real: Find) -> None:
    # real (Agent): its toolUseResult's ``content`` is a list where upstream reads a string, so the
    # object does not read whole: its agentId still names the child, but it is not the result's
    # data and the record is not flagged child_result
    raw, value = real(lambda v: has_block("tool_result", lambda b: isinstance(b.get("content"), list)
                                          and len(b["content"]) > 1)(v)
                      and isinstance(v.get("toolUseResult"), dict) and v["toolUseResult"].get("status") == "completed"
                      and isinstance(v["toolUseResult"].get("content"), list))
    (block,) = blocks(value)
    record = convert(raw)
    (part,) = record.parts
    assert part.text == "\n".join(b["text"] for b in block["content"])
    assert part.data is None and part.bytes == len(part.text.encode())  # the text's size, never text + data
    assert (record.child, record.flags) == (value["toolUseResult"]["agentId"], [])


def test_a_launch_acknowledgement_names_the_child_but_is_no_result_of_it(real: Find) -> None:  # real
    raw, value = real(lambda v: isinstance(v.get("toolUseResult"), dict)
                      and v["toolUseResult"].get("status") == "async_launched")
    record = convert(raw)
    assert (record.child, record.flags) == (value["toolUseResult"]["agentId"], ["launch_ack"])


def test_one_tool_use_result_beside_several_results_is_each_ones_data() -> None:
    # constructed: every corpus line holds one result
    raw = line(type="user", message={"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_a", "content": "one"},
        {"type": "tool_result", "tool_use_id": "toolu_b", "content": "two", "is_error": False}]},
        toolUseResult={"stdout": "one", "stderr": ""})
    first, second = convert(raw).parts
    structured = b'{"stdout":"one","stderr":""}'
    assert [(p.k, p.of, p.text, p.data, p.bytes) for p in (first, second)] == [
        ("result", "toolu_a", "one", structured, 3), ("result", "toolu_b", "two", structured, 3)]


def test_finished_is_a_stop_reason_that_is_a_non_empty_string() -> None:  # constructed edge
    assert convert(assistant({"type": "text", "text": "x"}, stop="end_turn")).flags == ["finished"]
    assert convert(assistant({"type": "text", "text": "x"}, stop="")).flags == []
    assert convert(assistant({"type": "text", "text": "x"}, stop=None)).flags == []


def test_a_result_with_no_text_is_sized_by_its_content_and_carries_the_tool_use_result(real: Find) -> None:
    # real (ToolSearch's tool_reference blocks): the raw content would be the data, but a
    # toolUseResult object that reads replaces it; the size stays the content's
    raw, value = real(has_block("tool_result", lambda b: isinstance(b.get("content"), list) and b["content"]
                                and b["content"][0].get("type") == "tool_reference"))
    (block,) = blocks(value)
    (result,) = convert(raw).parts
    assert (result.k, result.text) == ("result", None) and result.value() == value["toolUseResult"]
    assert bytes(result.data or b"") in raw
    assert result.bytes == len(orjson.dumps(block["content"]))


def test_an_image_is_media() -> None:  # constructed: no image in the corpus (the demo's screenshot line)
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()
    raw = line(type="user", message={"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}},
        {"type": "text", "text": "this is how it looks"}]})
    media, text = convert(raw).parts
    assert (media.k, media.media, media.value(), media.bytes) == ("media", "image/png", png, len(png))
    assert (text.k, text.text) == ("text", "this is how it looks")


def test_an_image_of_any_source_kind_is_media_of_its_data() -> None:  # constructed
    raw = line(type="user", message={"role": "user", "content": [
        {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}]})
    (part,) = convert(raw).parts
    assert (part.k, part.media, part.data, part.bytes) == ("media", None, b'""', 0)


def test_a_block_type_the_dialect_does_not_describe_is_unknown_with_its_bytes() -> None:  # constructed
    raw = assistant({"type": "text", "text": "before"},
                    {"type": "fallback", "from": {"model": "claude-opus-4-7"}, "to": {"model": "claude-sonnet-4-6"}},
                    {"type": "tool_use", "id": "toolu_2", "name": "Read", "input": {"file_path": "/a"}})
    text, unknown, call = convert(raw).parts  # every block, in order: iterating the whole array
    assert (text.k, unknown.k, call.k) == ("text", "unknown", "call")
    assert unknown.text == 'block type "fallback" is not one this dialect describes'
    assert unknown.raw() == b'{"type":"fallback","from":{"model":"claude-opus-4-7"},"to":{"model":"claude-sonnet-4-6"}}'
    assert unknown.state == "available" and unknown.bytes == len(unknown.raw())


# ---- lines without a message -------------------------------------------------------------


@pytest.mark.parametrize("kind", ["skill_listing", "hook_success"])
def test_an_attachment_with_text_is_text_and_injected(real: Find, kind: str) -> None:  # real
    raw, value = real(lambda v: v.get("type") == "attachment" and v["attachment"]["type"] == kind)
    record = convert(raw)
    assert [(p.k, p.text) for p in record.parts] == [("text", value["attachment"]["content"])]
    assert (record.from_, record.id, record.flags) == ("runtime", value["uuid"], ["injected"])


@pytest.mark.parametrize("kind", ["deferred_tools_delta", "mcp_instructions_delta", "auto_mode", "diagnostics"])
def test_an_attachment_without_text_is_one_data_part_and_injected(real: Find, kind: str) -> None:  # real
    # none of these is an attachment upstream names for the system prompt or the tool schemas
    raw, value = real(lambda v: v.get("type") == "attachment" and v["attachment"]["type"] == kind)
    record = convert(raw)
    (part,) = record.parts
    assert part.k == "data" and part.value() == value["attachment"] and bytes(part.data or b"") in raw
    assert record.flags == ["injected"]


def test_a_line_whose_fields_cannot_be_read_is_unknown_and_flagged_only_by_what_its_bytes_name() -> None:
    # constructed: a JSON value that is not an object, and a line that is not JSON
    for raw, flags in ((b'[{"type":"attachment","attachment":{"type":"mcp_instructions_delta"}}]', []),
                       (b'"x"', []), (b"3", []), (b'{"type":"user","message":', []),
                       (b'["prompt_snapshot"]', ["system_prompt", "tool_schemas"]),
                       (b'{"attachment":{"type":"deferred_tools_record"', ["tool_schemas"])):
        record = convert(raw)
        assert [(p.k, p.text) for p in record.parts] == [("unknown", NOT_JSON)]
        assert (record.flags, record.from_, record.parts[0].raw()) == (flags, "runtime", raw)


def test_a_compaction_boundary_lands_whole_and_continues_its_logical_parent(real: Find) -> None:  # real
    raw, value = real(lambda v: v.get("subtype") == "compact_boundary")
    record = convert(raw)
    (part,) = record.parts
    assert part.k == "data" and bytes(part.data or b"") == raw  # the whole line, byte for byte
    assert (record.continues, record.parent, record.from_) == (value["logicalParentUuid"], None, "runtime")
    assert record.flags == ["context_reset"]


def test_a_system_line_lands_whole_flagged_by_its_subtype(real: Find) -> None:  # real
    raw, value = real(lambda v: v.get("subtype") == "turn_duration")
    record = convert(raw)
    assert [p.k for p in record.parts] == ["data"] and record.parts[0].data == raw
    assert (record.id, record.time, record.continues, record.flags) == (
        value["uuid"], value["timestamp"], None, ["turn_duration"])


def test_a_file_history_snapshot_lands_whole_with_no_id_or_time(real: Find) -> None:  # real
    raw, _ = real(lambda v: v.get("type") == "file-history-snapshot")
    record = convert(raw)
    assert record.parts[0].data == raw and (record.id, record.time, record.from_) == (None, None, "runtime")


@pytest.mark.parametrize(("kind", "field"), [("ai-title", "aiTitle"), ("custom-title", None), ("agent-name", None)])
def test_only_an_ai_title_gives_a_title_lines_label(real: Find, kind: str, field: str | None) -> None:  # real
    # upstream names a label by aiTitle, description and workflowName only
    raw, value = real(lambda v: v.get("type") == kind)
    record = convert(raw)
    assert record.label == (value[field] if field else None) and record.parts[0].data == raw


def test_a_progress_line_names_no_tool_and_no_child(real: Find) -> None:  # real (2.1.39)
    raw, _ = real(lambda v: v.get("type") == "progress" and v["data"]["type"] == "agent_progress")
    record = convert(raw)
    assert (record.child, record.tool, record.flags) == (None, None, [])
    assert record.parts[0].data == raw


def test_a_task_notification_names_the_call_it_completes(real: Find) -> None:  # real (2.1.156)
    raw, value = real(lambda v: (v.get("origin") or {}).get("kind") == "task-notification")
    record = convert(raw)
    content = value["message"]["content"]
    tool = content.split("<tool-use-id>")[1].split("</tool-use-id>")[0]
    assert (record.trigger, record.tool, record.from_) == ("notification", tool, "external")
    assert record.parts[0].text == content


def test_every_corpus_line_converts_and_encodes_and_none_is_unknown(
        corpus_lines: list[tuple[bytes, dict[str, Any]]]) -> None:
    kinds: dict[str, int] = {}
    for raw, _ in corpus_lines:
        for part in convert(raw).parts:
            kinds[part.k] = kinds.get(part.k, 0) + 1
            if part.data is not None and part.k in ("data", "call", "result"):
                if part.data.startswith(b'{"schema":"changes/1"'):
                    kinds["changes/1"] = kinds.get("changes/1", 0) + 1
                    continue  # the one data part the dialect builds (test_cc_local_golden.py)
                assert bytes(part.data) in raw  # source JSON, byte for byte
    assert "unknown" not in kinds and {"text", "reasoning", "call", "result", "data", "changes/1"} <= set(kinds)


# ---- the lines no rule past the ids reads, and those one field sends further -------------------


@pytest.mark.parametrize(("fields", "flags"), [
    ({}, []),
    ({"isMeta": True}, ["injected"]),
    ({"isCompactSummary": True}, ["reset_summary"]),
    ({"type": "system", "subtype": "api_error"}, ["error"]),
    ({"type": "system"}, ["notice"]),
])
def test_a_line_with_no_content_is_flagged_by_every_field_a_rule_reads(
        fields: dict[str, Any], flags: list[str]) -> None:
    # constructed: a progress line is converted without its content, links or usage being asked
    # for, unless a field a flag rule reads is there
    record = convert(line(**{"type": "progress", "data": {"type": "hook_progress"}, **fields}))
    assert (record.flags, record.from_, record.id, record.parent) == (flags, "runtime", "u-1", "p-1")
    assert [p.k for p in record.parts] == ["data"]


def test_a_journal_line_with_a_result_is_a_child_result_however_little_it_holds() -> None:  # constructed
    from asz_adapters.claude_code_local.source_facts import JOURNAL
    dialect = ClaudeCodeDialect(SourceFacts(JOURNAL, "s", "", "wf_1"))
    record = as_record(convert_line(dialect, SourceLine(orjson.dumps({"agentId": "a0123456789abcdef", "result": None}),
                                                        1, 0)))
    assert (record.flags, record.child, record.batch, record.from_) == (
        ["child_result"], "a0123456789abcdef", "wf_1", "runtime")


def _edit_line(patch_lines: bytes) -> bytes:
    raw = line(type="user", cwd="/w", message={"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_p", "content": "ok"}]},
        toolUseResult={"filePath": "/w/f", "originalFile": "a\n", "content": "b\n", "structuredPatch": [
            {"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1, "lines": ["LINES"]}]})
    return raw.replace(b'["LINES"]', patch_lines)


@pytest.mark.parametrize(("lines", "landed", "counts"), [
    (b'["-a","+b"]', ["-a", "+b"], (1, 1)),
    (b'["-a","+\\ud800b",null]', ["-a", "+\ufffdb", ""], (1, 1)),  # as Go holds them
    (b'["-\\u00e9","+b","+c"]', ["-\u00e9", "+b", "+c"], (2, 1)),
])
def test_a_patchs_lines_land_as_go_holds_them_and_are_counted_by_their_first_character(
        lines: bytes, landed: list[str], counts: tuple[int, int]) -> None:  # constructed
    record = convert(_edit_line(lines))
    change = orjson.loads(record.parts[-1].data or b"")["changes"][0]
    assert change["hunks"][0]["lines"] == landed
    assert (change["additions"], change["deletions"]) == counts


def _file_edit(before: str | None, **result: Any) -> bytes:
    """An edit of ``/w/f``; ``LONE`` in a text is written as an unpaired surrogate."""
    return line(type="user", cwd="/w", message={"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_e", "content": "ok"}]},
        toolUseResult={"filePath": "/w/f", "originalFile": before, **result}).replace(b"LONE", b"\\ud800")


def test_an_edit_starting_from_the_last_edits_after_lands_as_it_does_alone() -> None:  # constructed
    # the dialect takes a before equal to the last after's text as that side, already measured:
    # each edit must land as it does converted by a dialect of its own, a surrogate included
    edits = [
        _file_edit(None, content="one\n"),
        _file_edit("one\n", oldString="one", newString="two"),  # its after made by replacing
        _file_edit("two\n", content="xLONE\n", structuredPatch=[]),  # an after Go holds otherwise
        _file_edit("x\ufffd\n", content="xLONE\n"),  # the after as Go held it
        _file_edit("xLONE\n", content="x\n"),  # the text as written, not as held
        _file_edit("x\n", content="x\n"),
    ]
    dialect = transcript_dialect()
    in_turn = [as_record(convert_line(dialect, SourceLine(raw, n, 0))) for n, raw in enumerate(edits, 1)]
    alone = [as_record(convert_line(transcript_dialect(), SourceLine(raw, n, 0))) for n, raw in enumerate(edits, 1)]
    assert [r.parts[-1].data for r in in_turn] == [r.parts[-1].data for r in alone]
    befores = [orjson.loads(r.parts[-1].data or b"")["changes"][0]["before"] for r in in_turn]
    assert [b.get("bytes") for b in befores] == [None, 4, 4, 5, 5, 2]


_EDGES = [  # constructed: the edges of the records filled in place (the dialect's bare and call records)
    b'{"type":"progress","uuid":"u","timestamp":"t"}',
    b'{"type":"progress","uuid":"u","parentUuid":"","timestamp":"t"}',
    b'{"type":"progress","uuid":"u","parentUuid":"p","timestamp":"t","aiTitle":"title"}',
    b'{"type":"system","uuid":"u","parentUuid":"p","timestamp":"t"}',
    b'{"type":"attachment","uuid":"u","parentUuid":"p","timestamp":"t"}',
    b'{"type":"assistant","uuid":"u","parentUuid":"p","timestamp":"t","message":{"id":"m","model":"x",'
    b'"usage":{"input_tokens":0},"content":[],"stop_reason":"end_turn"}}',
    b'{"type":"assistant","uuid":"u","parentUuid":"p","timestamp":"t","message":{"id":"m","model":"x",'
    b'"content":[{"type":"text","text":"hi"}]}}',
    b'{"type":"assistant","uuid":"u","parentUuid":"p","timestamp":"t","promptId":"r","message":{"id":"m",'
    b'"model":"x","usage":{},"content":[{"type":"thinking","thinking":"","signature":"s"}]}}',
    b'{"Type":"progress","uuid":"u","parentUuid":"p","timestamp":"t"}',
]


@pytest.mark.parametrize("kind,run", [
    (TRANSCRIPT, ""),  # the default lane's; each other source kind is the same sweep of the corpus again
    *(pytest.param(kind, run, marks=pytest.mark.slow) for kind, run in ((TRANSCRIPT, "wf_1"), (AGENT_META, ""),
                                                                         (JOURNAL, "wf_1")))])
def test_every_record_is_the_one_record_makes_of_its_fields(corpus_lines: list[tuple[bytes, dict[str, Any]]],
                                                            kind: str, run: str) -> None:
    """The dialect fills the commonest records in place (a copy of one made by ``record()``):
    each is still the mapping ``record()`` makes of the same fields, keys in the same order."""
    dialect = ClaudeCodeDialect(SourceFacts(kind, "s", "a0123456789abcdef", run))
    for n, raw in enumerate([raw for raw, _ in corpus_lines] + _EDGES, start=1):
        made = convert_line(dialect, SourceLine(raw, n, 0))
        fields = {("from_" if key == "from" else key): value for key, value in made.items()
                  if key not in ("ord", "off", "sha", "bytes")}
        again = record(**fields)
        assert list(made.items()) == list(again.items()), raw[:200]
