"""RFC 3339 instants, compared as the instants they name and never as text.

``2026-01-01T12:00:00.11Z`` sorts before ``2026-01-01T12:00:00.1Z`` as text, yet is the later
time; an offset moves an instant without changing how its text sorts. So a time is parsed into
nanoseconds since the Unix epoch, which keeps all nine fraction digits the format allows
(``datetime`` keeps only six).
"""

from __future__ import annotations

import calendar
import re
from datetime import UTC, datetime

__all__ = ["format_instant", "parse_instant", "stamp"]

_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))\Z"
)


def parse_instant(text: object) -> int | None:
    """Nanoseconds since the epoch, or ``None`` when ``text`` is not an RFC 3339 time.

    A value that is not such a time means the record has no time (spec, "Reading a record").
    """
    if not isinstance(text, str):
        return None
    m = _RFC3339.match(text)
    if m is None:
        return None
    year, month, day, hour, minute, second = (int(g) for g in m.group(1, 2, 3, 4, 5, 6))
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour <= 23 and minute <= 59 and second <= 60):
        return None
    try:
        datetime(year, month, day)  # rejects 2026-02-30
    except ValueError:
        return None
    fraction = m.group(7) or ""
    nanos = int(fraction.ljust(9, "0")) if fraction else 0
    offset = 0
    if m.group(9):
        offset_h, offset_m = int(m.group(10)), int(m.group(11))
        if offset_h > 23 or offset_m > 59:
            return None
        offset = (offset_h * 3600 + offset_m * 60) * (1 if m.group(9) == "+" else -1)
    seconds = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0)) - offset
    return seconds * 1_000_000_000 + nanos


def format_instant(nanos: int) -> str:
    """RFC 3339 in UTC with the fraction's trailing zeros trimmed (as Go's RFC3339Nano)."""
    seconds, rest = divmod(nanos, 1_000_000_000)
    text = datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    if rest:
        text += "." + f"{rest:09d}".rstrip("0")
    return text + "Z"


def stamp(nanos: int) -> str:
    """The ``<stamp>`` of a landed file's name: UTC, nanoseconds, no separators."""
    seconds, rest = divmod(nanos, 1_000_000_000)
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y%m%dT%H%M%S") + f".{rest:09d}Z"
