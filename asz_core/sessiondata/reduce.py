"""Too large to land: taking a record's largest payloads out, one at a time, until it fits.

A record cannot be cut, so one whose line would not fit a file of ``max_delta_bytes`` lands alone
and loses its largest payloads first (of two the same size, the earlier part's first), so the
same record always loses the same parts:

* a part's ``data`` (and ``encoding``) goes first, then its ``text`` — except an unknown part's
  text, which is the reason its bytes were not described, not content;
* a part keeps its place, kind and identifiers (``id``, ``name``, ``of``, ``server``,
  ``server_tool``, ``failed``, ``media``) and its original ``bytes``; ``sha256`` is the digest of
  what was taken out first; ``state`` is ``truncated`` while readable text is left, else
  ``too_large``;
* a ``changes/1`` record is made smaller in its own format (hunks of its largest file first,
  then its files, overlaps and gaps), an ``execution/1`` record and a ``provider_body/1``
  manifest are never taken out.

A record still too large with every payload out lands as it is.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any

import orjson

from asz_core.sessiondata.jsonbytes import NotJSON
from asz_core.sessiondata.model import Part, Record
from asz_core.sessiondata.rawjson import raw_json_marshal, raw_json_value
from asz_core.sessiondata.writer import encode_record

__all__ = ["KEPT_SCHEMAS", "reduce_to_fit"]

#: Data parts with these schemas are evidence or structure, never taken out whole.
KEPT_SCHEMAS = frozenset({"execution/1", "provider_body/1"})
_CHANGES = "changes/1"


def _schema_of(part: Part) -> str | None:
    if part.data is None or not part.data.startswith(b"{") or part.data.find(b'"schema"') < 0:
        return None
    try:
        value = raw_json_value(part.data)
    except NotJSON:
        return None
    schema = value.get("schema") if isinstance(value, dict) else None
    return schema if isinstance(schema, str) else None


#: a text is encoded this many characters at a time to be hashed or measured, so a text of any
#: size is never copied whole
_SLICE = 1 << 20


def _utf8_size(text: str) -> int:
    if text.isascii():
        return len(text)
    return sum(len(text[i:i + _SLICE].encode("utf-8", "surrogatepass")) for i in range(0, len(text), _SLICE))


def _first_taken_digest(part: Part) -> str:
    """The part's ``sha256``: the digest of what is taken out first. A text is hashed in slices
    (each code point encodes on its own, so the bytes are those of the whole)."""
    if part.data is not None:
        return hashlib.sha256(part.raw() if part.k == "unknown" else part.data).hexdigest()
    text = part.text or ""
    h = hashlib.sha256()
    for i in range(0, len(text), _SLICE):
        h.update(text[i:i + _SLICE].encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def _payload(part: Part, schema: str | None) -> int:
    """The size of what would go next from ``part`` (0 when nothing can)."""
    if schema in KEPT_SCHEMAS:
        return 0
    if schema == _CHANGES:
        return len(part.data) if part.data is not None and _changes_reducible(part) else 0
    if part.data is not None:
        return len(part.data)
    if part.text and part.k != "unknown" and part.state != "too_large":
        return _utf8_size(part.text)
    return 0


def _take_one(part: Part, schema: str | None) -> None:
    if part.sha256 is None:
        part.sha256 = _first_taken_digest(part)
    if schema == _CHANGES:
        _reduce_changes(part)
        part.state = "truncated"
        return
    if part.data is not None:
        part.data = None
        part.encoding = None
        keeps_text = part.k != "unknown" and bool(part.text)
        part.state = "truncated" if keeps_text else "too_large"
    else:
        part.text = None
        part.state = "too_large"


def reduce_to_fit(record: Record, budget: int, line: bytes | None = None) -> tuple[Record, bytes]:
    """The record, reduced until its line is at most ``budget`` bytes, and that line.

    ``line`` is the record's encoding when the caller has it (a large record is not encoded
    twice). The input is not changed. If nothing more can go, the smallest form is returned even
    though it is still larger than ``budget``: a record lands as it is rather than not at all.
    """
    if line is None:
        line = encode_record(record)
    if len(line) <= budget:
        return record, line
    parts = [replace(p) for p in record.parts]
    reduced = replace(record, parts=parts)
    schemas = [_schema_of(p) for p in parts]
    while len(line) > budget:
        sizes = [_payload(p, s) for p, s in zip(parts, schemas, strict=False)]
        best = max(range(len(parts)), key=lambda i: (sizes[i], -i), default=None)
        if best is None or sizes[best] == 0:
            break
        _take_one(parts[best], schemas[best])
        line = encode_record(reduced)
    return reduced, line


# ---- changes/1 -----------------------------------------------------------------------------


def _changes_value(part: Part) -> dict[str, Any] | None:
    try:
        value = raw_json_value(part.data) if part.data is not None else None
    except NotJSON:
        return None
    return value if isinstance(value, dict) else None


def _changes_reducible(part: Part) -> bool:
    value = _changes_value(part)
    return value is not None and any(k in value for k in ("changes", "overlaps", "gaps"))


def _reduce_changes(part: Part) -> None:
    value = _changes_value(part)
    if value is None:
        return
    files = value.get("changes")
    with_hunks = [f for f in files if isinstance(f, dict) and f.get("hunks")] if isinstance(files, list) else []
    if with_hunks:
        largest = max(with_hunks, key=lambda f: len(orjson.dumps(f.get("hunks"))))
        del largest["hunks"]
        largest["diff"] = "too_large"
    else:
        for key in ("changes", "overlaps", "gaps"):
            value.pop(key, None)
    part.data = raw_json_marshal(value)  # a changes/1 record is encoded as json.Marshal encodes it
