"""A record as a step of the view: its place, identifiers and flags, and its parts with their
text clipped and their full size beside it.

Every part says its kind, its size (``bytes``, the original's) and its state. A part with text
(a message, a thought, a result's readable output, an unknown part's reason) carries the first
:data:`CLIP` characters of it, and ``clipped`` when that is not all of it. ``data`` is never
carried: a reader that wants a part whole reads it by ``{seq, row, block}``.
"""

from __future__ import annotations

from typing import Any, Final

from asz_core.sessiondata.model import Part, Record

__all__ = ["CLIP", "display", "step_of"]

#: How many characters of a part's text the document carries.
CLIP: Final = 240

_RECORD_IDS: Final = ("call", "run", "child", "batch", "tool", "continues", "started_by", "label", "trigger")
_PART_IDS: Final = ("id", "name", "server", "server_tool", "of", "media")


def display(text: str) -> str:
    """``text`` as it can be shown: a lone surrogate (half a character) becomes U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _part(part: Part, block: int) -> dict[str, Any]:
    out: dict[str, Any] = {"block": block, "k": part.k}
    for key in _PART_IDS:
        value = getattr(part, key)
        if value is not None:
            out[key] = value
    if part.failed is not None:
        out["failed"] = part.failed
    if part.text is not None:
        out["text"] = display(part.text[:CLIP])
        if len(part.text) > CLIP:
            out["clipped"] = True
    out["bytes"] = part.bytes
    out["state"] = part.state
    return out


def step_of(seq: int, row: int, record: Record) -> dict[str, Any]:
    """The step for ``record`` at ``{seq, row}``."""
    out: dict[str, Any] = {"at": {"seq": seq, "row": row}}
    if record.from_ is not None:
        out["from"] = record.from_
    if record.time is not None:
        out["time"] = record.time
    for key in _RECORD_IDS:
        value = getattr(record, key)
        if value is not None:
            out[key] = display(value) if key == "label" else value
    if record.flags:
        out["flags"] = list(record.flags)
    out["bytes"] = record.bytes
    out["parts"] = [_part(part, block) for block, part in enumerate(record.parts)]
    return out
