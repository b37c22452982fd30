"""The ``claude-code/1`` dialect: one Claude Code transcript line → one Session Data record.

Every line becomes one record, in order; the collector lands a line that is not JSON as one
unknown part with its bytes. A JSON line that is not an object has no fields to read: it is one
unknown part too, and carries no flag.

Record fields, read from the line and never inferred to fill one it does not carry:

* ``id`` = ``uuid``, ``parent`` = ``parentUuid``, ``run`` = ``promptId``, ``time`` = ``timestamp``;
* from the ``message``: ``call`` = ``message.id``, ``model`` = ``message.model``, ``usage`` =
  ``message.usage`` (``input_tokens`` → ``in``, ``output_tokens`` → ``out``,
  ``cache_read_input_tokens`` → ``cache_read``, ``cache_creation_input_tokens`` →
  ``cache_write``);
* ``from``: ``assistant`` → ``agent``; ``user`` → ``external`` (so tool results and ``isMeta``
  lines too: the parts say which is which); every other line → ``runtime``, which wrote it;
* ``continues`` = ``logicalParentUuid`` of a ``system`` ``compact_boundary`` line, the record
  the compacted context resumes from;
* ``label`` = the title a metadata line carries (``aiTitle``, ``customTitle``, ``agentName``);
* ``child`` = ``toolUseResult.agentId`` (the agent a tool result started or returned), or
  ``data.agentId`` of an ``agent_progress`` line;
* ``tool`` = ``toolUseResult.toolUseId``, else ``sourceToolUseID``, else a progress line's
  ``parentToolUseID``, else the one ``<tool-use-id>`` of a ``<task-notification>`` whose line
  says ``origin.kind`` is ``task-notification`` (the call the notification completes);
* ``trigger`` = ``origin.kind`` of the line, else of its attachment.

Flags, each by a rule over fields:

* ``finished``: the line's ``message.stop_reason`` is present and not null.
* ``child_result``: a tool result whose ``toolUseResult`` is an object with ``status``
  ``"completed"`` and an ``agentId``: a child's synchronous return, the parent's copy of it.
* ``system_prompt``: an ``attachment`` of type ``mcp_instructions_delta``. Its ``addedBlocks``
  are the MCP servers' instructions, which Claude Code writes into the system prompt's "MCP
  Server Instructions" section and, from 2.1.9x on, sends as these deltas instead.
* ``tool_schemas``: an ``attachment`` of type ``deferred_tools_delta`` (the names and lines of
  the tools moved out of the request's tool list), ``agent_listing_delta`` (the agent types the
  Agent tool's description lists) or ``skill_listing`` (the skills the Skill tool's description
  lists): each is the part of the tool definitions the runtime now sends as an attachment.

  No other attachment type carries either. ``plan_mode`` and ``auto_mode`` name which reminder
  was sent (``reminderType``) without its text; ``hook_success`` holds a hook's output, which the
  person configured; the rest describe files, tasks, diagnostics or the date. A line whose
  fields cannot be read is not flagged: it is an unknown part, kept whole, and a reader that
  withholds flagged records sees only that the dialect could not describe it.

Parts, iterating the whole ``message.content`` array:

* ``text`` → text; ``thinking`` → reasoning (``unavailable`` when its text is empty; the
  ``signature`` is listed in ``dropped``); ``redacted_thinking`` → reasoning ``redacted`` (its
  encrypted ``data`` listed in ``dropped``);
* ``tool_use`` and ``server_tool_use`` → call, the ``input`` in ``data`` (MCP names split by
  :func:`~asz_core.sessiondata.split_mcp_name`);
* ``tool_result`` → result: ``of`` = ``tool_use_id``; ``failed`` only when ``is_error`` is a
  boolean; ``text`` from a string or the text blocks joined with newlines; ``data`` = the raw
  content when it holds anything but text (or no text at all), else the line's
  ``toolUseResult`` beside the text. When the raw content takes ``data``, the ``toolUseResult``
  follows the content as one more data part, so neither is lost; likewise when a line holds
  several results and one ``toolUseResult``;
* ``image`` with a base64 source → media; any other block (or a block that is not an object)
  → unknown, ``block type "x" is not one this dialect describes``;
* a string ``content`` → one text part.

An ``attachment`` line → a text part when the attachment has a string ``text`` or ``content``,
else one data part holding the attachment. A line with no message content (system lines,
progress, snapshots, titles, modes, queue operations, types not seen yet) → one data part
holding the whole line. Source JSON goes into ``data`` byte for byte (compacted), through
:meth:`~asz_core.collect.SourceLine.data_at`.

A dialect instance serves one source: it keeps the ``message.id`` and ``requestId`` of each
assistant line it converts, by line number, for the session's derived index.
"""

from __future__ import annotations

import re
from typing import Any, Final

