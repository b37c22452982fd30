"""``kiro-ide/1``: one line of a Kiro IDE (≥ 1.0) session's ``messages.jsonl`` as one record.

A line is ``{"id", "timestamp", "payload": {"type", ...}}``. Every record takes ``id`` from the
line, ``time`` from ``timestamp`` (when it is RFC 3339) and ``run`` from the payload's
``executionId`` (the execution a turn's records share). By ``payload.type``:

* ``user``: ``from: external``, ``trigger: external``, flag ``external_input``; ``content`` a string → text, or a list
  of ``{type: text}`` / ``{type: image, data, mimeType}`` blocks → text / media; ``images[]`` →
  media; ``documents[]`` → one data part each; any other block → unknown;
* ``assistant``: ``from: agent``; ``operationType`` ``Say``/``Print``/``Summary`` → text;
  ``Reasoning`` → reasoning, where the body ``"..."`` beside a ``reasoningSignature`` means
  the text was not kept (state ``unavailable``) and the signature is a ``dropped`` entry;
  ``model`` = ``reasoningModelId`` when present; another operationType → unknown;
* ``tool_call``: ``from: agent``; call (``toolCallId``, ``toolName``, ``args``);
* ``tool_result``: ``from: external``; result (``of`` = ``toolCallId``; a string ``content``
  → ``text``, anything else → ``data``; ``failed`` = not ``success`` when ``success`` is a
  boolean);
* ``session_start``: ``from: runtime``, flags ``injected`` and ``system_prompt`` (in the real
  1.0.411 capture its ``content`` is the system prompt, which the runtime puts into the model's
  context), the payload as a data part;
* ``sub_agent_start``: ``from: runtime``, ``child`` = ``subSessionId``, the payload as data;
* turn markers, context usage, usage summaries, approvals and pauses (``turn_start``,
  ``turn_end``, ``session_metadata``, ``usage_summary``, ``pending_interaction``,
  ``interaction_resolved``, ``session_event``): ``from: runtime``, the payload as a data part;
* a compaction tombstone (``tombstone``, where the messages compacted away were): the same, flag
  ``context_reset``;
* anything else: the line in an unknown part.

``run`` is ``executionId`` except where it equals the line's ``toolCallId``: the 1.0.411
capture's approval of a command names the command's tool call there (``run_command_…``), while
the turn's other lines, that command's own call and result among them, name the turn's
execution; read as an execution it made a loop (and a talk) of its own out of one click.

``call`` (the IDE writes no id of a model call) is derived from the lines before (see
:mod:`~asz_adapters.kiro.carried`): the model's lines (``assistant``, ``tool_call``) in one
execution with no input to the model between them are one call, named by the ``id`` of its
first line. What ends a call is what the model reads next or a turn's edge: a ``tool_result``,
a ``user`` line, ``turn_start``/``turn_end``, any other line that is not the runtime's note of
context usage or an approval (``session_metadata``, ``pending_interaction``,
``interaction_resolved``), and a line this dialect cannot read or describe. A response cannot
have seen a result that came after it, so no call spans one; a response whose tools Kiro ran
one after another (a result written between two of its tool calls) is counted as two calls,
which the log cannot tell apart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from asz_adapters.kiro.carried import Carried, file_lines, no_lines
from asz_adapters.kiro.ids import is_ide_session_id
from asz_adapters.kiro.parts import (
    TRIGGER_EXTERNAL,
    base64_media_part,
    call_part,
    rfc3339_time,
    signature_dropped,
    string_or_none,
    unknown_at,
    unknown_line,
)
from asz_core.collect import SourceLine
from asz_core.sessiondata import (
    FROM_AGENT,
    FROM_EXTERNAL,
    FROM_RUNTIME,
    data_part,
    reasoning_part,
    record,
    result_part,
    text_part,
)
from asz_core.sessiondata.fields import DroppedFields, PartFields, RecordFields

__all__ = ["IdeMessageDialect"]

_DATA_TYPES = frozenset({"turn_start", "turn_end", "session_metadata", "usage_summary",
                         "pending_interaction", "interaction_resolved", "session_event",
                         "tombstone"})
#: the data types that mark a reset of the model's context
_RESETS = frozenset({"tombstone"})
_TEXT_OPERATIONS = frozenset({"Say", "Print", "Summary"})
#: What Kiro IDE 1.0 writes in place of a thought it keeps only encrypted.
_REASONING_PLACEHOLDER = "..."
#: the model's own lines: what a call is made of
_MODEL_LINES = frozenset({"assistant", "tool_call"})
#: the runtime's notes written while a response is acted on, which end no call
_BESIDE_A_CALL = frozenset({"session_metadata", "pending_interaction", "interaction_resolved"})

#: the model call in effect: its id and the execution it is in
_Call = tuple[str | None, str | None]


def call_after(call: _Call, value: Any) -> _Call:
    """The model call in effect after a line, from the one before it (the module's rules)."""
    payload = value.get("payload") if isinstance(value, dict) else None
    kind = payload.get("type") if isinstance(payload, dict) else None
    if not isinstance(payload, dict) or not isinstance(kind, str):
        return None, None
    if kind in _BESIDE_A_CALL:
        return call
    if kind not in _MODEL_LINES:
        return None, None
    execution = string_or_none(payload.get("executionId"))
    if call[0] is not None and call[1] == execution:
        return call
    return string_or_none(value.get("id")), execution


class IdeMessageDialect:
    """Converts one Kiro IDE message line (see the module's docstring for the rules);
    ``source`` is the log, read again only where a pass starts in the middle of a call."""

    name = "kiro-ide/1"
    reads_non_json = False  #: a line that is not JSON lands as an unknown part

    def __init__(self, source: Path | None = None) -> None:
        self._calls: Carried[_Call] = Carried((None, None), call_after,
                                              file_lines(source) if source else no_lines)

    def convert(self, line: SourceLine) -> RecordFields:
        _, (call, _) = self._calls.around(line)
        value = line.value
        payload = value.get("payload") if isinstance(value, dict) else None
        kind = payload.get("type") if isinstance(payload, dict) else None
        if not isinstance(payload, dict) or not isinstance(kind, str):
            return unknown_line(line, "not a Kiro IDE message with a payload type")
        execution = string_or_none(payload.get("executionId"))
        run = execution if execution != payload.get("toolCallId") else None
        head = _Head(string_or_none(value.get("id")), call, run, rfc3339_time(value.get("timestamp")))
        handler = _HANDLERS.get(kind)
        if handler is not None:
            return handler(line, payload, head)
        if kind in _DATA_TYPES:
            return record(id=head.id, run=head.run, from_=FROM_RUNTIME, time=head.time,
                          flags=["context_reset"] if kind in _RESETS else None,
                          parts=[data_part(line.data_at("payload"))])
        return unknown_line(line, f"payload type {kind!r} is not one this dialect describes")


class _Head(NamedTuple):
    """What a message's record carries whatever its payload: its ``id``, the ``call`` it falls in
    (an agent's record only), its ``run``, its ``time``."""

    id: str | None
    call: str | None
    run: str | None
    time: str | None


def _user(line: SourceLine, payload: dict[str, Any], head: _Head) -> RecordFields:
    parts: list[PartFields] = []
    content = payload.get("content")
    if isinstance(content, str):
        parts.append(text_part(content))
    elif isinstance(content, list):
        for i, block in enumerate(content):
            parts.append(_block(line, block, ("payload", "content", i)))
    elif "content" in payload:
        parts.append(unknown_at(line, "user content that is neither text nor a list", "payload", "content"))
    for i, image in enumerate(_list(payload, "images")):
        parts.append(_block(line, image, ("payload", "images", i), image=True))
    for i, _ in enumerate(_list(payload, "documents")):
        parts.append(data_part(line.data_at("payload", "documents", i)))
    return record(id=head.id, run=head.run, from_=FROM_EXTERNAL, time=head.time, trigger=TRIGGER_EXTERNAL,
                  flags=["external_input"], parts=parts)


def _block(line: SourceLine, block: object, path: tuple[str | int, ...], image: bool = False) -> PartFields:
    """A content block in the Agent Client Protocol's form, which the IDE's user lines use."""
    kind = block.get("type") if isinstance(block, dict) else None
    if isinstance(block, dict) and kind == "text" and not image and isinstance(block.get("text"), str):
        return text_part(block["text"])
    if (isinstance(block, dict) and kind == "image" and isinstance(block.get("data"), str)
            and isinstance(block.get("mimeType"), str)):
        return base64_media_part(block["mimeType"], block["data"])
    what = "an image" if image else "a content block"
    return unknown_at(line, f"{what} in a form this dialect does not describe", *path)


def _assistant(line: SourceLine, payload: dict[str, Any], head: _Head) -> RecordFields:
    parts: list[PartFields] = []
    dropped: list[DroppedFields] = []
    operation, content = payload.get("operationType"), payload.get("content")
    if not isinstance(content, str) or not isinstance(operation, str):
        parts.append(unknown_at(line, "an assistant message without text content or an operationType", "payload"))
    elif operation in _TEXT_OPERATIONS:
        parts.append(text_part(content))
    elif operation == "Reasoning":
        signature = payload.get("reasoningSignature")
        if content == _REASONING_PLACEHOLDER and isinstance(signature, str) and signature:
            parts.append(reasoning_part(None, "unavailable"))
        else:
            parts.append(reasoning_part(content))
        dropped.extend(signature_dropped(signature))
    else:
        parts.append(unknown_at(line, f"operationType {operation!r} is not one this dialect describes", "payload"))
    return record(id=head.id, call=head.call, run=head.run, from_=FROM_AGENT, time=head.time,
                  model=string_or_none(payload.get("reasoningModelId")), parts=parts, dropped=dropped)


def _tool_call(line: SourceLine, payload: dict[str, Any], head: _Head) -> RecordFields:
    args = line.data_at("payload", "args") if "args" in payload else None
    return record(id=head.id, call=head.call, run=head.run, from_=FROM_AGENT, time=head.time,
                  parts=[call_part(payload.get("toolCallId"), payload.get("toolName"), args)])


def _tool_result(line: SourceLine, payload: dict[str, Any], head: _Head) -> RecordFields:
    content = payload.get("content")
    text = content if isinstance(content, str) else None
    data = line.data_at("payload", "content") if text is None and "content" in payload else None
    success = payload.get("success")
    failed = (not success) if isinstance(success, bool) else None
    part = result_part(string_or_none(payload.get("toolCallId")), text, data, failed)
    return record(id=head.id, run=head.run, from_=FROM_EXTERNAL, time=head.time, parts=[part])


def _session_start(line: SourceLine, payload: dict[str, Any], head: _Head) -> RecordFields:
    return record(id=head.id, run=head.run, from_=FROM_RUNTIME, time=head.time, flags=["injected", "system_prompt"],
                  parts=[data_part(line.data_at("payload"))])


def _sub_agent_start(line: SourceLine, payload: dict[str, Any], head: _Head) -> RecordFields:
    child = payload.get("subSessionId")
    return record(id=head.id, run=head.run, child=child if is_ide_session_id(child) else None, from_=FROM_RUNTIME,
                  time=head.time, parts=[data_part(line.data_at("payload"))])


def _list(payload: dict[str, Any], key: str) -> list[Any]:
    value = payload.get(key)
    return value if isinstance(value, list) else []


_HANDLERS = {
    "user": _user,
    "assistant": _assistant,
    "tool_call": _tool_call,
    "tool_result": _tool_result,
    "session_start": _session_start,
    "sub_agent_start": _sub_agent_start,
}
