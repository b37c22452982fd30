"""The ``storage.retention`` keys of ``asz.yaml``, as the configuration validates them.

Kept apart from the policy so that validating a configuration imports nothing more than this.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["DURATION_PATTERN", "RETENTION_SCHEMA"]

#: ``-1`` (off), ``0`` (as soon as the rest allows) or a duration of days, hours, minutes and
#: seconds in that order: ``30d``, ``72h``, ``1d12h``, ``90s``
DURATION_PATTERN: Final = r"^(-1|0|(?=\d)(\d+d)?(\d+h)?(\d+m)?(\d+s)?)$"

RETENTION_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "metadata_only_after": {
            "description": "how old a session's last record must be before its landed files "
                           "give way to skeletons: -1 never, 0 at once, or 30d, 72h, 1d12h",
            "oneOf": [{"type": "integer", "enum": [-1, 0]},
                      {"type": "string", "pattern": DURATION_PATTERN}],
            "default": -1,
        },
        "local_only": {
            "description": "remove without waiting for the configured receiver to accept a "
                           "file: the root then holds the only copy, and loses it",
            "type": "boolean", "default": False,
        },
    },
    "default": {},
}
