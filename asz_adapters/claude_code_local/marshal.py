"""Encoding a value the dialect builds (a ``changes/1`` record, an image's data) as upstream does.

Upstream encodes these with Go's ``json.Marshal`` before the writer places them, so they differ
from the writer's own strings in two ways: ``<``, ``>`` and ``&`` are escaped (``\\u003c``,
``\\u003e``, ``\\u0026``), and a string holds no unpaired surrogate (Go's decoder already made
each one U+FFFD). Keys keep the order the value was built in.
"""

from __future__ import annotations

import re
from typing import Any, Final

import orjson

__all__ = ["go_string", "marshal"]

_SURROGATE: Final = re.compile("[\ud800-\udfff]")
#: what Go escapes that orjson writes as it is (only ever inside strings)
_ESCAPED: Final = ((b"<", b"\\u003c"), (b">", b"\\u003e"), (b"&", b"\\u0026"),
                   ("\u2028".encode(), b"\\u2028"), ("\u2029".encode(), b"\\u2029"))


def go_string(text: str) -> str:
    """``text`` as Go holds a decoded string: every unpaired surrogate made U+FFFD."""
    return _SURROGATE.sub("\ufffd", text) if not text.isascii() else text


def marshal(value: Any) -> bytes:
    """``value`` (built of dicts, lists, strings, integers, booleans, ``None``) as Go's
    ``json.Marshal`` writes it."""
    try:
        out = orjson.dumps(value)
    except orjson.JSONEncodeError:  # an unpaired surrogate, which orjson refuses
        out = orjson.dumps(_repaired(value))
    for char, escape in _ESCAPED:
        if char in out:
            out = out.replace(char, escape)
    return out


def _repaired(value: Any) -> Any:
    if isinstance(value, str):
        return go_string(value)
    if isinstance(value, dict):
        return {key: _repaired(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_repaired(item) for item in value]
    return value
