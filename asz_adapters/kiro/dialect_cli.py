"""``kiro-cli/1``: one line of a Kiro CLI session's ``<uuid>.jsonl`` event log as one record.

A line is ``{"version": "v1", "kind": K, "data": {...}}``. By kind:

* ``Prompt`` (a person's input): ``from: external``, ``trigger: external``, flag
  ``external_input``, ``id`` = ``message_id``, ``time`` from ``meta.timestamp`` (epoch
  seconds); each ``content`` item a part: ``text`` → text, ``image`` → media (kiro-cli's
  ``ImageBlock`` form) or unknown;
* ``AssistantMessage``: ``from: agent``, ``id`` = ``message_id``, ``model`` = ``modelId`` when
  present, no time (the line has none); ``text`` → text, ``thinking`` → reasoning (its signature
  a ``dropped`` entry), ``toolUse`` → call (``toolUseId``, ``name``, ``input``);
* ``ToolResults``: ``from: external``; each ``toolResult`` → result (``of`` = ``toolUseId``;
  one text item → ``text``, one json item → ``data``, anything else → the content list as
  ``data``; ``failed`` from ``status`` ``error``/``success``, absent otherwise);
* ``Clear`` (the context emptied): ``from: runtime``, flag ``context_reset``, the line as one
  data part; ``Compaction`` (the context replaced by a summary of it): the same, flags
  ``context_reset`` and ``reset_summary``;
* any other kind or version, and any content item of another kind: an unknown part.

The ids assembly builds calls and talks from:

* ``call`` on an ``AssistantMessage`` = its ``message_id``: kiro-cli writes one
  ``AssistantMessage`` per model response, so its id names that one provider call;
* ``run`` (the agent loop, one per person's prompt; kiro-cli writes no id of it), derived from
  the lines before (see :mod:`~asz_adapters.kiro.carried`) = the ``message_id`` of the ``Prompt``
  that started it: a ``Prompt`` carries its own id, and each ``AssistantMessage``, ``ToolResults`` and
  ``Compaction`` after it carries the same, until a line that ends the loop in effect: the next
  ``Prompt``, a ``Clear``, or a line this dialect cannot read or describe (it may have been a
  ``Prompt``, so what follows it is left with no run rather than given a wrong one).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from asz_adapters.kiro.carried import Carried, file_lines, no_lines
from asz_adapters.kiro.parts import (
    TRIGGER_EXTERNAL,
    call_part,
    epoch_seconds_time,
    image_block_part,
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

__all__ = ["CliEventDialect"]

#: the runtime's events that reset the model's context, and the flags each carries
_RESETS = {"Clear": ["context_reset"], "Compaction": ["context_reset", "reset_summary"]}
#: the kinds that go on in the loop in effect (a ``Prompt`` starts one; anything else ends it)
_IN_LOOP = frozenset({"AssistantMessage", "ToolResults", "Compaction"})


def run_after(run: str | None, value: Any) -> str | None:
    """The loop in effect after a line, from the one in effect before it (the module's rules)."""
    if not isinstance(value, dict) or value.get("version") != "v1":
        return None
    kind, data = value.get("kind"), value.get("data")
    if not isinstance(kind, str) or not isinstance(data, dict):
        return None
    if kind == "Prompt":
        return string_or_none(data.get("message_id"))
    return run if kind in _IN_LOOP else None


class CliEventDialect:
    """Converts one Kiro CLI event line (see the module's docstring for the rules); ``source``
    is the log, read again only where a pass starts in the middle of a loop."""

    name = "kiro-cli/1"
    reads_non_json = False  #: a line that is not JSON lands as an unknown part

    def __init__(self, source: Path | None = None) -> None:
        self._runs: Carried[str | None] = Carried(None, run_after, file_lines(source) if source else no_lines)

    def convert(self, line: SourceLine) -> RecordFields:
        _, run = self._runs.around(line)
        value = line.value
        if not isinstance(value, dict) or value.get("version") != "v1":
            return unknown_line(line, "not a version v1 Kiro CLI event", run)
        kind, data = value.get("kind"), value.get("data")
        if not isinstance(kind, str) or not isinstance(data, dict):
            return unknown_line(line, "a Kiro CLI event without a kind and a data object", run)
        if kind == "Prompt":
            return _prompt(line, data, run)
        if kind == "AssistantMessage":
            return _assistant(line, data, run)
        if kind == "ToolResults":
            return _tool_results(line, data, run)
        if kind in _RESETS:
            return record(run=run, from_=FROM_RUNTIME, flags=list(_RESETS[kind]), parts=[data_part(line.data_at())])
        return unknown_line(line, f"event kind {kind!r} is not one this dialect describes", run)


def _items(data: dict[str, Any]) -> list[tuple[int, Any]]:
    content = data.get("content")
    return list(enumerate(content)) if isinstance(content, list) else []


def _prompt(line: SourceLine, data: dict[str, Any], run: str | None) -> RecordFields:
    time = None
    meta = data.get("meta")
    if isinstance(meta, dict) and type(meta.get("timestamp")) in (int, float):
        time = epoch_seconds_time(line.data_at("data", "meta", "timestamp"))
    parts: list[PartFields] = []
    for i, item in _items(data):
        path = ("data", "content", i)
        kind = item.get("kind") if isinstance(item, dict) else None
        if kind == "text" and isinstance(item.get("data"), str):
            parts.append(text_part(item["data"]))
        elif kind == "image" and "data" in item:
            parts.append(image_block_part(line, *path, "data"))
        else:
            parts.append(unknown_at(line, _item_reason(kind), *path))
    return record(id=string_or_none(data.get("message_id")), run=run, from_=FROM_EXTERNAL, time=time,
                  trigger=TRIGGER_EXTERNAL, flags=["external_input"], parts=parts)


def _assistant(line: SourceLine, data: dict[str, Any], run: str | None) -> RecordFields:
    message = string_or_none(data.get("message_id"))
    parts: list[PartFields] = []
    dropped: list[DroppedFields] = []
    for i, item in _items(data):
        path = ("data", "content", i)
        kind = item.get("kind") if isinstance(item, dict) else None
        body = item.get("data") if isinstance(item, dict) else None
        if kind == "text" and isinstance(body, str):
            parts.append(text_part(body))
        elif kind == "thinking" and isinstance(body, dict) and isinstance(body.get("text"), str):
            text = body["text"]
            parts.append(reasoning_part(text) if text else reasoning_part(None, "unavailable"))
            dropped.extend(signature_dropped(body.get("signature")))
        elif kind == "toolUse" and isinstance(body, dict):
            args = line.data_at(*path, "data", "input") if "input" in body else None
            parts.append(call_part(body.get("toolUseId"), body.get("name"), args))
        else:
            parts.append(unknown_at(line, _item_reason(kind), *path))
    return record(id=message, call=message, run=run, from_=FROM_AGENT, model=string_or_none(data.get("modelId")),
                  parts=parts, dropped=dropped)


def _tool_results(line: SourceLine, data: dict[str, Any], run: str | None) -> RecordFields:
    parts: list[PartFields] = []
    for i, item in _items(data):
        path = ("data", "content", i)
        kind = item.get("kind") if isinstance(item, dict) else None
        body = item.get("data") if isinstance(item, dict) else None
        if kind == "toolResult" and isinstance(body, dict):
            parts.append(_result(line, body, (*path, "data")))
        else:
            parts.append(unknown_at(line, _item_reason(kind), *path))
    return record(id=string_or_none(data.get("message_id")), run=run, from_=FROM_EXTERNAL, parts=parts)


def _result(line: SourceLine, body: dict[str, Any], path: tuple[str | int, ...]) -> PartFields:
    status = body.get("status")
    failed = {"error": True, "success": False}.get(status.lower()) if isinstance(status, str) else None
    content = body.get("content")
    text, data = None, None
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict):
        only = content[0]
        if only.get("kind") == "text" and isinstance(only.get("data"), str):
            text = only["data"]
        elif only.get("kind") == "json" and "data" in only:
            data = line.data_at(*path, "content", 0, "data")
    if text is None and data is None and "content" in body:
        data = line.data_at(*path, "content")
    return result_part(string_or_none(body.get("toolUseId")), text, data, failed)


def _item_reason(kind: object) -> str:
    if isinstance(kind, str):
        return f"content item kind {kind!r} is not one this dialect describes here"
    return "a content item without a kind"
