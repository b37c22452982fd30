"""When a landed file may give way to its skeleton (``storage.retention``).

A landed file may go when all of these hold, and is kept otherwise:

1. Retention is on: ``metadata_only_after`` is not ``-1``.
2. The session's last record is at least ``metadata_only_after`` old. A record's ``time`` says
   when; a session none of whose records states one is judged by when its newest file landed.
3. The configured receiver accepted the file as it is now (``push.state`` names it with its
   current digest and no ``rejected`` line), unless ``local_only`` says not to wait for one.
4. Its stream's cursor covers it: a file landed after the cursor (a crash before the cursor
   write) is what a collector reads to bring the cursor forward, so it waits for a later pass.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from asz_core.retention.schema import OFF

__all__ = ["RetentionPolicy", "parse_age"]

_AGE = re.compile(r"^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")
_NS = 1_000_000_000


def parse_age(value: object) -> int | None:
    """Nanoseconds in ``metadata_only_after`` (``None``: off). ``ValueError`` on anything else."""
    text = str(value).strip()
    if text == OFF:
        return None
    if text == "0":
        return 0
    m = _AGE.match(text)
    if not text or m is None:
        raise ValueError(f"{value!r} is not -1, 0 or an age such as 30d, 72h or 1d12h")
    days, hours, minutes, seconds = (int(g) if g else 0 for g in m.groups())
    return (((days * 24 + hours) * 60 + minutes) * 60 + seconds) * _NS


@dataclass(frozen=True)
class RetentionPolicy:
    """``storage.retention`` as retention applies it."""

    after_ns: int | None = None  #: rule 2's age; ``None``: retention is off (rule 1)
    local_only: bool = False     #: rule 3 waived

    @classmethod
    def from_section(cls, section: Mapping[str, Any]) -> RetentionPolicy:
        """From the validated ``storage.retention`` section (empty: off)."""
        return cls(after_ns=parse_age(section.get("metadata_only_after", OFF)),
                   local_only=bool(section.get("local_only", False)))

    @property
    def on(self) -> bool:
        return self.after_ns is not None

    def old_enough(self, last_ns: int, now_ns: int) -> bool:
        """Rule 2: the session's last record is old enough."""
        return self.after_ns is not None and now_ns - last_ns >= self.after_ns
