"""Golden records: one hand-built Claude Code source line per row of upstream's mapping tables.

Each row is a source line built from the facts upstream's code applies (``spec/upstream/
MAPPING-FACTS.md``, by section) and the record upstream lands for it, written out here as a value.
All rows land in one session through a real pass (transcript lines in one main transcript,
sidecars, a journal, manifests and scripts in their own files), and each landed record, decoded,
must equal its row's record; its ``ord``, ``off``, ``sha`` and ``bytes`` are checked against the
line's place and bytes.

The comparison is of values, so the byte encoding (key order, escaping) is not what is tested
here. Two encodings the writer is changing are read as upstream writes them on both sides: a
part's ``bytes`` of 0 and an all-zero ``usage`` (``{}``) are left out before comparing; the
dialect's own usage object is checked by ``test_all_zero_usage_is_still_a_usage_object``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from asz_adapters.claude_code_local.dialect import ClaudeCodeDialect
from asz_adapters.claude_code_local.source_facts import TRANSCRIPT, SourceFacts
from asz_core.collect import SourceLine
from asz_core.root.storage import landed_files
from asz_core.testing import PassRunner, as_record

SESSION = "5e551011-0000-4000-8000-00000000a001"
SLUG = "-home-dev-golden"
RUN = "wf_0a1b2c3d-4e5"
TS = "2026-06-03T09:14:03.000Z"
CWD = "/home/dev/proj"
NOT_JSON = "the record is not valid JSON"
NOT_CONTENT = "the content is neither text nor a list of blocks"
NOT_BLOCK = "the block is not an object"
WHY = "a provider verifies it; a reader cannot read it"


@dataclass(frozen=True)
class Row:
    name: str
    line: bytes
    expected: dict[str, Any]
    where: str = "main"   #: main, sidecar, journal, manifest, script or child (a workflow's)
    place: str = ""       #: a sidecar's or a workflow child's agent id, a manifest's or a script's run


ROWS: list[Row] = []


def row(name: str, line: bytes | dict[str, Any] | None, expected: dict[str, Any], where: str = "main",
        place: str = "") -> None:
    raw = line if isinstance(line, bytes) else orjson.dumps(line)
    ROWS.append(Row(name, raw, expected, where, place))


# ---- what the expected records are made of --------------------------------------------------


def text(value: str) -> dict[str, Any]:
    return {"k": "text", "text": value, "state": "available", "bytes": len(value.encode())}


def whole(raw: bytes | dict[str, Any] | None) -> dict[str, Any]:
    raw = raw if isinstance(raw, bytes) else orjson.dumps(raw)
    return {"k": "data", "data": orjson.loads(raw), "state": "available", "bytes": len(raw)}


def data(value: Any) -> dict[str, Any]:
    return {"k": "data", "data": value, "state": "available", "bytes": len(orjson.dumps(value))}


def unknown(raw: bytes | Any, why: str) -> dict[str, Any]:
    raw = raw if isinstance(raw, bytes) else orjson.dumps(raw)
    return {"k": "unknown", "text": why, "data": raw.decode(), "state": "available", "bytes": len(raw)}


def result(of: str, **fields: Any) -> dict[str, Any]:
    return {"k": "result", "of": of, "state": "available", **fields}


def line(**fields: Any) -> dict[str, Any]:
    return fields


def user(content: Any, **fields: Any) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": content}, **fields}


def assistant(content: Any, stop: Any = None, **fields: Any) -> dict[str, Any]:
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-opus-4-7",
               "content": content, "stop_reason": stop}
    return {"type": "assistant", "message": message, **fields}


def attachment(value: Any, **fields: Any) -> dict[str, Any]:
    return {"type": "attachment", "attachment": value, **fields}


def endpoint(content: str | None) -> dict[str, Any]:
    if content is None:
        return {"present": False, "bytes": None}
    raw = content.encode()
    out: dict[str, Any] = {"present": True, "bytes": len(raw), "sha256": hashlib.sha256(raw).hexdigest()}
    if raw and not raw.endswith(b"\n"):
        out["no_newline_at_end"] = True
    return out


def changes(tool: str, change: dict[str, Any], root: str | None = CWD) -> dict[str, Any]:
    record: dict[str, Any] = {"schema": "changes/1", "id": tool, "captured_by": "claude-code",
                              "session": SESSION, "stream": "main", "tool": tool, "time": TS,
                              "basis": "runtime_reported"}
    if root is not None:
        record["root"] = {"path": root}
    record.update({"changed_files": 1, "changes": [change]})
    return data(record)


def file_change(path: str, operation: str, before: str | None, after: str | None, diff: str = "available",
                hunks: list[dict[str, Any]] | None = None, adds: int | None = None,
                dels: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"path": path, "operation": operation, "before": endpoint(before),
                           "after": endpoint(after), "diff": diff, "additions": adds, "deletions": dels}
    if hunks:
        out["hunks"] = hunks
    return out


def hunk(old_start: int, old_lines: int, new_start: int, new_lines: int, *lines: str) -> dict[str, Any]:
    return {"old_start": old_start, "old_lines": old_lines, "new_start": new_start, "new_lines": new_lines,
            "lines": list(lines)}


def edit_line(tool: str, result_value: dict[str, Any], **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"type": "user", "uuid": "u-edit", "timestamp": TS, "cwd": CWD,
                            "message": {"role": "user", "content": [
                                {"type": "tool_result", "tool_use_id": tool, "content": "Done."}]},
                            "toolUseResult": result_value}
    base.update(fields)
    return base


def edit_result(tool: str, result_value: dict[str, Any]) -> dict[str, Any]:
    return result(tool, text="Done.", data=result_value, bytes=5)


# ---- §1 the envelope, §2 which path a line takes ---------------------------------------------

row("a carriage return before the newline stays in the payload",
    b'{"type":"system","subtype":"turn_duration","durationMs":812}\r',
    {"from": "runtime", "flags": ["turn_duration"],
     "parts": [whole(b'{"type":"system","subtype":"turn_duration","durationMs":812}\r')]})
row("an empty line is an unknown part of no bytes", b"",
    {"from": "runtime", "parts": [unknown(b"", NOT_JSON)]})
row("a line that is not JSON is an unknown part keeping its bytes", b'{"type":"user","message":',
    {"from": "runtime", "parts": [unknown(b'{"type":"user","message":', NOT_JSON)]})
for value, what in ((b"[1,2]", "list"), (b'"hello"', "string"), (b"42", "number"), (b"true", "boolean")):
    row(f"a JSON {what} is not a record", value, {"from": "runtime", "parts": [unknown(value, NOT_JSON)]})
for bad, what in (
    (user("hi", uuid=5), "a uuid that is a number"),
    ({"type": "user", "message": "hi"}, "a message that is a string"),
    (user("hi", isMeta="true"), "an isMeta that is a string"),
    ({"type": "assistant", "message": {"usage": {"input_tokens": 1.5}}}, "a token count with a fraction"),
    (b'{"type":"assistant","message":{"usage":{"input_tokens":1e3}}}', "a token count with an exponent"),
    (b'{"type":"assistant","message":{"usage":{"output_tokens":9223372036854775808}}}',
     "a token count past 64 bits"),
    (user("hi", origin="human"), "an origin that is a string"),
    (assistant([], stop=3), "a stop reason that is a number"),
    (attachment(["queued_command"]), "an attachment that is a list"),
):
    raw = bad if isinstance(bad, bytes) else orjson.dumps(bad)
    row(f"{what} makes the line unreadable", raw, {"from": "runtime", "parts": [unknown(raw, NOT_JSON)]})
row("an unreadable line naming a prompt snapshot may carry the system prompt and tool schemas",
    b'{"type":"attachment","attachment":{"type":"prompt_snapshot","systemPrompt":["You are',
    {"from": "runtime", "flags": ["system_prompt", "tool_schemas"],
     "parts": [unknown(b'{"type":"attachment","attachment":{"type":"prompt_snapshot","systemPrompt":["You are',
                       NOT_JSON)]})
row("an unreadable line naming a deferred tools record may carry the tool schemas",
    b'{"type":"attachment","uuid":7,"attachment":{"type":"deferred_tools_record"}}',
    {"from": "runtime", "flags": ["tool_schemas"],
     "parts": [unknown(b'{"type":"attachment","uuid":7,"attachment":{"type":"deferred_tools_record"}}', NOT_JSON)]})
row("an unreadable line naming both is flagged as for the snapshot",
    b'["deferred_tools_record","prompt_snapshot"]',
    {"from": "runtime", "flags": ["system_prompt", "tool_schemas"],
     "parts": [unknown(b'["deferred_tools_record","prompt_snapshot"]', NOT_JSON)]})
row("an unreadable line naming neither kind, only its words, is not flagged", b'[prompt_snapshot]',
    {"from": "runtime", "parts": [unknown(b"[prompt_snapshot]", NOT_JSON)]})
row("a null line is an empty record holding itself", b"null",
    {"from": "runtime", "parts": [{"k": "data", "data": None, "state": "available", "bytes": 4}]})
row("a field upstream does not read may hold anything", user("hi", uuid="u-any", version=5, isSidechain="no"),
    {"id": "u-any", "from": "external", "parts": [text("hi")]})
row("a key differing only in case names the field", b'{"type":"user","UUID":"u-case","Message":{"content":"hi"}}',
    {"id": "u-case", "from": "external", "parts": [text("hi")]})
row("of two keys naming one field the last wins",
    b'{"type":"user","uuid":"first","UUID":"second","message":{"content":"hi"}}',
    {"id": "second", "from": "external", "parts": [text("hi")]})

# ---- §3 record fields, §3.1 from --------------------------------------------------------------

row("an assistant line gives its fields and its usage without the zeros",
    assistant([{"type": "text", "text": "Done."}], stop="end_turn", uuid="u-1", parentUuid="p-1", promptId="r-1",
              timestamp=TS, logicalParentUuid="l-0", parentAgentId="a0000000000000001", requestId="req_1",
              **{"message": {"id": "msg_1", "model": "claude-opus-4-7", "stop_reason": "end_turn",
                             "content": [{"type": "text", "text": "Done."}],
                             "usage": {"input_tokens": 3, "output_tokens": 0, "cache_read_input_tokens": 20729,
                                       "cache_creation_input_tokens": 0, "service_tier": "standard"}}}),
    {"id": "u-1", "parent": "p-1", "call": "msg_1", "run": "r-1", "continues": "l-0",
     "started_by": "a0000000000000001", "from": "agent", "time": TS, "flags": ["finished"],
     "usage": {"in": 3, "cache_read": 20729}, "model": "claude-opus-4-7", "parts": [text("Done.")]})
row("a null usage is no usage",
    assistant([{"type": "text", "text": "x"}], **{"message": {"content": "x", "usage": None}}),
    {"from": "agent", "parts": [text("x")]})
row("the first non-empty of aiTitle, description and workflowName is the label",
    line(type="ai-title", aiTitle="", description="d", workflowName="w", sessionId=SESSION),
    {"label": "d", "from": "runtime",
     "parts": [whole(line(type="ai-title", aiTitle="", description="d", workflowName="w", sessionId=SESSION))]})
row("a custom title is no label", line(type="custom-title", customTitle="mine"),
    {"from": "runtime", "parts": [whole(line(type="custom-title", customTitle="mine"))]})
row("continues is read on any line type", user("go on", logicalParentUuid="l-7"),
    {"continues": "l-7", "from": "external", "parts": [text("go on")]})
row("a progress line is the runtime's and names no call and no child",
    line(type="progress", parentToolUseID="toolu_9", toolUseID="agent_msg_1",
         data={"type": "agent_progress", "agentId": "a0123456789abcdef"}),
    {"from": "runtime", "parts": [whole(line(type="progress", parentToolUseID="toolu_9", toolUseID="agent_msg_1",
                                             data={"type": "agent_progress", "agentId": "a0123456789abcdef"}))]})
row("a line with no type is the runtime's", line(uuid="u-nt", message={"content": "hi"}),
    {"id": "u-nt", "from": "runtime", "parts": [text("hi")]})
row("a sourceToolUseID names no call", user("x", sourceToolUseID="toolu_s"),
    {"from": "external", "parts": [text("x")]})
row("a string toolUseResult is carried nowhere",
    user([{"type": "tool_result", "tool_use_id": "toolu_f", "content": "boom", "is_error": True}],
         toolUseResult="Error: boom"),
    {"from": "external", "parts": [result("toolu_f", text="boom", failed=True, bytes=4)]})

# ---- §4 trigger -----------------------------------------------------------------------------

row("a person's prompt is trigger external and external input", user("fix it", origin={"kind": "human"}),
    {"from": "external", "trigger": "external", "flags": ["external_input"], "parts": [text("fix it")]})
NOTIFICATION = ("<task-notification>\n<task-id>b7k2x9</task-id>\n<task-id>a0123456789abcdef</task-id>\n"
                "<tool-use-id> toolu_01N </tool-use-id>\n<status>completed</status>\n</task-notification>")
row("a completion notification is trigger notification and names its call and its agent task",
    user(NOTIFICATION, origin={"kind": "task-notification"}),
    {"from": "external", "trigger": "notification", "tool": "toolu_01N", "child": "a0123456789abcdef",
     "parts": [text(NOTIFICATION)]})
row("an origin kind not known is trigger unknown", user("tick", origin={"kind": "cron"}),
    {"from": "external", "trigger": "unknown", "parts": [text("tick")]})
QUEUED_NOTE = {"type": "queued_command", "commandMode": "task-notification", "prompt": "<task-notification/>",
               "origin": {"kind": "task-notification"}}
row("an attachment's origin is read when the line has none", attachment(QUEUED_NOTE),
    {"from": "runtime", "trigger": "notification", "flags": ["injected"], "parts": [data(QUEUED_NOTE)]})
row("a headless prompt is trigger external and external input", user("go", promptSource="sdk"),
    {"from": "external", "trigger": "external", "flags": ["external_input"], "parts": [text("go")]})
row("a headless prompt written as meta is injected and has no trigger", user("note", promptSource="sdk", isMeta=True),
    {"from": "external", "flags": ["injected"], "parts": [text("note")]})

# ---- §5 flags --------------------------------------------------------------------------------

row("an assistant line the client wrote is synthetic",
    assistant([{"type": "text", "text": "API Error"}], stop="stop_sequence",
              **{"message": {"model": "<synthetic>", "stop_reason": "stop_sequence",
                             "content": [{"type": "text", "text": "API Error"}]}}),
    {"from": "agent", "model": "<synthetic>", "flags": ["synthetic", "finished"], "parts": [text("API Error")]})
BOUNDARY = line(type="system", subtype="compact_boundary", parentUuid=None, logicalParentUuid="l-9", uuid="u-cb",
                compactMetadata={"trigger": "auto", "preTokens": 167000})
row("a compaction boundary is a context reset that continues its logical parent", BOUNDARY,
    {"id": "u-cb", "continues": "l-9", "from": "runtime", "flags": ["context_reset"], "parts": [whole(BOUNDARY)]})
row("a compaction summary is the reset's summary", user("This session is being continued", isCompactSummary=True),
    {"from": "external", "flags": ["reset_summary"], "parts": [text("This session is being continued")]})
row("an empty stop reason does not finish", assistant([{"type": "text", "text": "x"}], stop=""),
    {"call": "msg_1", "from": "agent", "model": "claude-opus-4-7", "parts": [text("x")]})
row("a stop reason on a user line does not finish",
    line(type="user", message={"role": "user", "content": "x", "stop_reason": "end_turn"}),
    {"from": "external", "parts": [text("x")]})
QUEUED = {"type": "queued_command", "commandMode": "prompt", "prompt": "also add tests"}
row("a queued prompt the person typed is external input", attachment(QUEUED),
    {"from": "runtime", "flags": ["external_input"], "parts": [data(QUEUED)]})
row("a queued prompt written as meta is only injected", attachment(QUEUED, isMeta=True),
    {"from": "runtime", "flags": ["injected"], "parts": [data(QUEUED)]})
row("a person's prompt written as meta is injected, not external input",
    user("<command-name>/clear</command-name>", origin={"kind": "human"}, isMeta=True),
    {"from": "external", "trigger": "external", "flags": ["injected"],
     "parts": [text("<command-name>/clear</command-name>")]})
row("any other attachment is injected", attachment({"type": "hook_success", "content": "ok", "hookName": "Start"}),
    {"from": "runtime", "flags": ["injected"], "parts": [text("ok")]})
COMPLETED = {"status": "completed", "agentId": "a0123456789abcdef", "content": "done", "totalTokens": 5}
row("a tool result returning a child's value is a child result",
    user([{"type": "tool_result", "tool_use_id": "toolu_7", "content": "done"}], toolUseResult=COMPLETED),
    {"from": "external", "child": "a0123456789abcdef", "flags": ["child_result"],
     "parts": [result("toolu_7", text="done", data=COMPLETED, bytes=4)]})
LAUNCHED = {"status": "async_launched", "agentId": "a1111111111111111", "isAsync": True}
row("a launch acknowledgement is launch_ack, not a child result",
    user([{"type": "tool_result", "tool_use_id": "toolu_8", "content": "started"}], toolUseResult=LAUNCHED),
    {"from": "external", "child": "a1111111111111111", "flags": ["launch_ack"],
     "parts": [result("toolu_8", text="started", data=LAUNCHED, bytes=7)]})
FORKED = {"status": "forked", "agentId": "a2222222222222222"}
row("a forked skill sets no flag",
    user([{"type": "tool_result", "tool_use_id": "toolu_9", "content": "ok"}], toolUseResult=FORKED),
    {"from": "external", "child": "a2222222222222222", "parts": [result("toolu_9", text="ok", data=FORKED, bytes=2)]})
for subtype, flag in (("api_error", "error"), ("local_command", "command"), ("stop_hook_summary", "notice"),
                      (None, "notice")):
    system = line(type="system", subtype=subtype, level="info") if subtype else line(type="system", level="info")
    row(f"a system line of subtype {subtype} is {flag}", system,
        {"from": "runtime", "flags": [flag], "parts": [whole(system)]})
ORDERED = line(type="system", subtype="compact_boundary", isCompactSummary=True, isMeta=True)
row("flags follow upstream's order", ORDERED,
    {"from": "runtime", "flags": ["context_reset", "reset_summary", "injected"], "parts": [whole(ORDERED)]})
SNAPSHOT = {"type": "prompt_snapshot", "systemPrompt": ["You are Claude Code"], "tools": [{"name": "Bash"}],
            "inlineTools": True}
row("a prompt snapshot holding tools names the system prompt and the tool schemas", attachment(SNAPSHOT),
    {"from": "runtime", "flags": ["injected", "system_prompt", "tool_schemas"], "parts": [data(SNAPSHOT)]})
BARE_SNAPSHOT = {"type": "prompt_snapshot", "systemPrompt": ["You are"], "tools": [], "toolChangeHeader": True,
                 "echoWireToolInputs": "  "}
row("a prompt snapshot whose tool keys hold only a flag, an empty list or empty text names the system prompt",
    attachment({**BARE_SNAPSHOT, "echoWireToolInputs": ""}),
    {"from": "runtime", "flags": ["injected", "system_prompt"],
     "parts": [data({**BARE_SNAPSHOT, "echoWireToolInputs": ""})]})
row("a prompt snapshot whose tool key holds any text names the tool schemas", attachment(BARE_SNAPSHOT),
    {"from": "runtime", "flags": ["injected", "system_prompt", "tool_schemas"], "parts": [data(BARE_SNAPSHOT)]})
DEFERRED = {"type": "deferred_tools_record", "entries": [{"name": "WebFetch"}], "toolInputCopies": []}
row("a deferred tools record holding entries names the tool schemas", attachment(DEFERRED),
    {"from": "runtime", "flags": ["injected", "tool_schemas"], "parts": [data(DEFERRED)]})
EMPTY_DEFERRED = {"type": "deferred_tools_record", "entries": [], "toolInputCopies": [{"id": "1", "copy": "x"}]}
row("a deferred tools record with nothing in its entries names nothing", attachment(EMPTY_DEFERRED),
    {"from": "runtime", "flags": ["injected"], "parts": [data(EMPTY_DEFERRED)]})

# ---- §6 tool, child, batch ----------------------------------------------------------------------

LINKED = {"status": "async_launched", "toolUseId": "toolu_x", "agentId": "a3333333333333333", "runId": "wf_abc"}
row("a tool result names its call, its child and its run",
    user([{"type": "tool_result", "tool_use_id": "toolu_x", "content": "started"}], toolUseResult=LINKED),
    {"from": "external", "tool": "toolu_x", "child": "a3333333333333333", "batch": "wf_abc", "flags": ["launch_ack"],
     "parts": [result("toolu_x", text="started", data=LINKED, bytes=7)]})
row("a tool result that does not read still names its child but is neither data nor a child result",
    user([{"type": "tool_result", "tool_use_id": "toolu_y", "content": [{"type": "text", "text": "r"}]}],
         toolUseResult={"status": "completed", "agentId": "a4444444444444444",
                        "content": [{"type": "text", "text": "r"}]}),
    {"from": "external", "child": "a4444444444444444", "parts": [result("toolu_y", text="r", bytes=1)]})
row("a notification in a list of blocks names nothing",
    user([{"type": "text", "text": "<task-notification><tool-use-id>t</tool-use-id></task-notification>"}]),
    {"from": "external", "parts": [text("<task-notification><tool-use-id>t</tool-use-id></task-notification>")]})
OTHER_TASK = "<task-notification><task-id>bash_1</task-id><tool-use-id>toolu_b</tool-use-id></task-notification>"
row("a notification whose task ids are not agents names no child", user(OTHER_TASK),
    {"from": "external", "tool": "toolu_b", "parts": [text(OTHER_TASK)]})
EMPTY_TASK = "<task-notification><task-id></task-id><task-id>a5555555555555555</task-id></task-notification>"
row("an empty task id ends the search for an agent", user(EMPTY_TASK),
    {"from": "external", "parts": [text(EMPTY_TASK)]})

# ---- §7 parts, §8 dropped ----------------------------------------------------------------------

row("an attachment line's message is not read",
    attachment({"type": "x", "text": "seen"}, message={"content": "unseen"}),
    {"from": "runtime", "flags": ["injected"], "parts": [text("seen")]})
row("an attachment whose text is empty gives its string content",
    attachment({"type": "x", "text": "", "content": "from content"}),
    {"from": "runtime", "flags": ["injected"], "parts": [text("from content")]})
for value, what in (({"type": "x", "content": ""}, "whose content is an empty string"),
                    ({"type": "x", "text": 5}, "whose text is not a string"),
                    ({"type": "x", "content": ["a"]}, "whose content is a list")):
    row(f"an attachment {what} is data", attachment(value),
        {"from": "runtime", "flags": ["injected"], "parts": [data(value)]})
row("a null attachment is data holding null", attachment(None),
    {"from": "runtime", "flags": ["injected"],
     "parts": [{"k": "data", "data": None, "state": "available", "bytes": 4}]})
row("an attachment line with no attachment is an empty data part", line(type="attachment", uuid="u-na"),
    {"id": "u-na", "from": "runtime", "flags": ["injected"], "parts": [{"k": "data", "state": "available"}]})
row("content that is an empty string is one empty text part", user(""),
    {"from": "external", "parts": [{"k": "text", "state": "available"}]})
row("an empty block list holds the whole line", user([]), {"from": "external", "parts": [whole(user([]))]})
row("null content holds the whole line", user(None), {"from": "external", "parts": [whole(user(None))]})
row("content that is a number is an unknown part", user(5),
    {"from": "external", "parts": [unknown(b"5", NOT_CONTENT)]})
row("content that is an object is an unknown part", user({"a": 1}),
    {"from": "external", "parts": [unknown(b'{"a":1}', NOT_CONTENT)]})
row("a block that is a string is not an object", user(["x", {"type": "text", "text": "y"}]),
    {"from": "external", "parts": [unknown(b'"x"', NOT_BLOCK), text("y")]})
row("a null block has the empty type", user([None]),
    {"from": "external", "parts": [unknown(b"null", 'block type "" is not one this dialect describes')]})
row("a block whose id is a number is not an object",
    assistant([{"type": "tool_use", "id": 5, "name": "Bash", "input": {}}]),
    {"call": "msg_1", "from": "agent", "model": "claude-opus-4-7",
     "parts": [unknown({"type": "tool_use", "id": 5, "name": "Bash", "input": {}}, NOT_BLOCK)]})
row("a text block with no text is an empty text part", user([{"type": "text"}]),
    {"from": "external", "parts": [{"k": "text", "state": "available"}]})
row("thinking keeps its text and drops its signature",
    assistant([{"type": "thinking", "thinking": "hmm", "signature": "sig=="}]),
    {"call": "msg_1", "from": "agent", "model": "claude-opus-4-7",
     "parts": [{"k": "reasoning", "text": "hmm", "state": "available", "bytes": 3}],
     "dropped": [{"what": "reasoning signature", "bytes": 5, "why": WHY}]})
row("thinking without text is unavailable", assistant([{"type": "thinking", "thinking": "", "signature": "abc"}]),
    {"call": "msg_1", "from": "agent", "model": "claude-opus-4-7",
     "parts": [{"k": "reasoning", "state": "unavailable"}],
     "dropped": [{"what": "reasoning signature", "bytes": 3, "why": WHY}]})
row("redacted thinking is redacted and drops its signature",
    assistant([{"type": "redacted_thinking", "data": "ENCRYPTED", "signature": "s1"}]),
    {"call": "msg_1", "from": "agent", "model": "claude-opus-4-7", "parts": [{"k": "reasoning", "state": "redacted"}],
     "dropped": [{"what": "reasoning signature", "bytes": 2, "why": WHY}]})
row("a tool use is a call with its input as data",
    assistant([{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"},
                "caller": {"type": "direct"}}]),
    {"call": "msg_1", "from": "agent", "model": "claude-opus-4-7",
     "parts": [{"k": "call", "id": "toolu_1", "name": "Bash", "data": {"command": "ls"}, "state": "available",
                "bytes": len(b'{"command":"ls"}')}]})
row("a tool use without input is a call with no data",
    assistant([{"type": "tool_use", "id": "toolu_2", "name": "Stop"}]),
    {"call": "msg_1", "from": "agent", "model": "claude-opus-4-7",
     "parts": [{"k": "call", "id": "toolu_2", "name": "Stop", "state": "available"}]})
for name, server, tool in (("mcp__github__get_issue", "github", "get_issue"), ("mcp__foo___bar", None, None),
                           ("mcp__a__b__c", None, None), ("mcp____x", None, None), ("mcp__x__", None, None)):
    call: dict[str, Any] = {"k": "call", "id": "toolu_3", "name": name, "data": {}, "state": "available", "bytes": 2}
    if server:
        call.update(server=server, server_tool=tool)
    row(f"the MCP name {name} is {'split' if server else 'left whole'}",
        assistant([{"type": "tool_use", "id": "toolu_3", "name": name, "input": {}}]),
        {"call": "msg_1", "from": "agent", "model": "claude-opus-4-7", "parts": [call]})
row("a server tool use is never split",
    assistant([{"type": "server_tool_use", "id": "srvtoolu_1", "name": "mcp__x__y", "input": {"q": "a"}}]),
    {"call": "msg_1", "from": "agent", "model": "claude-opus-4-7",
     "parts": [{"k": "call", "id": "srvtoolu_1", "name": "mcp__x__y", "data": {"q": "a"}, "state": "available",
                "bytes": 9}]})
row("a tool result of a string is its text, failed when it says so",
    user([{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok", "is_error": False}]),
    {"from": "external", "parts": [result("toolu_1", text="ok", failed=False, bytes=2)]})
row("a tool result whose is_error is null says nothing of failure",
    user([{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok", "is_error": None}]),
    {"from": "external", "parts": [result("toolu_1", text="ok", bytes=2)]})
MIXED = [{"type": "text", "text": "a"}, {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                                    "data": "AAA"}}, {"type": "text", "text": "b"}]
row("a tool result of blocks is the texts of its blocks joined",
    user([{"type": "tool_result", "tool_use_id": "toolu_1", "content": MIXED}]),
    {"from": "external", "parts": [result("toolu_1", text="a\nb", bytes=3)]})
REFERENCES = [{"type": "tool_reference", "tool_name": "Read"}]
row("a tool result whose blocks hold no text is its content as data",
    user([{"type": "tool_result", "tool_use_id": "toolu_1", "content": REFERENCES}]),
    {"from": "external", "parts": [result("toolu_1", data=REFERENCES, bytes=len(orjson.dumps(REFERENCES)))]})
row("a tool result of an empty string is that string as data",
    user([{"type": "tool_result", "tool_use_id": "toolu_1", "content": ""}]),
    {"from": "external", "parts": [result("toolu_1", data="", bytes=2)]})
row("a tool result with no content has no text and no data",
    user([{"type": "tool_result", "tool_use_id": "toolu_1"}]),
    {"from": "external", "parts": [result("toolu_1")]})
row("a tool result whose content is a number is that number as data",
    user([{"type": "tool_result", "tool_use_id": "toolu_1", "content": 7}]),
    {"from": "external", "parts": [result("toolu_1", data=7, bytes=1)]})
SEARCH = {"matches": ["Read"], "query": "select:Read", "total_deferred_tools": 12}
row("a tool result object replaces the result's data but not its size",
    user([{"type": "tool_result", "tool_use_id": "toolu_1", "content": REFERENCES}], toolUseResult=SEARCH),
    {"from": "external", "parts": [result("toolu_1", data=SEARCH, bytes=len(orjson.dumps(REFERENCES)))]})
row("an image is media of its data",
    user([{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}]),
    {"from": "external", "parts": [{"k": "media", "media": "image/png", "data": "iVBORw0KGgo=", "state": "available",
                                   "bytes": 12}]})
row("an image of another source kind is media with no data",
    user([{"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}]),
    {"from": "external", "parts": [{"k": "media", "data": "", "state": "available"}]})
row("an image whose source is a string is not an object", user([{"type": "image", "source": "x"}]),
    {"from": "external", "parts": [unknown({"type": "image", "source": "x"}, NOT_BLOCK)]})
row("a block of a type not described is unknown with its bytes",
    assistant([{"type": "fallback", "to": {"model": "m"}}]),
    {"call": "msg_1", "from": "agent", "model": "claude-opus-4-7",
     "parts": [unknown({"type": "fallback", "to": {"model": "m"}},
                       'block type "fallback" is not one this dialect describes')]})

# ---- §9 the changes/1 part ------------------------------------------------------------------------

EDIT = {"filePath": f"{CWD}/src/a.py", "oldString": "x = 1", "newString": "x = 2", "originalFile": "a\nx = 1\nb\n",
        "structuredPatch": [{"oldStart": 1, "oldLines": 3, "newStart": 1, "newLines": 3,
                             "lines": [" a", "-x = 1", "+x = 2", " b"]}], "userModified": False, "replaceAll": False}
row("an edit's patch becomes a changes/1 part after the result", edit_line("toolu_e", EDIT),
    {"id": "u-edit", "from": "external", "time": TS, "parts": [
        edit_result("toolu_e", EDIT),
        changes("toolu_e", file_change("src/a.py", "modify", "a\nx = 1\nb\n", "a\nx = 2\nb\n", adds=1, dels=1,
                                       hunks=[hunk(1, 3, 1, 3, " a", "-x = 1", "+x = 2", " b")]))]})
CREATE = {"type": "create", "filePath": f"{CWD}/new.txt", "content": "one\ntwo", "structuredPatch": [],
          "originalFile": None}
row("a created file is diffed from nothing", edit_line("toolu_c", CREATE),
    {"id": "u-edit", "from": "external", "time": TS, "parts": [
        edit_result("toolu_c", CREATE),
        changes("toolu_c", file_change("new.txt", "create", None, "one\ntwo", adds=2, dels=0,
                                       hunks=[hunk(0, 0, 1, 2, "+one", "+two")]))]})
NOTEBOOK = {"notebook_path": f"{CWD}/n.ipynb", "original_file": "x\ny\nz\n", "updated_file": "x\nY\nz\n",
            "new_source": "Y"}
row("a notebook edit is diffed from its before and after", edit_line("toolu_n", NOTEBOOK),
    {"id": "u-edit", "from": "external", "time": TS, "parts": [
        edit_result("toolu_n", NOTEBOOK),
        changes("toolu_n", file_change("n.ipynb", "modify", "x\ny\nz\n", "x\nY\nz\n", adds=1, dels=1,
                                       hunks=[hunk(1, 3, 1, 3, " x", "-y", "+Y", " z")]))]})
TEN = "".join(f"{n}\n" for n in range(1, 11))
TEN_AFTER = "one\n" + "".join(f"{n}\n" for n in range(2, 10)) + "ten\n"
APART = {"notebook_path": f"{CWD}/t.ipynb", "original_file": TEN, "updated_file": TEN_AFTER}
row("changes far apart are two hunks of three lines of context", edit_line("toolu_t", APART),
    {"id": "u-edit", "from": "external", "time": TS, "parts": [
        edit_result("toolu_t", APART),
        changes("toolu_t", file_change("t.ipynb", "modify", TEN, TEN_AFTER, adds=2, dels=2, hunks=[
            hunk(1, 4, 1, 4, "-1", "+one", " 2", " 3", " 4"), hunk(7, 4, 7, 4, " 7", " 8", " 9", "-10", "+ten")]))]})
REPLACE_ALL = {"filePath": f"{CWD}/f", "oldString": "o", "newString": "0", "originalFile": "foo\n",
               "structuredPatch": [], "replaceAll": True}
row("replaceAll replaces every occurrence to know the after side", edit_line("toolu_r", REPLACE_ALL),
    {"id": "u-edit", "from": "external", "time": TS, "parts": [
        edit_result("toolu_r", REPLACE_ALL),
        changes("toolu_r", file_change("f", "modify", "foo\n", "f00\n", adds=1, dels=1,
                                       hunks=[hunk(1, 1, 1, 1, "-foo", "+f00")]))]})
OUTSIDE = {"filePath": "/etc/hosts", "originalFile": "a\n", "content": "b\n",
           "structuredPatch": [{"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1, "lines": ["-a", "+b"]}]}
row("a file outside the working directory keeps its path as written", edit_line("toolu_o", OUTSIDE),
    {"id": "u-edit", "from": "external", "time": TS, "parts": [
        edit_result("toolu_o", OUTSIDE),
        changes("toolu_o", file_change("/etc/hosts", "modify", "a\n", "b\n", adds=1, dels=1,
                                       hunks=[hunk(1, 1, 1, 1, "-a", "+b")]))]})
row("without a working directory the path is kept and the record has no root",
    {k: v for k, v in edit_line("toolu_w", OUTSIDE).items() if k != "cwd"},
    {"id": "u-edit", "from": "external", "time": TS, "parts": [
        edit_result("toolu_w", OUTSIDE),
        changes("toolu_w", file_change("/etc/hosts", "modify", "a\n", "b\n", adds=1, dels=1,
                                       hunks=[hunk(1, 1, 1, 1, "-a", "+b")]), root=None)]})
BINARY = {"notebook_path": f"{CWD}/b.ipynb", "original_file": "a\u0000", "updated_file": "b"}
row("a side holding a NUL byte is binary and counts nothing", edit_line("toolu_b", BINARY),
    {"id": "u-edit", "from": "external", "time": TS, "parts": [
        edit_result("toolu_b", BINARY),
        changes("toolu_b", file_change("b.ipynb", "modify", "a\u0000", "b", diff="binary"))]})
NOTHING = {"filePath": f"{CWD}/x", "originalFile": None, "structuredPatch": []}
row("a result with no patch and no after says nothing of a change", edit_line("toolu_z", NOTHING),
    {"id": "u-edit", "from": "external", "time": TS, "parts": [edit_result("toolu_z", NOTHING)]})
row("a line with no time gives no changes record",
    {k: v for k, v in edit_line("toolu_q", EDIT).items() if k != "timestamp"},
    {"id": "u-edit", "from": "external", "parts": [edit_result("toolu_q", EDIT)]})
row("a changes record needs a result naming its call",
    {**edit_line("toolu_v", EDIT), "message": {"role": "user", "content": "no result here"}},
    {"id": "u-edit", "from": "external", "time": TS, "parts": [text("no result here")]})

# ---- sidecars, journals, manifests, scripts ------------------------------------------------------

SIDECAR = {"agentType": "Explore", "description": "Find x", "parentAgentId": "a9999999999999999"}
row("a sidecar is the runtime's and names its agent as the child and its description as the label",
    SIDECAR, {"from": "runtime", "child": "a6666666666666666", "label": "Find x",
              "started_by": "a9999999999999999", "parts": [whole(SIDECAR)]},
    where="sidecar", place="a6666666666666666")
OWN_ID = {"agentId": "a8888888888888888", "description": "d"}
row("a sidecar's own agentId names the child", OWN_ID,
    {"from": "runtime", "child": "a8888888888888888", "label": "d", "parts": [whole(OWN_ID)]},
    where="sidecar", place="a7777777777777770")
STARTED = {"type": "started", "agentId": "a7777777777777777", "timestamp": TS}
row("a journal line names its child in its run", STARTED,
    {"from": "runtime", "child": "a7777777777777777", "batch": RUN, "time": TS, "parts": [whole(STARTED)]},
    where="journal")
RETURNED = {"type": "result", "agentId": "a7777777777777777", "result": None}
row("a journal line with a result returns a child's value even when it is null", RETURNED,
    {"from": "runtime", "child": "a7777777777777777", "batch": RUN, "flags": ["child_result"],
     "parts": [whole(RETURNED)]}, where="journal")
row("a journal line is never external input", user("x", origin={"kind": "human"}),
    {"from": "runtime", "trigger": "external", "batch": RUN, "parts": [text("x")]}, where="journal")
MANIFEST = {"workflowName": "tidy", "runId": "wf_0ther", "steps": []}
row("a manifest is labelled by its workflow and batched by its runId", MANIFEST,
    {"from": "runtime", "label": "tidy", "batch": "wf_0ther", "parts": [whole(MANIFEST)]},
    where="manifest", place="wf_1a")
row("a manifest without a runId is batched by its run", {"workflowName": "tidy"},
    {"from": "runtime", "label": "tidy", "batch": "wf_2b", "parts": [whole({"workflowName": "tidy"})]},
    where="manifest", place="wf_2b")
row("a manifest whose fields do not read has no label and no batch", {"workflowName": 5},
    {"from": "runtime", "parts": [whole({"workflowName": 5})]}, where="manifest", place="wf_3c")
WORKFLOW_CHILD = "a0f0f0f0f0f0f0f0f"
row("a workflow child's line is not batched by the run it is filed under",
    user("check the links", agentId=WORKFLOW_CHILD),
    {"from": "external", "parts": [text("check the links")]}, where="child", place=WORKFLOW_CHILD)
row("a tool result's run names a workflow child's line's batch",
    user([{"type": "tool_result", "tool_use_id": "toolu_w", "content": "ok"}], toolUseResult={"runId": "wf_9"}),
    {"from": "external", "batch": "wf_9", "parts": [result("toolu_w", text="ok", data={"runId": "wf_9"}, bytes=2)]},
    where="child", place=WORKFLOW_CHILD)
SCRIPT = b"export default async function run(ctx) { return ctx.agents.length < 3 && true }"
row("a workflow script is a program kept as bytes", SCRIPT,
    {"from": "runtime", "parts": [unknown(SCRIPT, "the source is a program, not data")]},
    where="script", place="wf_4d")


# ---- landing them all ---------------------------------------------------------------------------


@dataclass
class Landed:
    records: dict[str, tuple[dict[str, Any], int, int]]  #: row name → (record, ord, off)
    root: Path


def _write(projects: Path) -> dict[str, tuple[int, int]]:
    """Write every row into one session's files; row name → (ord, off) it should land at."""
    session = projects / SLUG / SESSION
    places: dict[str, tuple[int, int]] = {}
    appended: dict[Path, list[Row]] = {}
    for item in ROWS:
        if item.where == "main":
            appended.setdefault(projects / SLUG / f"{SESSION}.jsonl", []).append(item)
        elif item.where == "journal":
            appended.setdefault(session / "subagents" / "workflows" / RUN / "journal.jsonl", []).append(item)
        elif item.where == "child":
            child = session / "subagents" / "workflows" / RUN / f"agent-{item.place}.jsonl"
            appended.setdefault(child, []).append(item)
        else:
            path = {"sidecar": session / "subagents" / f"agent-{item.place}.meta.json",
                    "manifest": session / "workflows" / f"{item.place}.json",
                    "script": session / "workflows" / "scripts" / f"tidy-{item.place}.js"}[item.where]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(item.line)
            places[item.name] = (1, 0)
    for path, items in appended.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        offset = 0
        for ordinal, item in enumerate(items, start=1):
            places[item.name] = (ordinal, offset)
            offset += len(item.line) + 1
        path.write_bytes(b"".join(item.line + b"\n" for item in items))
    return places


