"""Strings as upstream holds them once decoded, for a value the dialect builds from them.

Upstream encodes what it builds (a ``changes/1`` record, an image's data) with Go's
``json.Marshal`` (:func:`~asz_core.sessiondata.raw_json_marshal` here), after its decoder made
each unpaired surrogate U+FFFD: a text the dialect compares, replaces in or measures before that
encoding (an edit's old and new strings, a path) is taken as Go holds it.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["go_string"]

_SURROGATE: Final = re.compile(r"[\ud800-\udfff]")  # the escapes, not the code points: mypyc compiles no lone surrogate


def go_string(text: str) -> str:
    """``text`` as Go holds a decoded string: every unpaired surrogate made U+FFFD."""
    return _SURROGATE.sub("\ufffd", text) if not text.isascii() else text
