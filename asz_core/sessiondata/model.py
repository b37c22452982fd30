"""The shapes of Session Data: a file's header, its records, their parts and dropped entries.

These are what adapters build and what readers are handed. Field names and types follow
``spec/tables.md``; a field left ``None`` is absent from the landed line. A part's ``data`` is
always :data:`RawJSON`, the exact bytes of one JSON value, because a source's own JSON must land
byte for byte (see :mod:`asz_core.sessiondata.jsonbytes`).
"""

from __future__ import annotations

import base64
import builtins
from dataclasses import dataclass, field
from typing import Any, Final

from asz_core.sessiondata.fields import (
    DroppedFields,
    PartFields,
    RecordFields,
    UsageFields,
    call_part,
    data_part,
    media_part,
    reasoning_part,
    result_part,
    text_part,
    unknown_part,
)
from asz_core.sessiondata.rawjson import RawJSON, raw_json_marshal, raw_json_value

__all__ = [
    "FROM_AGENT",
    "FROM_EXTERNAL",
    "FROM_RUNTIME",
    "PART_KINDS",
    "STATES",
    "Dropped",
    "Header",
    "Part",
    "Record",
    "Usage",
]

PART_KINDS: Final = frozenset({"text", "reasoning", "call", "result", "media", "data", "unknown"})
STATES: Final = frozenset(
    {"available", "truncated", "redacted", "omitted", "unavailable", "too_large", "removed"}
)
FROM_AGENT: Final = "agent"
FROM_EXTERNAL: Final = "external"
FROM_RUNTIME: Final = "runtime"


@dataclass(slots=True)
class Usage:
    """Token counts of a provider call, as the runtime reported them."""

    in_: int | None = None
    out: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None

    def to_json(self) -> UsageFields:
        # A count of 0 is left out, as upstream leaves it out, so usage the runtime reported
        # with nothing in it is written ``{}``.
        out: dict[str, int] = {}
        if self.in_:
            out["in"] = self.in_
        if self.out:
            out["out"] = self.out
        if self.cache_read:
            out["cache_read"] = self.cache_read
        if self.cache_write:
            out["cache_write"] = self.cache_write
        return out  # type: ignore[return-value]  # "in" cannot be declared by name

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Usage:
        return cls(obj.get("in"), obj.get("out"), obj.get("cache_read"), obj.get("cache_write"))


@dataclass(slots=True)
class Dropped:
    """Something the dialect understood and chose not to carry, stated rather than silent."""

    what: str
    bytes: int
    why: str

    def to_json(self) -> DroppedFields:
        if not self.why:
            return {"what": self.what, "bytes": self.bytes}
        return {"what": self.what, "bytes": self.bytes, "why": self.why}


@dataclass(slots=True)
class Part:
    """One piece of a record's content: a message, a thought, a call, its result, ...

    What a reader hands out. A dialect makes its parts with the part functions of
    :mod:`~asz_core.sessiondata.fields`; the class methods (:meth:`text_part`, :meth:`call`,
    :meth:`unknown`, ...) make the same part as a :class:`Part`, for a record built as a
    :class:`Record` (a provider body's, a scenario's), by the same rules.
    """

    k: str
    state: str = "available"
    bytes: int = 0
    text: str | None = None
    data: RawJSON | None = None
    id: str | None = None
    name: str | None = None
    server: str | None = None
    server_tool: str | None = None
    of: str | None = None
    failed: bool | None = None
    media: str | None = None
    encoding: str | None = None
    sha256: str | None = None

    # -- building: the part functions' rules (:mod:`.fields`), for a record made as a Record

    @classmethod
    def text_part(cls, text: str) -> Part:
        return cls(**text_part(text))

    @classmethod
    def reasoning(cls, text: str | None, state: str = "available", bytes: int | None = None) -> Part:
        """A thought. ``state`` says ``unavailable`` when the runtime kept none, ``redacted``
        when it hid it; ``bytes`` then says how large the original was, when known."""
        return cls(**reasoning_part(text, state, bytes))

    @classmethod
    def call(cls, id: str | None, name: str | None, data: RawJSON | None) -> Part:
        return cls(**call_part(id, name, data))

    @classmethod
    def result(cls, of: str | None, text: str | None = None, data: RawJSON | None = None,
               failed: bool | None = None) -> Part:
        return cls(**result_part(of, text, data, failed))

    @classmethod
    def media_part(cls, media_type: str | None, base64_text: str) -> Part:
        return cls(**media_part(media_type, raw_json_marshal(base64_text), len(base64_text)))

    @classmethod
    def data_part(cls, data: RawJSON) -> Part:
        return cls(**data_part(data))

    @classmethod
    def unknown(cls, raw: builtins.bytes, reason: str) -> Part:
        """Bytes the dialect cannot describe, kept whole: one JSON string as ``json.Marshal``
        writes it, or their base64 (``encoding``) when they are not valid UTF-8."""
        return cls(**unknown_part(raw, reason))

    # -- reading ---------------------------------------------------------------------------

    def value(self) -> Any:
        """The parsed ``data`` (``None`` when the part holds none)."""
        return None if self.data is None else raw_json_value(self.data)

    def raw(self) -> builtins.bytes:
        """An unknown part's original bytes, whatever escapes or base64 it was landed with."""
        if self.k != "unknown" or self.data is None:
            raise ValueError(f"a {self.k} part holds no original bytes")
        text = raw_json_value(self.data)
        if not isinstance(text, str):
            raise ValueError("an unknown part's data is not one JSON string")
        if self.encoding == "base64":
            return base64.b64decode(text, validate=True)
        return text.encode("utf-8")

    def to_json(self) -> PartFields:
        """The part as it lands (:mod:`~asz_core.sessiondata.fields`): the keys in upstream's
        order; an empty string, a 0 ``bytes`` and an empty ``data`` left out as upstream leaves
        them out (``failed`` is written whenever it is set)."""
        out: PartFields = {"k": self.k}
        if self.text:
            out["text"] = self.text
        if self.data:
            out["data"] = self.data
        if self.id:
            out["id"] = self.id
        if self.of:
            out["of"] = self.of
        if self.name:
            out["name"] = self.name
        if self.server:
            out["server"] = self.server
        if self.server_tool:
            out["server_tool"] = self.server_tool
        if self.failed is not None:
            out["failed"] = self.failed
        if self.media:
            out["media"] = self.media
        if self.encoding:
            out["encoding"] = self.encoding
        if self.state:
            out["state"] = self.state
        if self.bytes:
            out["bytes"] = self.bytes
        if self.sha256:
            out["sha256"] = self.sha256
        return out