from asz_adapters.claude_code_local.about import DIALECT
from asz_core.collect import SourceLine
from asz_core.sessiondata import FROM_AGENT, FROM_EXTERNAL, FROM_RUNTIME, Dropped, Part, RawJSON, Record, Usage

__all__ = ["DIALECT", "NOT_AN_OBJECT", "SYSTEM_PROMPT_ATTACHMENTS", "TOOL_SCHEMA_ATTACHMENTS",
           "TranscriptDialect", "convert_usage"]

NOT_AN_OBJECT: Final = "the record is JSON but not an object, so it has no fields to read"

SYSTEM_PROMPT_ATTACHMENTS: Final = frozenset({"mcp_instructions_delta"})
TOOL_SCHEMA_ATTACHMENTS: Final = frozenset({"deferred_tools_delta", "agent_listing_delta", "skill_listing"})

_SIGNATURE_WHY: Final = "a provider verifies it; a reader cannot read it"
_LABELS: Final = {"ai-title": "aiTitle", "custom-title": "customTitle", "agent-name": "agentName"}
_TOOL_USE_ID: Final = re.compile(r"<tool-use-id>([A-Za-z0-9_-]{1,200})</tool-use-id>")
_FROM: Final = {"assistant": FROM_AGENT, "user": FROM_EXTERNAL}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def convert_usage(usage: Any) -> Usage | None:
    """``message.usage`` in Session Data's names; ``None`` when it holds none of them."""
    if not isinstance(usage, dict):
        return None
    out = Usage(_int(usage.get("input_tokens")), _int(usage.get("output_tokens")),
                _int(usage.get("cache_read_input_tokens")), _int(usage.get("cache_creation_input_tokens")))
    if out.in_ is None and out.out is None and out.cache_read is None and out.cache_write is None:
        return None
    return out


class TranscriptDialect:
    """``claude-code/1`` for a transcript (main or child): one line → one record."""

    name = DIALECT
    reads_non_json = False  #: a line that is not JSON lands as an unknown part

    def __init__(self) -> None:
        #: ``(line number, message.id)`` of each assistant line converted
        self.calls: list[tuple[int, str]] = []
        #: ``(line number, requestId)`` of each assistant line that carries one
        self.requests: list[tuple[int, str]] = []

    def convert(self, line: SourceLine) -> Record:
        value = line.value
        if not isinstance(value, dict):
            return Record(parts=[Part.unknown(line.raw, NOT_AN_OBJECT)])
        kind = value.get("type")
        record = Record(id=_str(value.get("uuid")), parent=_str(value.get("parentUuid")),
                        run=_str(value.get("promptId")), time=_str(value.get("timestamp")),
                        from_=_FROM.get(kind, FROM_RUNTIME) if isinstance(kind, str) else FROM_RUNTIME)
        origin = value.get("origin")
        if isinstance(origin, dict):
            record.trigger = _str(origin.get("kind"))
        message = value.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if kind == "attachment" and isinstance(value.get("attachment"), dict):
            self._attachment(line, value["attachment"], record)
        elif isinstance(message, dict) and isinstance(content, (str, list)):
            self._message(line, value, message, content, record)
        else:
            record.parts.append(Part.data_part(line.data_at()))
            self._envelope(value, kind, record)
        return record

    # ---- lines with a message ------------------------------------------------------------

    def _message(self, line: SourceLine, value: dict[str, Any], message: dict[str, Any],
                 content: str | list[Any], record: Record) -> None:
        call = _str(message.get("id"))
        record.call = call
        record.model = _str(message.get("model"))
        record.usage = convert_usage(message.get("usage"))
        if message.get("stop_reason") is not None:
            record.flags.append("finished")
        if value.get("type") == "assistant" and call is not None:
            self.calls.append((line.ord, call))
            request = _str(value.get("requestId"))
            if request is not None:
                self.requests.append((line.ord, request))
        results: list[Part] = []
        if isinstance(content, str):
            record.parts.append(Part.text_part(content))
        else:
            results = self._blocks(line, content, record)
        if value.get("toolUseResult") is not None:
            structured = line.data_at("toolUseResult")
            if len(results) == 1 and results[0].data is None:
                results[0].data = structured
                results[0].bytes += len(structured)
            else:
                record.parts.append(Part.data_part(structured))
            _tool_use_result(value["toolUseResult"], record)
        if record.tool is None:
            record.tool = _str(value.get("sourceToolUseID"))
        if record.tool is None and record.trigger == "task-notification" and isinstance(content, str):
            found = _TOOL_USE_ID.findall(content)
            if len(found) == 1:
                record.tool = found[0]

    @staticmethod
    def _blocks(line: SourceLine, content: list[Any], record: Record) -> list[Part]:
        """A part for each block, in order; returns the result parts."""
        parts = record.parts
        results: list[Part] = []
        for index, block in enumerate(content):
            btype = block.get("type") if isinstance(block, dict) else None
            if btype == "text" and isinstance(block.get("text"), str):
                parts.append(Part.text_part(block["text"]))
            elif btype == "tool_use" or btype == "server_tool_use":
                data = line.data_at("message", "content", index, "input") if "input" in block else None
                parts.append(Part.call(_str(block.get("id")), _str(block.get("name")), data))
            elif btype == "tool_result":
                part = _result(line, block, index)
                parts.append(part)
                results.append(part)
            elif btype == "thinking":
                _thinking(block, record)
            elif btype == "redacted_thinking":
                _redacted(block, record)
            elif btype == "image" and _base64_source(block) is not None:
                source = block["source"]
                parts.append(Part.media_part(_str(source.get("media_type")), source["data"]))
            else:
                raw = line.data_at("message", "content", index)
                parts.append(Part.unknown(bytes(raw), _unknown_block_reason(block, btype)))
        return results

    # ---- attachments and lines without a message -----------------------------------------

    @staticmethod
    def _attachment(line: SourceLine, attachment: dict[str, Any], record: Record) -> None:
        text = attachment.get("text")
        if not isinstance(text, str):
            text = attachment.get("content")
        if isinstance(text, str):
            record.parts.append(Part.text_part(text))
        else:
            record.parts.append(Part.data_part(line.data_at("attachment")))
        kind = attachment.get("type")
        if kind in SYSTEM_PROMPT_ATTACHMENTS:
            record.flags.append("system_prompt")
        elif kind in TOOL_SCHEMA_ATTACHMENTS:
            record.flags.append("tool_schemas")
        if record.trigger is None:
            origin = attachment.get("origin")
            if isinstance(origin, dict):
                record.trigger = _str(origin.get("kind"))

    @staticmethod
    def _envelope(value: dict[str, Any], kind: Any, record: Record) -> None:
        """Fields of a line that lands whole: its label, boundary, progress links."""
        if kind == "system":
            if value.get("subtype") == "compact_boundary":
                record.continues = _str(value.get("logicalParentUuid"))
        elif kind == "progress":
            record.tool = _str(value.get("parentToolUseID"))
            data = value.get("data")
            if isinstance(data, dict) and data.get("type") == "agent_progress":
                record.child = _str(data.get("agentId"))
        elif isinstance(kind, str) and kind in _LABELS:
            record.label = _str(value.get(_LABELS[kind]))


