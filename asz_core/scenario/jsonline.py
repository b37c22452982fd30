"""JSON as a JavaScript runtime writes it: compact, keys in the order given, ``<``, ``>``, ``&``,
U+2028 and U+2029 written as the characters (``JSON.stringify`` escapes none of them)."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["js_line"]


def js_line(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
