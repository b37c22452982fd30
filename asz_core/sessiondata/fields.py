"""What a dialect builds: a record as the very mapping it lands as.

A dialect makes each record with :func:`record` and its parts with the part functions
(:func:`text_part`, :func:`call_part`, :func:`data_part`, ...). Each returns a plain ``dict``,
typed for the checker (:class:`RecordFields`, :class:`PartFields`), with its keys in upstream's
order and its empty fields left out, so the collector encodes it with one ``orjson.dumps`` and
makes no object on the way. The rules are those of :meth:`~asz_core.sessiondata.model.Record.to_json`:

* ``ord``, ``off``, ``sha`` and ``bytes`` come first; :func:`record` puts them there, and the
  collector sets them (a dialect leaves them alone);
* a field ``None``, ``""``, an empty list or a count of 0 is left out; ``usage`` is written
  whenever the runtime reported one, ``{}`` when every count in it is 0; a part's ``failed``
  whenever it is set;
* a part's ``data`` is :data:`~asz_core.sessiondata.rawjson.RawJSON`, the exact bytes of one JSON
  value (:meth:`~asz_core.collect.SourceLine.data_at`), landed as they are;
* a part's ``bytes`` is the size of the original it describes.

A dialect that mutates a record after :func:`record` made it must keep that order: add a key
only by building the record again, never by assigning one it left out.
"""

from __future__ import annotations

import base64
from typing import Final, NotRequired, TypedDict

from asz_core.sessiondata.rawjson import RawJSON, raw_json_marshal

__all__ = [
    "DroppedFields",
    "PartFields",
    "RecordFields",
    "UsageFields",
    "call_part",
    "data_part",
    "dropped_entry",
    "media_part",
    "reasoning_part",
    "record",
    "result_part",
    "split_mcp_name",
    "text_part",
    "too_large_part",
    "unknown_part",
    "token_usage",
    "utf8_len",
]

AVAILABLE: Final = "available"


class UsageFields(TypedDict, total=False):
    """Token counts of a provider call (:func:`token_usage`)."""

    # ``in`` is a keyword: the key is written by :func:`usage`, never by name here
    out: int
    cache_read: int
    cache_write: int


class DroppedFields(TypedDict):
    """Something the dialect understood and chose not to carry (:func:`dropped_entry`)."""

    what: str
    bytes: int
    why: NotRequired[str]


class PartFields(TypedDict, total=False):
    """One part of a record, as it lands (made by the part functions)."""

    k: str
    text: str
    data: RawJSON
    id: str
    of: str
    name: str
    server: str
    server_tool: str
    failed: bool
    media: str
    encoding: str
    state: str
    bytes: int
    sha256: str


#: A record as it lands (:func:`record`): its keys in this order, ``from`` being a keyword.
RecordFields = TypedDict("RecordFields", {
    "ord": int, "off": int, "sha": str, "bytes": int,
    "id": NotRequired[str], "parent": NotRequired[str], "call": NotRequired[str], "run": NotRequired[str],
    "continues": NotRequired[str], "tool": NotRequired[str], "child": NotRequired[str],
    "batch": NotRequired[str], "label": NotRequired[str], "started_by": NotRequired[str],
    "from": NotRequired[str], "time": NotRequired[str], "trigger": NotRequired[str],
    "flags": NotRequired[list[str]], "usage": NotRequired[UsageFields], "model": NotRequired[str],
    "parts": NotRequired[list[PartFields]], "dropped": NotRequired[list[DroppedFields]],
})


def record(*, id: str | None = None, parent: str | None = None, call: str | None = None,
           run: str | None = None, continues: str | None = None, tool: str | None = None,
           child: str | None = None, batch: str | None = None, label: str | None = None,
           started_by: str | None = None, from_: str | None = None, time: str | None = None,
           trigger: str | None = None, flags: list[str] | None = None, usage: UsageFields | None = None,
           model: str | None = None, parts: list[PartFields] | None = None,
           dropped: list[DroppedFields] | None = None) -> RecordFields:
    """One record as it lands; the collector fills in its place (``ord``, ``off``), ``sha`` and
    ``bytes``. ``from_`` is the ``from`` field."""
    # Written out field by field: this runs for every record a dialect makes.
    out: RecordFields = {"ord": 0, "off": 0, "sha": "", "bytes": 0}
    if id:
        out["id"] = id
    if parent:
        out["parent"] = parent
    if call:
        out["call"] = call
    if run:
        out["run"] = run
    if continues:
        out["continues"] = continues
    if tool:
        out["tool"] = tool
    if child:
        out["child"] = child
    if batch:
        out["batch"] = batch
    if label:
        out["label"] = label
    if started_by:
        out["started_by"] = started_by
    if from_:
        out["from"] = from_
    if time:
        out["time"] = time
    if trigger:
        out["trigger"] = trigger
    if flags:
        out["flags"] = flags
    if usage is not None:
        out["usage"] = usage
    if model:
        out["model"] = model
    if parts:
        out["parts"] = parts
    if dropped:
        out["dropped"] = dropped
    return out


def token_usage(in_: int | None = None, out: int | None = None, cache_read: int | None = None,
          cache_write: int | None = None) -> UsageFields:
    """A call's token counts; a count of 0 (or ``None``) is left out, as upstream leaves it out."""
    counts: dict[str, int] = {}
    if in_:
        counts["in"] = in_
    if out:
        counts["out"] = out
    if cache_read:
        counts["cache_read"] = cache_read
    if cache_write:
        counts["cache_write"] = cache_write
    return counts  # type: ignore[return-value]  # "in" cannot be declared by name