@pytest.fixture(scope="module")
def landed(tmp_path_factory: pytest.TempPathFactory) -> Landed:
    work = tmp_path_factory.mktemp("golden")
    places = _write(work / "projects")
    runner = PassRunner(work, work / "root")
    runner.configure(adapters=[{"name": "claude-code-local", "source_root": str(work / "projects"),
                                "exclude": []}])
    summary = runner.run()
    assert not summary.failed
    by_place: dict[tuple[str, int], dict[str, Any]] = {}
    for _, path in landed_files(runner.root / SESSION):
        header, *lines = path.read_bytes().splitlines()
        src = orjson.loads(header)["src"]
        for raw in lines:  # each landed line as written, decoded
            record = orjson.loads(raw)
            if record.get("t") != "end":
                by_place[(src, record["ord"])] = record
    records: dict[str, tuple[dict[str, Any], int, int]] = {}
    for item in ROWS:
        src = _src(item)
        ordinal, offset = places[item.name]
        records[item.name] = (by_place[(src, ordinal)], ordinal, offset)
    return Landed(records, runner.root)


def _src(item: Row) -> str:
    base = f"{SLUG}/{SESSION}"
    return {"main": f"{SLUG}/{SESSION}.jsonl", "journal": f"{base}/subagents/workflows/{RUN}/journal.jsonl",
            "sidecar": f"{base}/subagents/agent-{item.place}.meta.json",
            "child": f"{base}/subagents/workflows/{RUN}/agent-{item.place}.jsonl",
            "manifest": f"{base}/workflows/{item.place}.json",
            "script": f"{base}/workflows/scripts/tidy-{item.place}.js"}[item.where]