def _tool_use_result(result: Any, record: Record) -> None:
    """The fields a ``toolUseResult`` object names: the child it started or returned."""
    if not isinstance(result, dict):
        return
    agent = _str(result.get("agentId"))
    record.child = agent
    if agent is not None and result.get("status") == "completed":
        record.flags.append("child_result")
    record.tool = _str(result.get("toolUseId"))


def _result(line: SourceLine, block: dict[str, Any], index: int) -> Part:
    content = block.get("content")
    text: str | None = None
    only_text = True
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        texts = []
        for item in content:
            if isinstance(item, dict) and item.get("type") == "text" and isinstance(item.get("text"), str):
                texts.append(item["text"])
            else:
                only_text = False
        text = "\n".join(texts) if texts else None
    elif content is not None:
        only_text = False
    data: RawJSON | None = None
    if "content" in block and (not only_text or text is None):
        data = line.data_at("message", "content", index, "content")
    failed = block.get("is_error")
    return Part.result(_str(block.get("tool_use_id")), text=text, data=data,
                       failed=failed if isinstance(failed, bool) else None)


def _thinking(block: dict[str, Any], record: Record) -> None:
    text = block.get("thinking")
    if isinstance(text, str) and text:
        record.parts.append(Part.reasoning(text))
    else:
        record.parts.append(Part.reasoning(None, state="unavailable"))
    signature = block.get("signature")
    if isinstance(signature, str) and signature:
        record.dropped.append(Dropped("reasoning signature", len(signature.encode("utf-8")), _SIGNATURE_WHY))


def _redacted(block: dict[str, Any], record: Record) -> None:
    data = block.get("data")
    size = len(data.encode("utf-8")) if isinstance(data, str) else 0
    record.parts.append(Part.reasoning(None, state="redacted", bytes=size))
    if size:
        record.dropped.append(Dropped("redacted reasoning", size, _SIGNATURE_WHY))


def _base64_source(block: dict[str, Any]) -> dict[str, Any] | None:
    source = block.get("source")
    if isinstance(source, dict) and source.get("type") == "base64" and isinstance(source.get("data"), str):
        return source
    return None


def _unknown_block_reason(block: Any, btype: Any) -> str:
    if not isinstance(block, dict):
        return "a content block that is not an object is not one this dialect describes"
    if btype == "image":
        return "an image block without a base64 source is not one this dialect describes"
    if not isinstance(btype, str):
        return "a content block without a string type is not one this dialect describes"
    if btype == "text":
        return 'a text block whose "text" is not a string is not one this dialect describes'
    return f'block type "{btype}" is not one this dialect describes'