def dropped_entry(what: str, bytes: int, why: str = "") -> DroppedFields:
    """A ``dropped`` entry: what was left out, its size, and why (left out when empty)."""
    if not why:
        return {"what": what, "bytes": bytes}
    return {"what": what, "bytes": bytes, "why": why}


def text_part(text: str) -> PartFields:
    """A text; ``bytes`` is its UTF-8 size."""
    size = utf8_len(text) if text else 0
    if not size:
        return {"k": "text", "state": AVAILABLE}
    return {"k": "text", "text": text, "state": AVAILABLE, "bytes": size}


def reasoning_part(text: str | None, state: str = AVAILABLE, bytes: int | None = None) -> PartFields:
    """A thought. ``state`` says ``unavailable`` when the runtime kept none, ``redacted`` when it
    hid it; ``bytes`` then says how large the original was, when known."""
    out: PartFields = {"k": "reasoning"}
    if text:
        out["text"] = text
    out["state"] = state
    size = bytes if bytes is not None else (utf8_len(text) if text else 0)
    if size:
        out["bytes"] = size
    return out


def call_part(id: str | None, name: str | None, data: RawJSON | None, *, mcp: bool = True) -> PartFields:
    """A tool call and its input. With ``mcp``, a name ``mcp__<server>__<tool>`` is also given as
    its ``server`` and ``server_tool`` (:func:`split_mcp_name`)."""
    out: PartFields = {"k": "call"}
    if data:
        out["data"] = data
    if id:
        out["id"] = id
    if name:
        out["name"] = name
        if mcp:
            server, tool = split_mcp_name(name)
            if server and tool:
                out["server"], out["server_tool"] = server, tool
    out["state"] = AVAILABLE
    if data:
        out["bytes"] = len(data)
    return out


def result_part(of: str | None, text: str | None = None, data: RawJSON | None = None,
                failed: bool | None = None, bytes: int | None = None) -> PartFields:
    """A tool's result: its text, its data, or both. ``bytes`` is the original's size, by
    default the text's and the data's together."""
    out: PartFields = {"k": "result"}
    if text:
        out["text"] = text
    if data:
        out["data"] = data
    if of:
        out["of"] = of
    if failed is not None:
        out["failed"] = failed
    out["state"] = AVAILABLE
    size = bytes if bytes is not None else (utf8_len(text) if text else 0) + (len(data) if data else 0)
    if size:
        out["bytes"] = size
    return out


def media_part(media: str | None, data: RawJSON, bytes: int) -> PartFields:
    """An image or other media: ``data`` its base64 as one JSON string, ``bytes`` that text's size."""
    out: PartFields = {"k": "media"}
    if data:
        out["data"] = data
    if media:
        out["media"] = media
    out["state"] = AVAILABLE
    if bytes:
        out["bytes"] = bytes
    return out


def data_part(data: RawJSON | None, bytes: int | None = None) -> PartFields:
    """A JSON value the source wrote, landed as written; ``bytes`` is the original's size, by
    default the data's own."""
    out: PartFields = {"k": "data"}
    if data:
        out["data"] = data
    out["state"] = AVAILABLE
    size = bytes if bytes is not None else (len(data) if data else 0)
    if size:
        out["bytes"] = size
    return out


def unknown_part(raw: bytes, reason: str) -> PartFields:
    """Bytes the dialect cannot describe, kept whole: one JSON string as ``json.Marshal`` writes
    it, or their base64 (``encoding``) when they are not valid UTF-8."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        out: PartFields = {"k": "unknown"}
        if reason:
            out["text"] = reason
        out["data"] = RawJSON(b'"%s"' % base64.b64encode(raw))
        out["encoding"] = "base64"
    else:
        out = {"k": "unknown"}
        if reason:
            out["text"] = reason
        out["data"] = raw_json_marshal(text)
    out["state"] = AVAILABLE
    if raw:
        out["bytes"] = len(raw)
    return out


def too_large_part(size: int, sha256: str, reason: str) -> PartFields:
    """An unknown part whose ``size`` bytes (digest ``sha256``) were too large to land: what
    :func:`~asz_core.sessiondata.reduce_to_fit` leaves of one, its reason and no data."""
    out: PartFields = {"k": "unknown"}
    if reason:
        out["text"] = reason
    out["state"] = "too_large"
    if size:
        out["bytes"] = size
    if sha256:
        out["sha256"] = sha256
    return out


def split_mcp_name(name: str) -> tuple[str | None, str | None]:
    """``mcp__<server>__<tool>`` split only when exactly one ``__`` follows ``mcp__``.

    Overlapping occurrences count, so ``foo___bar`` (two overlapping ``__``) stays whole.
    """
    if not name.startswith("mcp__"):
        return None, None
    rest = name[5:]
    hits = [i for i in range(len(rest) - 1) if rest[i] == "_" and rest[i + 1] == "_"]
    if len(hits) != 1:
        return None, None
    server, tool = rest[: hits[0]], rest[hits[0] + 2 :]
    if not server or not tool:
        return None, None
    return server, tool


#: a text is encoded this many characters at a time to be measured, so a long one is never
#: copied whole just to count its bytes
_MEASURE_SLICE = 1 << 20


def utf8_len(text: str) -> int:
    """The size of ``text`` in UTF-8, a lone surrogate counted as its three-byte form."""
    if text.isascii():  # no copy: an ASCII str's length is its UTF-8 size
        return len(text)
    if len(text) > _MEASURE_SLICE:
        # each code point encodes on its own, so the slices' sizes add up to the whole's
        return sum(len(text[i:i + _MEASURE_SLICE].encode("utf-8", "surrogatepass"))
                   for i in range(0, len(text), _MEASURE_SLICE))
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate: count it as its three-byte form
        return len(text.encode("utf-8", "surrogatepass"))
