"""What Claude Code names in the bodies it writes, and where: the one module that knows.

Claude Code (2.1.260) writes, with ``OTEL_LOG_RAW_API_BODIES=file:<dir>``, one file per body:

* ``<random UUID>.request.json`` — the Messages API request as built. ``metadata.user_id`` is a
  JSON string holding ``session_id``; the first ``system`` block's text names the prompt
  (``cc_prompt_id=<id>;``) and the request id of the previous call of its chain
  (``cc_prev_req=<id>;``);
* ``<provider request id>.response.json`` (a random UUID when there was none) — the final
  assistant message; its ``id`` is the message id a transcript records.

A message of one text block is a list of blocks while it is the newest and a plain string once
the cache marker (``cache_control``) has moved on, so :func:`message_keys` reads both spellings
as one message. Nothing else in the adapter reads a field of a body.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Final

import orjson

__all__ = [
    "REQUEST",
    "RESPONSE",
    "TOOL_ARRAYS",
    "RequestNames",
    "ResponseNames",
    "body_file",
    "chain_of",
    "is_file_id",
    "is_session_id",
    "message_keys",
    "request_id_of",
    "request_names",
    "response_names",
]

REQUEST: Final = "request"
RESPONSE: Final = "response"
_SUFFIXES: Final = ((".request.json", REQUEST), (".response.json", RESPONSE))

#: Each element of these arrays (paths of keys from the body's root) is one piece: a tool definition.
TOOL_ARRAYS: Final = (("tools",),)

_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")
_PROMPT_ID = re.compile(r"(?:^|[\s;])cc_prompt_id=([^;\s]+);")
_PREV_REQ = re.compile(r"(?:^|[\s;])cc_prev_req=([^;\s]+);")


def body_file(name: str) -> tuple[str, str] | None:
    """``(role, stem)`` of a body file's name, or ``None`` for any other file."""
    for suffix, role in _SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return role, name[: -len(suffix)]
    return None


def is_session_id(value: object) -> bool:
    """Claude Code's own form of a session id: a lower-case UUID."""
    return isinstance(value, str) and _UUID.match(value) is not None


def _safe(value: object) -> str | None:
    """An id as one token (no spaces, no path characters), else ``None``."""
    return value if isinstance(value, str) and _SAFE_ID.match(value) else None


def is_file_id(stem: str) -> bool:
    """A body file's name without its suffix is one token a record id can be made of."""
    return _SAFE_ID.match(stem) is not None


def request_id_of(stem: str) -> str | None:
    """The provider request id a response's file name carries (``None`` for the random UUID
    Claude Code uses when there was none)."""
    return None if _UUID.match(stem) else _safe(stem)


@dataclass(frozen=True)
class RequestNames:
    """The ids a request carries."""

    session: str | None         #: the session it names, in Claude Code's form
    session_problem: str | None  #: why no session is taken from it
    refused: bool               #: it names a session, in a form that is not Claude Code's
    prompt: str | None          #: ``cc_prompt_id``
    previous_request: str | None  #: ``cc_prev_req``
    model: str | None
    system_prompt: bool         #: it carries a system prompt
    tool_schemas: bool          #: it carries tool schemas


@dataclass(frozen=True)
class ResponseNames:
    """The ids a response carries."""

    message_id: str | None
    model: str | None


def _first_system_text(value: dict[str, Any]) -> str:
    system = value.get("system")
    if isinstance(system, str):
        return system
    if isinstance(system, list) and system and isinstance(system[0], dict):
        text = system[0].get("text")
        return text if isinstance(text, str) else ""
    return ""


def request_names(value: object) -> RequestNames:
    """Read a request's ids; a body that is not an object carries none."""
    if not isinstance(value, dict):
        return RequestNames(None, "the request is not a JSON object", False, None, None, None, False, False)
    session, problem, refused = _session_of(value.get("metadata"))
    text = _first_system_text(value)
    prompt = _PROMPT_ID.search(text)
    previous = _PREV_REQ.search(text)
    model = value.get("model")
    return RequestNames(session=session, session_problem=problem, refused=refused,
                        prompt=_safe(prompt.group(1)) if prompt else None,
                        previous_request=_safe(previous.group(1)) if previous else None,
                        model=model if isinstance(model, str) else None,
                        system_prompt="system" in value, tool_schemas="tools" in value)


def _session_of(metadata: object) -> tuple[str | None, str | None, bool]:
    """``(session id, why none, whether it was refused)``."""
    user_id = metadata.get("user_id") if isinstance(metadata, dict) else None
    if not isinstance(user_id, str):
        return None, "metadata.user_id is missing", False
    try:
        inner = orjson.loads(user_id)
    except orjson.JSONDecodeError:
        return None, "metadata.user_id is not a JSON string holding session_id", False
    session = inner.get("session_id") if isinstance(inner, dict) else None
    if session is None:
        return None, "metadata.user_id names no session_id", False
    if not is_session_id(session):
        return None, (f"session id {str(session)[:80]!r} is not in Claude Code's form (a lower-case UUID); "
                      f"it could name a directory, so it is not taken"), True
    return session, None, False


def response_names(value: object) -> ResponseNames:
    if not isinstance(value, dict):
        return ResponseNames(None, None)
    model = value.get("model")
    return ResponseNames(message_id=_safe(value.get("id")), model=model if isinstance(model, str) else None)


def _normal_block(block: object) -> object:
    if isinstance(block, dict) and "cache_control" in block:
        return {k: v for k, v in block.items() if k != "cache_control"}
    return block


def message_keys(value: object) -> list[bytes]:
    """One digest per message of a request's ``messages``, equal for the two spellings of a
    message (a plain string, or a list of one text block; with or without ``cache_control``)."""
    messages = value.get("messages") if isinstance(value, dict) else None
    if not isinstance(messages, list):
        return []
    keys = []
    for message in messages:
        if not isinstance(message, dict):
            keys.append(_digest(message))
            continue
        content = message.get("content")
        if isinstance(content, str):
            blocks: object = [{"type": "text", "text": content}]
        elif isinstance(content, list):
            blocks = [_normal_block(b) for b in content]
        else:
            blocks = content
        rest = {k: v for k, v in message.items() if k not in ("content", "cache_control")}
        keys.append(_digest([rest, blocks]))
    return keys


def _digest(value: object) -> bytes:
    try:
        raw = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:  # lone surrogates, integers past 64 bits
        raw = json.dumps(value, sort_keys=True).encode("ascii")
    return hashlib.sha256(raw).digest()


def chain_of(keys: list[bytes]) -> str | None:
    """A request's chain: the digest of its first message, as both spellings read it (a
    compaction starts a new list, so a new chain)."""
    return keys[0].hex()[:32] if keys else None
