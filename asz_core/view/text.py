"""The text a document shows for a record or a part (asz-view, "A node in talks").

* A record's readable text is its ``text`` parts joined by a line break, trimmed; failing that,
  the prompt inside a ``queued_command`` envelope, the form a message typed while the agent works
  arrives in.
* A ``data`` part is shown as the record's readable text when it has one other than the data
  itself, else as the data exactly as the record holds it (compact JSON).
* Every text is clipped to the longest prefix of whole characters within 2,000 bytes; a lone
  surrogate (half a character) is shown as U+FFFD, as a JSON reader decodes it.
* White space, where a text is trimmed, is what Unicode's ``White_Space`` property lists.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

import orjson

from asz_core.sessiondata.model import Part, Record

__all__ = ["CLIP_BYTES", "candidates", "clip", "cut_utf8", "data_text", "display", "readable", "record_text", "trim"]

CLIP_BYTES: Final = 2000
WHITE_SPACE: Final = ("\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
                      "\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


def display(text: str) -> str:
    """``text`` as it can be shown: a lone surrogate (half a character) becomes U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def trim(text: str) -> str:
    return text.strip(WHITE_SPACE)


def clip(text: str) -> str:
    return cut_utf8(display(text), CLIP_BYTES)


def cut_utf8(text: str, limit: int) -> str:
    """``text`` as it is when its UTF-8 fits in ``limit`` bytes, else its longest prefix that
    does, never splitting a character."""
    raw = text.encode("utf-8")
    if len(raw) <= limit:
        return text
    cut = limit
    while cut > 0 and raw[cut] & 0xC0 == 0x80:
        cut -= 1
    return raw[:cut].decode("utf-8")


def data_text(part: Part) -> str:
    """A part's ``data`` exactly as the record holds it."""
    return bytes(part.data or b"").decode("utf-8", "replace")


def record_text(record: Record) -> str:
    """The record's ``text`` parts, joined in order by a line break."""
    return "\n".join(p.text for p in record.parts if p.k == "text" and p.text)


def _candidates(record: Record) -> Iterator[bytes]:
    for p in record.parts:
        if p.data:
            yield bytes(p.data)
        if p.text:
            yield p.text.encode("utf-8", "surrogatepass")
    whole = record_text(record)
    if whole:
        yield whole.encode("utf-8", "surrogatepass")


def candidates(record: Record) -> Iterator[Any]:
    """Every JSON value a record's own parts hold, decoded (what does not decode is passed over)."""
    for raw in _candidates(record):
        try:
            yield orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue


def readable(record: Record) -> str:
    """What a person would read in ``record`` (see the module's first rule)."""
    text = trim(record_text(record))
    if text:
        return text
    for value in candidates(record):
        if not isinstance(value, dict) or value.get("type") != "queued_command":
            continue
        prompt = value.get("prompt")
        if not isinstance(prompt, list) or not all(isinstance(p, dict) for p in prompt):
            continue
        said = [p["text"] for p in prompt if isinstance(p.get("text"), str) and p["text"]]
        if said:
            return trim("\n".join(said))
    return ""
