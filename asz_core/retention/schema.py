"""The ``storage.retention`` keys of ``asz.yaml``, as the configuration validates them, and
whether they switch retention on.

Kept apart from the policy so that validating a configuration, and a pass asking whether
retention is on (it is off by default), import nothing more than this.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = ["DURATION_PATTERN", "OFF", "RETENTION_SCHEMA", "SECTION", "is_on"]

#: the configuration section retention reads
SECTION: Final = "storage.retention"

#: ``metadata_only_after`` when retention is off (its default)
OFF: Final = "-1"

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


def is_on(section: Mapping[str, Any]) -> bool:
    """Whether the validated ``section`` switches retention on: its ``metadata_only_after`` is
    not :data:`OFF` (rule 1 of :mod:`asz_core.retention.policy`)."""
    return str(section.get("metadata_only_after", OFF)).strip() != OFF
