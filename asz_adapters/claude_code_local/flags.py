"""``trigger`` and ``flags`` of a ``claude-code/1`` record: rules over fields, in upstream's order.

``trigger`` says what started the agent loop a record belongs to, in Session Data's words:

1. the kind is the line's ``origin.kind``, else its attachment's ``origin.kind``;
2. no kind, on a prompt a caller sent a headless run (``type`` ``user``, no ``origin.kind``,
   ``promptSource`` ``sdk``, not ``isMeta``) → ``external``;
3. no kind → no trigger; ``human`` → ``external``; ``task-notification`` → ``notification``;
   any other kind → ``unknown`` (the set is open, so a new kind is never read as none).

``flags``, each set by its rule, written in this fixed order:

1. ``synthetic``: an ``assistant`` line whose ``message.model`` is ``<synthetic>`` (the client
   wrote it, no model did);
2. ``context_reset``: a ``system`` line of subtype ``compact_boundary``;
3. ``reset_summary``: ``isCompactSummary`` true, on any line;
4. ``finished``: an ``assistant`` line with a non-empty string ``message.stop_reason``;
5. ``external_input``: an ``attachment`` of type ``queued_command`` with ``commandMode``
   ``prompt`` (what the person typed while the agent worked), or a ``user`` line whose
   ``origin.kind`` is ``human`` or that is a headless prompt, and not ``isMeta``; never on an
   ``isMeta`` line, nor on any line of a sidecar or a journal;
6. ``injected``: any other ``attachment`` (the default, so an attachment type not seen yet is
   never taken for a person), and every ``isMeta`` line;
7. ``child_result``: a journal line with a ``result`` key (``null`` included), or a tool result
   whose ``status`` is ``completed`` (a child's synchronous return);
8. ``error``: a ``system`` line of subtype ``api_error``;
9. ``launch_ack``: a tool result whose ``status`` is ``async_launched`` (a child started; not
   its result);
10. ``turn_duration`` / ``command``: a ``system`` line of subtype ``turn_duration`` /
    ``local_command``;
11. ``notice``: a ``system`` line of any other subtype, none included;

then the flags naming what the runtime sent the model, on an ``attachment`` only:
``prompt_snapshot`` → ``system_prompt``, and ``tool_schemas`` too when a key whose name holds
``tool`` (any case) holds a string, a list or an object with something in it;
``deferred_tools_record`` → ``tool_schemas`` when a key other than ``type`` and
``toolInputCopies`` holds a list or an object with something in it.

A line that does not read (:mod:`.shape`) has no fields to judge, so it is named for everything
the attachment type its bytes name could carry: bytes holding ``"prompt_snapshot"`` →
``system_prompt`` and ``tool_schemas``; else ``"deferred_tools_record"`` → ``tool_schemas``. A
reader withholding either is kept from bytes that may hold it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from asz_adapters.claude_code_local.shape import Fields
from asz_adapters.claude_code_local.source_facts import AGENT_META, JOURNAL, SourceFacts

__all__ = ["damaged_flags", "flags_of", "subtype_flags", "trigger_of"]

SYNTHETIC_MODEL: Final = "<synthetic>"
_SYSTEM_FLAGS: Final = {"compact_boundary": "context_reset", "api_error": "error",
                        "turn_duration": "turn_duration", "local_command": "command"}
#: upstream's fixed order of the structural flags
_ORDER: Final = ("synthetic", "context_reset", "reset_summary", "finished", "external_input",
                 "injected", "child_result", "error", "launch_ack", "turn_duration", "command",
                 "notice")
_RANK: Final = {name: i for i, name in enumerate(_ORDER)}


def _headless_prompt(line: Fields, origin: str | None) -> bool:
    values = line.values
    return (values.get("type") == "user" and not origin and values.get("promptSource") == "sdk"
            and values.get("isMeta") is not True)


def _origin(values: Mapping[str, Any]) -> str | None:
    """The ``origin.kind`` of a line's or an attachment's fields, as read."""
    origin = values.get("origin")  # an object (as read) or None
    if origin is None:
        return None
    kind: str | None = (origin if type(origin) is dict else origin.values).get("kind")
    return kind


def trigger_of(line: Fields) -> str | None:
    values = line.values
    if "origin" not in values and "attachment" not in values and "promptSource" not in values:
        return None  # most lines: nothing says what started their loop
    origin = _origin(line.values)
    kind = origin or _origin(line.inner("attachment"))
    if not kind:
        return "external" if _headless_prompt(line, origin) else None
    if kind == "human":
        return "external"
    if kind == "task-notification":
        return "notification"
    return "unknown"


def flags_of(line: Fields, message: Mapping[str, Any], result: Fields | None, result_typed: bool,
             source: SourceFacts, attachment: Any) -> list[str]:
    """The record's flags. ``message`` is the fields of its ``message`` as read
    (:meth:`~.shape.Fields.inner`), ``result`` the ``toolUseResult`` object as read (``None``
    when it is not an object), ``result_typed`` whether it read whole; ``attachment`` the
    ``attachment`` as written, for the sent-material flags."""
    values = line.values
    kind = values.get("type")
    meta = values.get("isMeta") is True
    found: set[str] = set()
    if kind == "assistant":
        if message.get("model") == SYNTHETIC_MODEL:
            found.add("synthetic")
        if message.get("stop_reason"):
            found.add("finished")
    elif kind == "system":
        found.add(_SYSTEM_FLAGS.get(values.get("subtype") or "", "notice"))
    elif kind == "attachment":
        typed = line.inner("attachment")
        queued_prompt = typed.get("type") == "queued_command" and typed.get("commandMode") == "prompt"
        found.add("external_input" if queued_prompt else "injected")
    elif kind == "user" and not meta:
        origin = _origin(line.values)
        if origin == "human" or _headless_prompt(line, origin):
            found.add("external_input")
    if values.get("isCompactSummary") is True:
        found.add("reset_summary")
    if source.kind == JOURNAL and "result" in values:
        found.add("child_result")
    if result is not None and result_typed:
        status = result.values.get("status")
        if status == "completed":
            found.add("child_result")
        elif status == "async_launched":
            found.add("launch_ack")
    if meta:
        found.add("injected")
        found.discard("external_input")
    if source.kind in (AGENT_META, JOURNAL):
        found.discard("external_input")
    if not found and kind != "attachment":
        return []
    flags = sorted(found, key=_RANK.__getitem__) if len(found) > 1 else list(found)
    if kind == "attachment":
        flags.extend(_sent_flags(line.inner("attachment").get("type") or "", attachment))
    return flags


def subtype_flags(kind: str | None, subtype: str | None) -> list[str]:
    """The flags of a transcript's line with none of the fields the other rules read (no
    ``message``, ``isMeta``, ``isCompactSummary``, ``toolUseResult``, ``attachment``, ``origin``
    or ``promptSource``), which only a ``system`` line's subtype sets (rules 2, 8, 10, 11)."""
    return [_SYSTEM_FLAGS.get(subtype or "", "notice")] if kind == "system" else []


def _sent_flags(kind: str, attachment: Any) -> list[str]:
    if not isinstance(attachment, dict):
        return []
    if kind == "prompt_snapshot":
        tools = any("tool" in key.lower() and _holds(value, strings=True) for key, value in attachment.items())
        return ["system_prompt", "tool_schemas"] if tools else ["system_prompt"]
    if kind == "deferred_tools_record" and any(
            key not in ("type", "toolInputCopies") and _holds(value, strings=False)
            for key, value in attachment.items()):
        return ["tool_schemas"]
    return []


def _holds(value: Any, *, strings: bool) -> bool:
    """A string (when ``strings``), a list or an object with something in it. Judged on the
    parsed value, which says the same as upstream's look at the bytes: ``[ ]`` is empty."""
    if isinstance(value, (list, dict)):
        return len(value) > 0
    return strings and isinstance(value, str) and value != ""


def damaged_flags(raw: bytes) -> list[str]:
    if b'"prompt_snapshot"' in raw:
        return ["system_prompt", "tool_schemas"]
    if b'"deferred_tools_record"' in raw:
        return ["tool_schemas"]
    return []
