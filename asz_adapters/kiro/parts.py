"""Building blocks the Kiro dialects share: calls, times, images, unknown content.

Every rule here is over a field's presence and type, never over what a text says.

The dialects set a record's ``trigger`` and ``flags`` in Session Data's vocabulary, the one
``claude-code/1`` uses too, since everything above an adapter reads only those names: a prompt a
person typed is ``trigger: external`` with ``external_input``; context the runtime added is
``injected``; the system prompt it sent is ``system_prompt``; an event that empties or replaces
the model's context is ``context_reset``, and one that carries the summary forward
``reset_summary``. Flags are written in Session Data's order (``context_reset``,
``reset_summary``, ``external_input``, ``injected``, …, then ``system_prompt``,
``tool_schemas``).
"""

from __future__ import annotations

import base64
from decimal import Decimal, InvalidOperation
from typing import Any

from asz_core.collect import SourceLine
from asz_core.sessiondata import (
    RawJSON,
    dropped_entry,
    format_instant,
    media_part,
    parse_instant,
    raw_json_marshal,
    record,
    unknown_part,
)
from asz_core.sessiondata import call_part as any_call_part
from asz_core.sessiondata.fields import DroppedFields, PartFields, RecordFields

__all__ = [
    "SIGNATURE_WHY",
    "TRIGGER_EXTERNAL",
    "base64_media_part",
    "call_part",
    "epoch_ms_time",
    "epoch_seconds_time",
    "image_block_part",
    "rfc3339_time",
    "signature_dropped",
    "string_or_none",
    "unknown_at",
    "unknown_line",
]

SIGNATURE_WHY = "a provider verifies it; a reader cannot read it"
#: the trigger of a record a person's prompt started
TRIGGER_EXTERNAL = "external"
#: The latest instant RFC 3339 can write (9999-12-31T23:59:59.999999999Z), in nanoseconds.
_MAX_NANOS = 253402300799_999999999
_IMAGE_FORMATS = {"Gif": "image/gif", "Jpeg": "image/jpeg", "Png": "image/png", "Webp": "image/webp"}


def string_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def call_part(call_id: object, name: object, data: RawJSON | None) -> PartFields:
    """A call. Kiro's tool names do not split exactly into an MCP server and tool (the IDE
    writes ``mcp_`` + names that may hold ``_`` themselves), so no call carries the split."""
    return any_call_part(string_or_none(call_id), string_or_none(name), data, mcp=False)


def epoch_seconds_time(raw: bytes) -> str | None:
    """RFC 3339 for epoch seconds as the source spelled them (``1770983426.420942``), exactly:
    the digits are read as a decimal, so no fraction is lost to a float."""
    try:
        seconds = Decimal(raw.decode("ascii"))
    except (InvalidOperation, UnicodeDecodeError):
        return None
    if not seconds.is_finite() or seconds < 0:
        return None
    nanos = int(seconds * 1_000_000_000)
    return format_instant(nanos) if nanos <= _MAX_NANOS else None


def epoch_ms_time(value: object) -> str | None:
    """RFC 3339 for whole epoch milliseconds (the database's ``*_timestamp_ms``)."""
    if type(value) is not int or value < 0 or value * 1_000_000 > _MAX_NANOS:
        return None
    return format_instant(value * 1_000_000)


def rfc3339_time(value: object) -> str | None:
    """``value`` when it is an RFC 3339 time as the source wrote it; otherwise no time."""
    return value if isinstance(value, str) and parse_instant(value) is not None else None


def signature_dropped(signature: object) -> list[DroppedFields]:
    """The ``dropped`` entry for a reasoning signature, when there is one."""
    if not isinstance(signature, str) or not signature:
        return []
    return [dropped_entry("reasoning signature", len(signature.encode("utf-8", "surrogatepass")),
                          SIGNATURE_WHY)]


def image_block_part(line: SourceLine, *path: str | int) -> PartFields:
    """An image in kiro-cli's own ``ImageBlock`` form, ``{"format": "Png", "source":
    {"Bytes": [137, 80, ...]}}`` (its Rust type serialized by serde), as a media part whose
    base64 the adapter writes from those bytes. Any other form lands as an unknown part."""
    value: Any = line.value
    for step in path:
        value = value[step]
    fmt = value.get("format") if isinstance(value, dict) else None
    media = _IMAGE_FORMATS.get(fmt) if isinstance(fmt, str) else None
    source = value.get("source") if isinstance(value, dict) else None
    data = source.get("Bytes") if isinstance(source, dict) and len(source) == 1 else None
    if (media is None or not isinstance(data, list)
            or not all(type(b) is int and 0 <= b <= 255 for b in data)):
        return unknown_at(line, "an image in a form this dialect does not describe", *path)
    return base64_media_part(media, base64.b64encode(bytes(data)).decode("ascii"))


def base64_media_part(media: str, base64_text: str) -> PartFields:
    """A media part of ``base64_text``, landed as one JSON string; its ``bytes`` that text's size."""
    return media_part(media, raw_json_marshal(base64_text), len(base64_text))


def unknown_at(line: SourceLine, reason: str, *path: str | int) -> PartFields:
    """The source bytes of the value at ``path``, kept whole in an unknown part."""
    return unknown_part(bytes(line.data_at(*path)), reason)


def unknown_line(line: SourceLine, reason: str, run: str | None = None) -> RecordFields:
    """A record for a line the dialect cannot describe: every byte kept, with the reason (and
    the ``run`` the line falls in, when the dialect knows one)."""
    return record(run=run, parts=[line.unknown_part(reason)])
