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
from asz_core.sessiondata import FROM_AGENT, FROM_EXTERNAL, FROM_RUNTIME, Part, Record

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

    def convert(self, line: SourceLine) -> Record:
        record = self._record(line)
        _, run = self._runs.around(line)
        record.run = run
        return record

    def _record(self, line: SourceLine) -> Record:
        value = line.value
        if not isinstance(value, dict) or value.get("version") != "v1":
            return unknown_line(line, "not a version v1 Kiro CLI event")
        kind, data = value.get("kind"), value.get("data")
        if not isinstance(kind, str) or not isinstance(data, dict):
            return unknown_line(line, "a Kiro CLI event without a kind and a data object")
        if kind == "Prompt":
            return _prompt(line, data)
        if kind == "AssistantMessage":
            return _assistant(line, data)
        if kind == "ToolResults":
            return _tool_results(line, data)
        if kind in _RESETS:
            return Record(from_=FROM_RUNTIME, flags=list(_RESETS[kind]), parts=[Part.data_part(line.data_at())])
        return unknown_line(line, f"event kind {kind!r} is not one this dialect describes")


def _items(data: dict[str, Any]) -> list[tuple[int, Any]]:
    content = data.get("content")
    return list(enumerate(content)) if isinstance(content, list) else []


def _prompt(line: SourceLine, data: dict[str, Any]) -> Record:
    record = Record(id=string_or_none(data.get("message_id")), from_=FROM_EXTERNAL, trigger=TRIGGER_EXTERNAL,
                    flags=["external_input"])
    meta = data.get("meta")
    if isinstance(meta, dict) and type(meta.get("timestamp")) in (int, float):
        record.time = epoch_seconds_time(line.data_at("data", "meta", "timestamp"))
    for i, item in _items(data):
        path = ("data", "content", i)
        kind = item.get("kind") if isinstance(item, dict) else None
        if kind == "text" and isinstance(item.get("data"), str):
            record.parts.append(Part.text_part(item["data"]))
        elif kind == "image" and "data" in item:
            record.parts.append(image_block_part(line, *path, "data"))
        else:
            record.parts.append(unknown_at(line, _item_reason(kind), *path))
    return record


def _assistant(line: SourceLine, data: dict[str, Any]) -> Record:
    message = string_or_none(data.get("message_id"))
    record = Record(id=message, call=message, from_=FROM_AGENT, model=string_or_none(data.get("modelId")))
    for i, item in _items(data):
        path = ("data", "content", i)
        kind = item.get("kind") if isinstance(item, dict) else None
        body = item.get("data") if isinstance(item, dict) else None
        if kind == "text" and isinstance(body, str):
            record.parts.append(Part.text_part(body))
        elif kind == "thinking" and isinstance(body, dict) and isinstance(body.get("text"), str):
            text = body["text"]
            record.parts.append(Part.reasoning(text) if text else Part.reasoning(None, "unavailable"))
            record.dropped.extend(signature_dropped(body.get("signature")))
        elif kind == "toolUse" and isinstance(body, dict):
            args = line.data_at(*path, "data", "input") if "input" in body else None
            record.parts.append(call_part(body.get("toolUseId"), body.get("name"), args))
        else:
            record.parts.append(unknown_at(line, _item_reason(kind), *path))
    return record


def _tool_results(line: SourceLine, data: dict[str, Any]) -> Record:
    record = Record(id=string_or_none(data.get("message_id")), from_=FROM_EXTERNAL)
    for i, item in _items(data):
        path = ("data", "content", i)
        kind = item.get("kind") if isinstance(item, dict) else None
        body = item.get("data") if isinstance(item, dict) else None
        if kind == "toolResult" and isinstance(body, dict):
            record.parts.append(_result(line, body, (*path, "data")))
        else:
            record.parts.append(unknown_at(line, _item_reason(kind), *path))
    return record


def _result(line: SourceLine, body: dict[str, Any], path: tuple[str | int, ...]) -> Part:
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
    return Part.result(string_or_none(body.get("toolUseId")), text=text, data=data, failed=failed)


def _item_reason(kind: object) -> str:
    if isinstance(kind, str):
        return f"content item kind {kind!r} is not one this dialect describes here"
    return "a content item without a kind"
