"""The parts and ``dropped`` entries of a ``claude-code/1`` record: which content is read, and how.

1. An ``attachment`` line → exactly one part from its ``attachment`` (its message is not read):
   a non-empty string ``text`` → text; else a non-empty string ``content`` → text; else one data
   part holding the attachment (``null`` included; no ``attachment`` key: a data part with
   nothing in it).
2. Otherwise ``message.content``: absent → no part; a string → one text part (an empty one
   too); a list → one part per block, in order (an empty list, or ``null``, gives none); any
   other value → one unknown part over it, ``the content is neither text nor a list of blocks``.
3. One block → one part (the block read as :data:`~.shape.BLOCK`):

   * a block that does not read (not an object, or a field of another type) → unknown, ``the
     block is not an object``, its bytes kept;
   * ``text`` → text; ``thinking`` → reasoning (``unavailable`` when its text is empty);
     ``redacted_thinking`` → reasoning ``redacted`` (its ``thinking`` when it has one); either
     one's non-empty ``signature`` → a ``dropped`` entry of its size;
   * ``tool_use`` → call (``id``, ``name``, ``input`` as data; an MCP name split into
     ``server``/``server_tool`` only when it splits exactly); ``server_tool_use`` → call, never
     split;
   * ``tool_result`` → result, ``of`` = ``tool_use_id``, ``failed`` = ``is_error`` when given
     (``false`` too). Its text: a string content, or the non-empty ``text`` of the content's
     blocks joined by newlines; ``bytes`` = that text's size. With no text, the content itself
     is the data and ``bytes`` its size. When the line's ``toolUseResult`` read whole, it
     replaces the data, and ``bytes`` stays;
   * ``image`` → media, ``media`` = ``source.media_type``, data = ``source.data`` as one JSON
     string, ``bytes`` = its size, whatever the source's kind;
   * any other type (or none) → unknown, ``block type "<type>" is not one this dialect
     describes``, its bytes kept.

Every part is ``available`` unless said otherwise. A part's data taken from the source is the
source's own JSON (compacted) through :meth:`~asz_core.collect.SourceLine.data_at`.
"""

from __future__ import annotations

from typing import Any, Final

from asz_adapters.claude_code_local.shape import ATTACHMENT_TEXT, BLOCK, Fields, read
from asz_core.collect import SourceLine
from asz_core.sessiondata import (
    RawJSON,
    call_part,
    data_part,
    dropped_entry,
    media_part,
    raw_json_marshal,
    reasoning_part,
    result_part,
    text_part,
    unknown_part,
)
from asz_core.sessiondata.fields import DroppedFields, PartFields, utf8_len

__all__ = ["CONTENT_NOT_READ", "SIGNATURE_WHY", "attachment_part", "content_parts"]

SIGNATURE_WHY: Final = "a provider verifies it; a reader cannot read it"
CONTENT_NOT_READ: Final = "the content is neither text nor a list of blocks"
BLOCK_NOT_READ: Final = "the block is not an object"

_Path = tuple[str | int, ...]


def attachment_part(line: SourceLine, record: Fields, written: Any) -> PartFields:
    """The one part of an ``attachment`` line; ``written`` is its ``attachment`` as written."""
    if not record.has("attachment"):
        return data_part(None)
    key = record.key("attachment")
    attachment = read(written, ATTACHMENT_TEXT)
    if attachment is not None and attachment.typed:
        text = attachment.text("text")
        if text:
            return text_part(text)
        content = attachment.value("content")
        if isinstance(content, str) and content:
            return text_part(content)
    return data_part(line.data_at(key))


def content_parts(line: SourceLine, record: Fields, content: Any,
                  result_data: RawJSON | None) -> tuple[list[PartFields], list[DroppedFields]]:
    """The parts of ``message.content`` (written, its value ``content``). ``result_data`` is the
    line's ``toolUseResult`` when it read whole, which every result part carries as its data."""
    if isinstance(content, str):
        return [text_part(content)], []
    if content is None:
        return [], []
    message = record.values["message"]  # its object when it is plain, else its Fields
    path: _Path = (record.key("message"), message.key("content") if isinstance(message, Fields) else "content")
    if not isinstance(content, list):
        return [unknown_part(bytes(line.data_at(*path)), CONTENT_NOT_READ)], []
    parts: list[PartFields] = []
    dropped: list[DroppedFields] = []
    for index, block in enumerate(content):
        parts.append(_block_part(line, block, (*path, index), result_data, dropped))
    return parts, dropped


def _block_part(line: SourceLine, block: Any, path: _Path, result_data: RawJSON | None,
                dropped: list[DroppedFields]) -> PartFields:
    fields = read(block, BLOCK)
    if fields is None or not fields.typed:
        return unknown_part(bytes(line.data_at(*path)), BLOCK_NOT_READ)
    # the block read typed: a string field holds a str or None; each asked by values.get, a
    # call in C when compiled (a bound get is a generic call)
    values = fields.values
    kind = values.get("type") or ""
    if kind == "text":
        return text_part(values.get("text") or "")
    if kind in ("thinking", "redacted_thinking"):
        thought = values.get("thinking") or ""
        state = "redacted" if kind == "redacted_thinking" else "available" if thought else "unavailable"
        signature = values.get("signature")
        if signature:
            dropped.append(dropped_entry("reasoning signature", utf8_len(signature), SIGNATURE_WHY))
        return reasoning_part(thought, state, utf8_len(thought))
    if kind in ("tool_use", "server_tool_use"):
        data = line.data_at_path((*path, fields.key("input"))) if "input" in values else None
        # only a client's tool_use may name an MCP server's tool
        return call_part(values.get("id"), values.get("name"), data, mcp=kind == "tool_use")
    if kind == "tool_result":
        return _result_part(line, fields, path, result_data)
    if kind == "image":
        source = fields.inner("source")
        encoded = source.get("data") or ""
        return media_part(source.get("media_type"), raw_json_marshal(encoded), utf8_len(encoded))
    return unknown_part(bytes(line.data_at(*path)), f'block type "{kind}" is not one this dialect describes')


def _result_part(line: SourceLine, fields: Fields, path: _Path, result_data: RawJSON | None) -> PartFields:
    values = fields.values
    given = "content" in values
    text, size = _result_text(values["content"]) if given else ("", 0)
    data: RawJSON | None = None
    if not text and given:
        data = line.data_at_path((*path, fields.key("content")))
        size = len(data)
    if result_data is not None:
        data = result_data
    failed = values.get("is_error")  # a bool or None, as read
    return result_part(values.get("tool_use_id"), text, data, failed, size)


def _result_text(content: Any) -> tuple[str, int]:
    """A result's text and its size; ``("", 0)`` when it has none (its size is then its data's)."""
    if isinstance(content, str):
        return content, utf8_len(content)
    if isinstance(content, list):
        texts = []
        for item in content:
            block = read(item, BLOCK)
            if block is None or not block.typed:
                return "", 0
            text = block.values.get("text")  # a str or None, as read
            if text:
                texts.append(text)
        if texts:
            joined = "\n".join(texts)
            return joined, utf8_len(joined)
    return "", 0
