"""The ``usage.prices`` key of ``asz.yaml`` (and a ``--prices`` file's ``prices``), as the
configuration validates it.

Kept apart from the price table (:mod:`asz_core.page.prices`) so that validating a configuration
imports nothing more than this.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["KINDS", "PRICES_SCHEMA"]

#: the kinds of tokens a price gives a rate for
KINDS: Final = ("in", "out", "cache_read", "cache_write")

#: model name to price
PRICES_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "additionalProperties": {
        "type": "object",
        "additionalProperties": False,
        "required": list(KINDS),
        "properties": {
            **{kind: {"type": "number", "minimum": 0} for kind in KINDS},
            "source": {"type": "string"},
            "date": {"description": "when the price was checked against its source: YYYY-MM-DD"},
        },
    },
    "default": {},
}
