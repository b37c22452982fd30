"""RFC 3339 instants, compared as the instants they name and never as text.

``2026-01-01T12:00:00.11Z`` sorts before ``2026-01-01T12:00:00.1Z`` as text, yet is the later
time; an offset moves an instant without changing how its text sorts. So a time is parsed into
nanoseconds since the Unix epoch, which keeps all nine fraction digits the format allows
(``datetime`` keeps only six).
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from functools import lru_cache
from typing import Final

__all__ = ["format_instant", "parse_instant", "same_sort", "sorts_after", "sorts_as_instant", "stamp"]

_EPOCH_DAY: Final = date(1970, 1, 1).toordinal()

_RFC3339: Final = re.compile(
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
    year, month, day, hour, minute, second, fraction, _, sign, offset_h, offset_m = m.groups()
    hour_, minute_, second_ = int(hour), int(minute), int(second)
    if hour_ > 23 or minute_ > 59 or second_ > 60:
        return None
    days = _days(year, month, day)
    if days is None:
        return None
    seconds = days * 86400 + hour_ * 3600 + minute_ * 60 + second_
    if sign:
        oh, om = int(offset_h), int(offset_m)
        if oh > 23 or om > 59:
            return None
        seconds -= (oh * 3600 + om * 60) if sign == "+" else -(oh * 3600 + om * 60)
    nanos = int(fraction.ljust(9, "0")) if fraction else 0
    return seconds * 1_000_000_000 + nanos


# A UTC time whose text orders as its instant does, among texts of its length and day: digits
# in fixed places, no offset, and no leap second (``23:59:60`` and ``00:00:00`` of the next day
# are one instant in two texts; ``12:30:60`` is ``12:31:00``). As a pattern:
#
#     [0-9]{4}-[0-9]{2}-[0-9]{2}T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{1,9})?Z\Z
#
# written out below a character at a time (by code point: ``[0-9]`` is the ASCII digits alone),
# since the writer asks it of nearly every record and compiled, a character's code point is
# read in C, where a match starts the pattern engine (tests/core/sessiondata/test_writer_times.py
# holds the two to the same answers).

def _digits(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is ASCII digits only."""
    for i in range(start, end):
        c = ord(text[i])
        if c < 0x30 or c > 0x39:
            return False
    return True


def _time_of_day_sorts(text: str) -> bool:
    """Whether ``text``, from its 11th character (after a date's ten), is a time of day of the
    shape above: ``T``, hours 00-23, minutes and seconds 00-59, up to nine digits of a fraction
    after a dot, and ``Z`` as the last character."""
    end = len(text) - 1
    if end < 19 or ord(text[10]) != 0x54 or ord(text[13]) != 0x3A or ord(text[16]) != 0x3A or ord(text[end]) != 0x5A:
        return False
    tens, ones = ord(text[11]), ord(text[12])
    if not (0x30 <= ones <= 0x39 and (0x30 <= tens <= 0x31 or (tens == 0x32 and ones <= 0x33))):
        return False
    if not (0x30 <= ord(text[14]) <= 0x35 and 0x30 <= ord(text[17]) <= 0x35 and _digits(text, 15, 16)
            and _digits(text, 18, 19)):
        return False
    if end == 19:
        return True
    return ord(text[19]) == 0x2E and 21 <= end <= 29 and _digits(text, 20, end)


def sorts_as_instant(text: str) -> bool:
    """Whether ``text`` has the shape of a time whose text sorts as its instant does among texts
    of its length and day (see :func:`same_sort`). Its date is not checked."""
    return (len(text) >= 20 and _digits(text, 0, 4) and ord(text[4]) == 0x2D and _digits(text, 5, 7)
            and ord(text[7]) == 0x2D and _digits(text, 8, 10) and _time_of_day_sorts(text))


def same_sort(text: str, than: str) -> bool:
    """Whether ``text`` and ``than``, both of a shape :func:`sorts_as_instant` accepts and
    ``than`` a time :func:`parse_instant` accepts, compare as texts as their instants compare.

    They must be of one day (whose date ``than`` proved valid) and one length (so one number of
    fraction digits). Such texts are UTC, with fixed-width fields from the year down to the
    fraction and no leap second, so they sort as their instants do; comparing them saves
    parsing each record's time, as the records of a file mostly come in order or nearly so.
    """
    return len(text) == len(than) and text[:10] == than[:10]


def sorts_after(text: str, than: str) -> bool:
    """Whether ``text`` is ``than`` or a later instant, known by comparing them as texts:
    ``than`` of a shape :func:`sorts_as_instant` accepts and :func:`parse_instant` reads, and
    ``text`` not before it as a text, of its length and day, and of that shape.

    :func:`same_sort` and :func:`sorts_as_instant` in one step for a writer's usual record, a
    time later than the last of its file: its date is ``than``'s, so only its time of day is
    matched.
    """
    return (text >= than and len(text) == len(than) and text.startswith(than[:10])
            and _time_of_day_sorts(text))


@lru_cache(maxsize=4096)
def _days(year: str, month: str, day: str) -> int | None:
    """Days from the epoch to that day (``None`` for a day no calendar has, such as
    2026-02-30); cached, as the records of a file share a few days."""
    try:
        return date(int(year), int(month), int(day)).toordinal() - _EPOCH_DAY
    except ValueError:
        return None


def format_instant(nanos: int) -> str:
    """RFC 3339 in UTC with the fraction's trailing zeros trimmed (as Go's RFC3339Nano)."""
    seconds, rest = divmod(nanos, 1_000_000_000)
    text = _second(seconds)
    if rest:
        text += "." + f"{rest:09d}".rstrip("0")
    return text + "Z"


@lru_cache(maxsize=64)
def _second(seconds: int) -> str:
    """A whole second in RFC 3339 (UTC, no fraction); cached, as a pass stamps each cursor it
    writes with the time, many of them within one second."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S")


def stamp(nanos: int) -> str:
    """The ``<stamp>`` of a landed file's name: UTC, nanoseconds, no separators."""
    seconds, rest = divmod(nanos, 1_000_000_000)
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y%m%dT%H%M%S") + f".{rest:09d}Z"