def _as_upstream_writes(record: dict[str, Any]) -> dict[str, Any]:
    """A record's value with what upstream leaves out left out (a part's ``bytes`` of 0, an
    empty ``usage``), so a writer that still writes them compares equal."""
    out = {k: v for k, v in record.items() if not (k == "usage" and v == {})}
    out["parts"] = [{k: v for k, v in part.items() if not (k == "bytes" and v == 0) and not (k == "text" and v == "")}
                    for part in record.get("parts", [])]
    return out


def _ids() -> Iterator[str]:
    seen = set()
    for item in ROWS:
        assert item.name not in seen, f"two rows are named {item.name!r}"
        seen.add(item.name)
        yield item.name


@pytest.mark.parametrize("item", ROWS, ids=list(_ids()))
def test_each_source_shape_lands_as_upstream_maps_it(item: Row, landed: Landed) -> None:
    record, ordinal, offset = landed.records[item.name]
    assert (record.pop("ord"), record.pop("off"), record.pop("sha"), record.pop("bytes")) == (
        ordinal, offset, hashlib.sha256(item.line).hexdigest()[:12], len(item.line))
    assert _as_upstream_writes(record) == _as_upstream_writes(item.expected)


def test_the_golden_session_verifies(landed: Landed, assert_root_verifies: Callable[[Path], None]) -> None:
    assert_root_verifies(landed.root)


def test_all_zero_usage_is_still_a_usage_object() -> None:
    # upstream writes "usage":{} whenever message.usage is an object, zeros or not
    dialect = ClaudeCodeDialect(SourceFacts(TRANSCRIPT, SESSION, "main"))
    raw = orjson.dumps(assistant([], **{"message": {"usage": {"input_tokens": 0, "output_tokens": 0}}}))
    record = as_record(dialect.convert(SourceLine(raw)))
    assert record.usage is not None and record.usage.to_json() == {}
    none = orjson.dumps(assistant([], **{"message": {"usage": None}}))
    assert as_record(dialect.convert(SourceLine(none))).usage is None
