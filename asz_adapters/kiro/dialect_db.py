"""``kiro-cli-db/1``: one turn of a ``conversations_v2`` row (``history[i]``) as one record.

A turn is ``{"user", "assistant", "request_metadata"}``: one request to the model (the
message it added) and the reply. The record's parts come in that order:

* ``user.content`` ``{"Prompt": {"prompt"}}`` → text, and the record gets ``trigger: external``
  and the flag ``external_input``; ``{"ToolUseResults": {"tool_use_results": [...]}}`` → one result each
  (``of`` = ``tool_use_id``; one ``Text`` → ``text``, one ``Json`` → ``data``, anything else
  → the content list as ``data``; ``failed`` from ``status`` ``Error``/``Success``); any other
  form → unknown;
* ``user.images[]`` → media (kiro-cli's ``ImageBlock`` form) or unknown;
* ``user.additional_context``, when not empty → a data part (context the runtime added), and the
  record gets the flag ``injected``;
* ``assistant`` ``{"Response": {content}}`` → text; ``{"ToolUse": {content, tool_uses}}`` →
  text (when not empty), then one call per ``tool_uses`` item (``id``, ``name``, ``args``);
  any other form → unknown.

Record fields: ``id`` = the reply's ``message_id``, ``call`` = ``request_metadata.request_id``,
``model`` = ``request_metadata.model_id``, ``time`` = ``request_start_timestamp_ms`` (else
the user's RFC 3339 ``timestamp``), ``usage`` from the token fields where they are integers.
A turn whose user half is a ``Prompt`` (or holds images) holds a person's words and the
model's, so the record has no single author and carries no ``from``; the parts say which is
which only by their kinds. A turn whose user half is ``ToolUseResults`` and holds no image
holds no one's text but the model's (a result is its own part kind), so it is ``from: agent``,
and its ``call`` becomes a model call in the conversation.

``run`` (the agent loop, one per person's prompt; the database writes no id of it) is derived
from the turns before (see :mod:`~asz_adapters.kiro.carried`): a ``Prompt`` turn starts a loop
named by its own ``request_id``, each ``ToolUseResults`` turn after it goes on in that loop,
and a turn of any other form, or one that does not read, ends it (what follows has no run
until the next ``Prompt``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from asz_adapters.kiro.carried import Carried, list_lines
from asz_adapters.kiro.parts import (
    TRIGGER_EXTERNAL,
    call_part,
    epoch_ms_time,
    image_block_part,
    rfc3339_time,
    string_or_none,
    unknown_at,
    unknown_line,
)
from asz_core.collect import SourceLine
from asz_core.sessiondata import FROM_AGENT, data_part, record, result_part, text_part, token_usage
from asz_core.sessiondata.fields import PartFields, RecordFields

__all__ = ["DatabaseTurnDialect"]

_USAGE_FIELDS = (("in_", "uncached_input_tokens"), ("out", "output_tokens"),
                 ("cache_read", "cache_read_input_tokens"), ("cache_write", "cache_write_input_tokens"))


def run_after(run: str | None, turn: Any) -> str | None:
    """The loop in effect after a turn, from the one before it (the module's rules)."""
    user = turn.get("user") if isinstance(turn, dict) else None
    variant = _only_key(user.get("content")) if isinstance(user, dict) else None
    if variant == "ToolUseResults":
        return run
    if variant != "Prompt":
        return None
    meta = turn.get("request_metadata")
    return string_or_none(meta.get("request_id")) if isinstance(meta, dict) else None


class DatabaseTurnDialect:
    """Converts one turn of a kiro-cli conversation (see the module's docstring); ``turns``
    are the conversation's turns, each compacted, which the loop of a turn is read from."""

    name = "kiro-cli-db/1"
    reads_non_json = False  #: a line that is not JSON lands as an unknown part

    def __init__(self, turns: Sequence[bytes] = ()) -> None:
        self._runs: Carried[str | None] = Carried(None, run_after, list_lines(turns))

    def reading(self, turns: Sequence[bytes]) -> DatabaseTurnDialect:
        """This dialect for a conversation whose turns are ``turns``."""
        return DatabaseTurnDialect(turns)

    def convert(self, line: SourceLine) -> RecordFields:
        _, run = self._runs.around(line)
        turn = line.value
        if not isinstance(turn, dict) or not ("user" in turn or "assistant" in turn):
            return unknown_line(line, "a turn without a user or an assistant message", run)
        parts: list[PartFields] = []
        flags: list[str] = []
        trigger = reply = None
        user, assistant = turn.get("user"), turn.get("assistant")
        if isinstance(user, dict):
            trigger = _user(line, user, parts, flags)
        elif "user" in turn:
            parts.append(unknown_at(line, "a user message that is not an object", "user"))
        if isinstance(assistant, dict):
            reply = _assistant(line, assistant, parts)
        elif "assistant" in turn:
            parts.append(unknown_at(line, "an assistant message that is not an object", "assistant"))
        meta = turn.get("request_metadata")
        meta = meta if isinstance(meta, dict) else {}
        time = epoch_ms_time(meta.get("request_start_timestamp_ms"))
        if time is None and isinstance(user, dict):
            time = rfc3339_time(user.get("timestamp"))
        counts = {field: meta.get(key) for field, key in _USAGE_FIELDS}
        usage = (token_usage(**{k: v if type(v) is int else None for k, v in counts.items()})
                 if any(type(v) is int for v in counts.values()) else None)
        # no one's text here but the model's
        agent = isinstance(user, dict) and _only_key(user.get("content")) == "ToolUseResults" and not user.get("images")
        return record(id=reply if reply is not None else string_or_none(meta.get("message_id")),
                      call=string_or_none(meta.get("request_id")), run=run, from_=FROM_AGENT if agent else None,
                      time=time, trigger=trigger, flags=flags, usage=usage,
                      model=string_or_none(meta.get("model_id")), parts=parts)


def _user(line: SourceLine, user: dict[str, Any], parts: list[PartFields], flags: list[str]) -> str | None:
    """The parts and flags of a turn's user message, added to ``parts`` and ``flags``; its trigger."""
    trigger = None
    content = user.get("content")
    variant = _only_key(content)
    body = content.get(variant) if isinstance(content, dict) and variant is not None else None
    body = body if isinstance(body, dict) else {}
    if variant == "Prompt" and isinstance(body.get("prompt"), str):
        parts.append(text_part(body["prompt"]))
        trigger = TRIGGER_EXTERNAL
        flags.append("external_input")
    elif variant == "ToolUseResults" and isinstance(body.get("tool_use_results"), list):
        for i, item in enumerate(body["tool_use_results"]):
            path = ("user", "content", "ToolUseResults", "tool_use_results", i)
            parts.append(_result(line, item, path) if isinstance(item, dict) else
                         unknown_at(line, "a tool result that is not an object", *path))
    elif "content" in user:
        parts.append(unknown_at(line, f"user content {variant or 'of this form'!s} is not "
                                      f"one this dialect describes", "user", "content"))
    images = user.get("images")
    for i, _ in enumerate(images if isinstance(images, list) else []):
        parts.append(image_block_part(line, "user", "images", i))
    extra = user.get("additional_context")
    if isinstance(extra, str) and extra:
        parts.append(data_part(line.data_at("user", "additional_context")))
        flags.append("injected")  # after external_input, in Session Data's order of flags
    return trigger


def _result(line: SourceLine, item: dict[str, Any], path: tuple[str | int, ...]) -> PartFields:
    status = item.get("status")
    failed = {"Error": True, "Success": False}.get(status) if isinstance(status, str) else None
    content = item.get("content")
    text, data = None, None
    if isinstance(content, list) and len(content) == 1:
        only = _only_key(content[0])
        if only == "Text" and isinstance(content[0]["Text"], str):
            text = content[0]["Text"]
        elif only == "Json":
            data = line.data_at(*path, "content", 0, "Json")
    if text is None and data is None and "content" in item:
        data = line.data_at(*path, "content")
    return result_part(string_or_none(item.get("tool_use_id")), text, data, failed)


def _assistant(line: SourceLine, assistant: dict[str, Any], parts: list[PartFields]) -> str | None:
    """The parts of a turn's assistant message, added to ``parts``; its message id."""
    variant = _only_key(assistant)
    body = assistant[variant] if variant in ("Response", "ToolUse") else None
    if not isinstance(body, dict):
        parts.append(unknown_at(line, f"assistant message {variant or 'of this form'!s} "
                                      f"is not one this dialect describes", "assistant"))
        return None
    content = body.get("content")
    if isinstance(content, str) and content:
        parts.append(text_part(content))
    uses = body.get("tool_uses") if variant == "ToolUse" else None
    for i, use in enumerate(uses if isinstance(uses, list) else []):
        path = ("assistant", "ToolUse", "tool_uses", i)
        if not isinstance(use, dict):
            parts.append(unknown_at(line, "a tool use that is not an object", *path))
            continue
        args = line.data_at(*path, "args") if "args" in use else None
        parts.append(call_part(use.get("id"), use.get("name"), args))
    return string_or_none(body.get("message_id"))


def _only_key(value: object) -> str | None:
    """The variant of a tagged union serialized as ``{"Variant": {...}}``."""
    if isinstance(value, dict) and len(value) == 1:
        key = next(iter(value))
        return key if isinstance(key, str) else None
    return None