@dataclass(slots=True)
class Record:
    """One source record, converted: provenance and identifiers, then its parts."""

    ord: int = 0
    off: int = 0
    sha: str | None = None
    bytes: int = 0
    id: str | None = None
    parent: str | None = None
    call: str | None = None
    run: str | None = None
    continues: str | None = None
    tool: str | None = None
    child: str | None = None
    batch: str | None = None
    label: str | None = None
    started_by: str | None = None
    from_: str | None = None
    time: str | None = None
    trigger: str | None = None
    flags: list[str] = field(default_factory=list)
    usage: Usage | None = None
    model: str | None = None
    parts: list[Part] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)

    @classmethod
    def from_fields(cls, fields: RecordFields) -> Record:
        """The record a dialect made as its landed mapping (:mod:`~asz_core.sessiondata.fields`),
        as a reader would read it back from its line, without encoding or parsing it."""
        values: dict[str, Any] = dict(fields)
        usage = values.pop("usage", None)
        return cls(from_=values.pop("from", None), usage=None if usage is None else Usage.from_json(usage),
                   parts=[Part(**part) for part in values.pop("parts", ())],
                   dropped=[Dropped(entry["what"], entry["bytes"], entry.get("why", ""))
                            for entry in values.pop("dropped", ())], **values)

    def to_json(self) -> RecordFields:
        """The record as it lands (:mod:`~asz_core.sessiondata.fields`), in upstream's key order.

        ``ord``, ``off`` and ``bytes`` are always written, ``sha`` whenever it is set; every
        other field is left out when it is empty (``None``, ``""``, no flags, no parts, no
        dropped entries). ``usage`` is written whenever the runtime reported one, ``{}`` when
        every count in it is 0.
        """
        out: dict[str, Any] = {"ord": self.ord, "off": self.off}
        if self.sha is not None:
            out["sha"] = self.sha
        out["bytes"] = self.bytes
        if self.id:
            out["id"] = self.id
        if self.parent:
            out["parent"] = self.parent
        if self.call:
            out["call"] = self.call
        if self.run:
            out["run"] = self.run
        if self.continues:
            out["continues"] = self.continues
        if self.tool:
            out["tool"] = self.tool
        if self.child:
            out["child"] = self.child
        if self.batch:
            out["batch"] = self.batch
        if self.label:
            out["label"] = self.label
        if self.started_by:
            out["started_by"] = self.started_by
        if self.from_:
            out["from"] = self.from_
        if self.time:
            out["time"] = self.time
        if self.trigger:
            out["trigger"] = self.trigger
        if self.flags:
            out["flags"] = self.flags
        if self.usage is not None:
            out["usage"] = self.usage.to_json()
        if self.model:
            out["model"] = self.model
        if self.parts:
            out["parts"] = [p.to_json() for p in self.parts]
        if self.dropped:
            out["dropped"] = [d.to_json() for d in self.dropped]
        return out  # type: ignore[return-value]  # ``sha`` may be absent in a record read back


@dataclass(slots=True)
class Header:
    """Everything constant for one landed file (``spec/tables.md``, "Header fields")."""

    kind: str
    session: str
    src: str
    dialect: str
    adapter: str
    seq: int = 0
    at: str = ""
    stream: str | None = None
    batch: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    REQUIRED = ("kind", "session", "src", "dialect")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"h": 1, "schema": "sd/1", "seq": self.seq, "at": self.at,
                               "kind": self.kind, "adapter": self.adapter,
                               "dialect": self.dialect, "src": self.src,
                               "session": self.session}
        if self.stream:
            out["stream"] = self.stream
        if self.batch:
            out["batch"] = self.batch
        out.update(self.extra)
        return out
