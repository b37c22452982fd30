"""Finding the pieces of a body: the values a later body is likely to send again, byte for byte.

A piece is either an element of one of the arrays the caller names by its path of keys from the
root object (for a model request, each tool definition), whole, or any other JSON string of at
least ``min_string`` bytes counting its quotes (keys excluded). Pieces never overlap: a long
string inside a named array's element is part of that element's piece. A key matches a path
only as written, byte for byte (a key spelled with escapes names nothing), as upstream's
scanner compares it. The same walk finds the first element of one more array the caller names
(a request's first message, which names its chain); the last such array wins, as upstream's.

The body is walked once with a regular expression over string tokens and brackets, so a body
of any size costs one pass in C plus one Python step per token. An element that is, byte for
byte, a value the caller already knows (:class:`KnownValues`: a session's tool definitions) is
stepped over whole instead: most of a model request's tokens are in its tool schemas.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from asz_core.sessiondata.jsonbytes import is_compact

__all__ = ["MIN_STRING", "KnownValues", "Span", "find_pieces"]

#: Strings this long or longer (with their quotes) are pieces.
MIN_STRING = 1024

# A string (group 1; group 2 is the colon after it when it is a key), or a bracket.
_TOKEN = re.compile(rb'("[^"\\]*(?:\\.[^"\\]*)*")([ \t\r\n]*:)?|[\[\]{}]')
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_SCALAR_END = re.compile(rb"[,\]} \t\r\n]")


class KnownValues:
    """Compact JSON objects and arrays a body is likely to repeat as an element of a named array,
    by their first bytes.

    When a body holds, from an element's first byte, the bytes of one of them, that element is
    exactly it: where a JSON value ends is fixed by its own bytes. So :func:`find_pieces` takes
    the element as a piece without walking its tokens, and finds the same pieces it finds
    without them. Only values added here are known; nothing is ever dropped, so the owner adds
    each value it comes to hold (:class:`~asz_core.providerbody.store.BodyStore` adds each
    piece it registers) and there is nothing to invalidate.
    """

    PREFIX = 32  #: bytes compared to find the candidates; the whole value is compared after

    def __init__(self) -> None:
        self._by_prefix: dict[bytes, list[bytes]] = {}

    def add(self, value: bytes) -> None:
        """Know ``value``, one JSON value: kept only when it is a compact object or array."""
        if value[:1] not in (b"{", b"[") or not is_compact(value):
            return
        candidates = self._by_prefix.setdefault(value[: self.PREFIX], [])
        if value not in candidates:
            candidates.append(value)

    def length_at(self, body: bytes, start: int) -> int:
        """The length of the known value ``body`` holds from ``start``, or 0."""
        for value in self._by_prefix.get(body[start : start + self.PREFIX], ()):
            if body.startswith(value, start):
                return len(value)
        return 0


@dataclass(frozen=True, slots=True)
class Span:
    """``body[start:end]`` is one piece."""

    start: int
    end: int


def find_pieces(body: bytes, arrays: Sequence[tuple[str, ...]] = (),
                min_string: int = MIN_STRING, known: KnownValues | None = None,
                first: tuple[str, ...] | None = None) -> tuple[list[Span], Span | None]:
    """The pieces of ``body`` (one JSON value, valid UTF-8), in order, and the span of the first
    element of the array at path ``first`` (``None`` when there is none).

    ``arrays`` are paths of object keys from the root (``("tools",)``) whose arrays' elements are
    each one piece. ``known`` values found whole as such an element are stepped over.
    """
    wanted = {tuple(p) for p in arrays}
    deepest = max((len(p) for p in (*wanted, *([first] if first is not None else []))), default=0)
    # One frame per open container: its path of keys (None once inside an array, where no
    # wanted path can continue), whether it is a wanted array, and where an element began.
    paths: list[tuple[str, ...] | None] = []
    is_object: list[bool] = []
    wanted_array: list[bool] = []
    key: str | None = None
    element_start = -1  # start of the wanted array element being read, else -1
    element_depth = 0
    first_span: Span | None = None
    first_start, first_depth = -1, 0  # the first element being read, when it is a container
    spans: list[Span] = []
    resume: int | None = 0
    while resume is not None:
        tokens, resume = _TOKEN.finditer(body, resume), None
        for m in tokens:
            start = m.start()
            first_byte = body[start]
            if first_byte == 0x22:  # a string: a key when a colon follows it
                if m.lastindex == 2:
                    if paths[-1] is not None and len(paths[-1]) < deepest:
                        key = _key(m.group(1))
                    continue
                end = m.end()
                if element_start < 0 and end - start >= min_string:
                    spans.append(Span(start, end))
                continue
            if first_byte in (0x7B, 0x5B):  # { or [
                if element_start < 0 and wanted_array and wanted_array[-1]:
                    length = known.length_at(body, start) if known is not None else 0
                    if length:  # a known element, whole: go on after it
                        spans.append(Span(start, start + length))
                        key, resume = None, start + length
                        break
                    element_start, element_depth = start, len(paths)
                path: tuple[str, ...] | None
                if not paths:
                    path = ()
                elif paths[-1] is None or not is_object[-1] or key is None:
                    path = None  # inside an array, or deeper than any wanted path
                else:
                    path = (*paths[-1], key)
                opening_array = first_byte == 0x5B
                if opening_array and first is not None and path == first:
                    j = _skip_space(body, start + 1)
                    if body[j] in (0x7B, 0x5B):
                        first_start, first_depth = j, len(paths) + 1
                    elif body[j] != 0x5D:
                        first_span = Span(j, _scalar_end(body, j))
                paths.append(path)
                is_object.append(not opening_array)
                wanted_array.append(opening_array and path in wanted)
                key = None
                continue
            # } or ]
            paths.pop()
            is_object.pop()
            wanted_array.pop()
            key = None
            if first_start >= 0 and len(paths) == first_depth:
                first_span, first_start = Span(first_start, start + 1), -1
            if element_start >= 0 and len(paths) == element_depth:
                spans.append(Span(element_start, start + 1))
                element_start = -1
    spans.sort(key=lambda s: s.start)
    return spans, first_span


def _skip_space(body: bytes, i: int) -> int:
    while i < len(body) and body[i] in b" \t\r\n":
        i += 1
    return i


def _scalar_end(body: bytes, i: int) -> int:
    """Where the string, number, ``true``, ``false`` or ``null`` at ``i`` ends."""
    if body[i] == 0x22:
        m = _STRING.match(body, i)
        return m.end() if m else len(body)
    m = _SCALAR_END.search(body, i)
    return m.start() if m else len(body)


def _key(raw: bytes) -> str | None:
    """A key as a path names it: its bytes as written; ``None`` (matching no path) when it is
    spelled with an escape."""
    return None if b"\\" in raw else raw[1:-1].decode("utf-8", "replace")
