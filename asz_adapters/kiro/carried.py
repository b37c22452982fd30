"""What a Kiro line's ids depend on that the line itself does not carry.

Kiro writes no loop id on a CLI event and no model-call id on an IDE line or a database turn,
but the lines before a line say which loop and which call it belongs to (each dialect's
docstring gives its rule). A rule of that kind is a fold over the source: a state that each
line moves, and a line's ids read from the state before it and after it. Three promises:

1. The ids of a line depend only on the source's lines before it and the line itself, never on
   how the lines were split between passes: a dialect carries the state from the line it saw
   last, and where it did not see the line just before (the first line of a pass, or after a
   line the collector kept from it: one that is not JSON, or too long to read), it folds the
   source again from where it last knew the state (else from the start), by the same step.
2. A line that does not read as JSON, or is longer than :data:`READ_LIMIT`, steps the fold with
   :data:`UNREADABLE`, whichever path reached it, so both paths agree.
3. Nothing here reads the root: what landed before is the source's prefix, which the append
   collector has checked is unchanged (its tail digest) before it hands out a line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar

from asz_core.collect import SourceLine
from asz_core.collect.lines import READ_LIMIT

__all__ = ["UNREADABLE", "Carried", "file_lines", "list_lines", "no_lines"]

S = TypeVar("S")
#: what a step is given for a line that does not read as JSON (a plain ``object()`` no JSON
#: value can be)
UNREADABLE: Any = object()
_CHUNK = 1 << 20

#: ``(from_ord, from_off, to_ord, to_off)`` → each line's bytes from the first place up to the
#: second, in order (``None`` for one too long to read)
Lines = Callable[[int, int, int, int], Iterator[bytes | None]]


class Carried(Generic[S]):
    """The fold of one source, as its dialect converts the source's lines in order."""

    def __init__(self, start: S, step: Callable[[S, Any], S], lines: Lines) -> None:
        self._start, self._step, self._lines = start, step, lines
        self._state = start
        self._next_ord, self._next_off = 1, 0  # where the state is known: before this line

    def around(self, line: SourceLine) -> tuple[S, S]:
        """The state before ``line`` and after it (rule 1)."""
        if line.ord != self._next_ord:
            if not 1 <= self._next_ord < line.ord or self._next_off > line.off:
                self._state, self._next_ord, self._next_off = self._start, 1, 0
            for raw in self._lines(self._next_ord, self._next_off, line.ord, line.off):
                self._state = self._step(self._state, _value(raw))
        before = self._state
        self._state = self._step(before, _value(line.raw, line))
        self._next_ord, self._next_off = line.ord + 1, line.off + len(line.raw) + 1
        return before, self._state


def _value(raw: bytes | None, line: SourceLine | None = None) -> Any:
    """What a step is given for a line (rule 2): its value, parsed as the collector parses it."""
    if raw is None or len(raw) > READ_LIMIT:
        return UNREADABLE
    line = SourceLine(raw) if line is None else line
    return line.value if line.is_json else UNREADABLE


def file_lines(path: Path) -> Lines:
    """The lines of a file that only grows by lines, between two offsets that start lines."""

    def lines(_from_ord: int, from_off: int, _to_ord: int, to_off: int) -> Iterator[bytes | None]:
        with open(path, "rb") as f:
            f.seek(from_off)
            left, pending, too_long = to_off - from_off, b"", False
            while left > 0:
                chunk = f.read(min(_CHUNK, left))
                if not chunk:
                    return  # the file is shorter than it was: the collector reports that
                left -= len(chunk)
                *whole, rest = chunk.split(b"\n")
                for piece in whole:
                    yield None if too_long else pending + piece
                    pending, too_long = b"", False
                if too_long or len(pending) + len(rest) > READ_LIMIT:
                    pending, too_long = b"", True
                else:
                    pending += rest

    return lines


def list_lines(items: Sequence[bytes]) -> Lines:
    """The items of a document's list, as lines: item ``n`` is line ``n + 1``."""

    def lines(from_ord: int, _from_off: int, to_ord: int, _to_off: int) -> Iterator[bytes | None]:
        yield from items[from_ord - 1:to_ord - 1]

    return lines


def no_lines(_from_ord: int, _from_off: int, _to_ord: int, _to_off: int) -> Iterator[bytes | None]:
    """No source to read again (a dialect given lines one by one, as a test does)."""
    return iter(())
