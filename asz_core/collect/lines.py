"""Reading a source's complete lines in blocks, keeping the bytes a cursor's tail digest covers.

Reading a line at a time costs a call into the buffered reader per line; reading a block at a
time and splitting it at its newlines costs one call per block. The reader keeps the blocks it
read (about :data:`TAIL_BYTES` of them, and of a line longer than a block only its last
:data:`TAIL_BYTES`), so the digest a cursor keeps of the bytes before its offset is the digest of
the very bytes that were landed, with no second read that a rewrite could slip into.

A line longer than a block is found first (its newline looked for a block at a time, nothing
kept), then read with one call into one buffer of its size, so it is held once. A line longer
than the reader's ``read_limit`` is never held: it is handed out as :class:`TooLong`, its size
and SHA-256 taken as it streams. An unterminated last line waits, whatever its size; the reader
says how long it is (:attr:`LineReader.waiting`), so a collector can count one that waits long.
"""

from __future__ import annotations

import hashlib
import os
from collections import deque
from collections.abc import Iterable, Iterator
from itertools import chain, starmap
from typing import Final, NamedTuple

__all__ = ["BLOCK_BYTES", "READ_LIMIT", "TAIL_BYTES", "LineReader", "TooLong", "digest_span", "whole_lines"]

#: How much of the source before the offset the tail digest covers.
TAIL_BYTES: Final = 1 << 20
#: How much is read at once; a line longer than this is read in pieces of this size.
BLOCK_BYTES: Final = 1 << 18
#: The longest line read whole by default: a longer one is digested and sized as it streams.
#: (A transcript's longest lines are pasted screenshots, a few MB.)
READ_LIMIT: Final = 64 << 20
#: How much is read at once while a line too long to hold streams through the digest.
_STREAM_BYTES: Final = 1 << 20


class TooLong(NamedTuple):
    """A line longer than the reader's limit, never held: its size and digest (hex SHA-256 of its
    bytes, without the newline), taken as it streamed. A named tuple
    (docs/architecture.md, "Classes a pass imports")."""

    size: int
    sha256: str


def digest_span(fd: int, start: int, end: int) -> str:
    """Hex SHA-256 of the bytes ``[start, end)`` of the file open as ``fd``, read in blocks."""
    h = hashlib.sha256()
    pos = start
    while pos < end:
        chunk = os.pread(fd, min(_STREAM_BYTES, end - pos), pos)
        if not chunk:
            raise OSError(f"the file ended at {pos}, before {end}")
        h.update(chunk)
        pos += len(chunk)
    return h.hexdigest()


class LineReader:
    """The complete lines of the file open as ``fd``, from ``offset`` on.

    ``before`` is the source's bytes just before ``offset`` (at most :data:`TAIL_BYTES`; what
    :meth:`tail_digest` needs when fewer bytes than that are read). ``size``, the file's size
    when the caller looked, sizes the first read: a small source is read into a buffer of its
    size, not a block's (a block's buffer is mapped, faulted in and unmapped for each source:
    many small sources paid that once each).
    """

    def __init__(self, fd: int, offset: int, before: bytes = b"", read_limit: int = READ_LIMIT,
                 size: int | None = None) -> None:
        self._fd = fd
        self._offset = offset
        self._size = size
        #: the longest line handed out as its bytes
        self.read_limit = read_limit
        #: the size of the unterminated last line found (a write in progress), 0 when none
        self.waiting = 0
        #: ``(file offset, bytes)``, ascending and disjoint: what :meth:`tail_digest` may need
        self._kept: deque[tuple[int, bytes | memoryview]] = deque()
        if before:
            self._kept.append((offset - len(before), before))
        #: the start of the last line read (handed out once the next block is read): no tail
        #: digest will end before it
        self._last_start = offset
        #: the earliest end a tail digest may still be asked for when lines are handed out ahead
        #: of landing (:meth:`hold`); ``None``: the last line handed out
        self._held: int | None = None

    def lines(self) -> Iterator[tuple[bytes | TooLong, int]]:
        """``(line without its newline, its offset)`` for each complete line; a line longer
        than the read limit as :class:`TooLong`. A last line without its newline is a write in
        progress: it is not a line yet, and it waits (:attr:`waiting` says how long it is).

        Chained in C (``chain.from_iterable``): a line passes from the block's splitter to the
        caller with no frame of this reader's resumed on the way, which a ``yield from`` would
        resume for every line."""
        return chain.from_iterable(starmap(_lines_of, self.runs()))

    def runs(self) -> Iterator[tuple[bytes | TooLong, int, int]]:
        """The complete lines a block at a time: ``(data, its offset, run)``, where the first
        ``run`` bytes of ``data`` are whole lines, each with its newline (what follows is read
        again with the next block); ``run`` 0: ``data`` is one line longer than a block, without
        its newline (or :class:`TooLong`). What :meth:`lines` hands out, unsplit, for a
        collector that has the lines split elsewhere (:mod:`.split`)."""
        fd = self._fd
        pos = self._offset
        # a byte more than the size: a read that comes back short is the end, as a short block is
        first = BLOCK_BYTES if self._size is None else min(BLOCK_BYTES, max(self._size - pos, 0) + 1)
        while True:
            block = os.pread(fd, first, pos)
            if len(block) == first < BLOCK_BYTES:  # grown since: read as a whole block, as ever
                block = os.pread(fd, BLOCK_BYTES, pos)
            first = BLOCK_BYTES
            cut = block.rfind(b"\n") + 1
            if not cut:
                if len(block) < BLOCK_BYTES:
                    self.waiting = len(block)
                    return  # the end of the file, or a line still being written
                size = self._line_size(pos + len(block))
                if size is None:
                    return
                del block
                self._last_start = pos
                yield self._take_long(pos, size), pos, 0
                pos += size + 1
                continue
            self._keep(pos, memoryview(block)[:cut] if cut < len(block) else block)
            # The block's last line: kept blocks are dropped only as the next block is read, when
            # every line before it has been handed out, so it is set once a block.
            self._last_start = pos + block.rfind(b"\n", 0, cut - 1) + 1
            yield block, pos, cut
            pos += cut
            if len(block) < BLOCK_BYTES:
                if len(block) > cut:
                    self.waiting = len(block) - cut
                return

    def _line_size(self, pos: int) -> int | None:
        """The size of the line that starts a block before ``pos`` and runs on past it (its
        first block held no newline), found a block at a time and nothing kept; ``None`` (and
        :attr:`waiting` set) when it has no newline yet."""
        start = pos - BLOCK_BYTES
        while True:
            block = os.pread(self._fd, BLOCK_BYTES, pos)
            newline = block.find(b"\n")
            if newline >= 0:
                return pos + newline - start
            pos += len(block)
            if len(block) < BLOCK_BYTES:
                self.waiting = pos - start
                return None

    def _take_long(self, start: int, size: int) -> bytes | TooLong:
        """The line of ``size`` bytes at ``start``: read in one call into one buffer of its size
        (so held once), or, past the read limit, streamed through its digest. Of it, only its
        last :data:`TAIL_BYTES` are kept for the tail digest."""
        end = start + size
        tail_start = max(start, end + 1 - TAIL_BYTES)
        if size > self.read_limit:
            line: bytes | TooLong = TooLong(size, digest_span(self._fd, start, end))
            last = os.pread(self._fd, end + 1 - tail_start, tail_start)
        else:
            line = _read_exactly(self._fd, start, size)
            last = line[tail_start - start:] + b"\n"
        if len(last) != end + 1 - tail_start or not last.endswith(b"\n"):
            raise OSError(f"the line at {start} changed while it was read")
        self._keep(tail_start, last)
        return line

    def hold(self, start: int) -> None:
        """Keep what a tail digest ending at ``start`` or later needs, however far past it lines
        are handed out: a collector converting lines ahead of landing them (:mod:`.split`) lands
        none before ``start``."""
        self._held = start

    def _keep(self, start: int, data: bytes | memoryview) -> None:
        kept = self._kept
        held = self._held
        floor = (self._last_start if held is None else min(held, self._last_start)) - TAIL_BYTES
        while len(kept) > 1 and kept[1][0] <= floor:
            kept.popleft()
        kept.append((start, data))

    def tail_digest(self, end: int) -> str:
        """SHA-256 of the :data:`TAIL_BYTES` before ``end`` (fewer at the file's start), a line
        end at or after the start of the last line handed out (or the offset :meth:`hold` gave).
        Hashed piece by piece: joining them would copy a large line just to hash its last MiB."""
        low = max(0, end - TAIL_BYTES)
        h = hashlib.sha256()
        covered = 0
        for start, data in self._kept:
            stop = start + len(data)
            if stop <= low:
                continue
            if start >= end:
                break
            a, b = max(low, start) - start, min(end, stop) - start
            h.update(data if a == 0 and b == len(data) else memoryview(data)[a:b])
            covered += b - a
        if covered != end - low:
            raise AssertionError(f"the bytes before {end} were not all kept ({covered} of {end - low})")
        return h.hexdigest()


def whole_lines(data: bytes, offset: int) -> Iterator[tuple[bytes, int]]:
    """``(line without its newline, its offset)`` for each line ``data`` ends with a newline
    (``data`` read from ``offset``); what follows its last newline is no line."""
    # Each newline found by ``find``, which runs ``memchr``: ``split`` compares byte by byte.
    find = data.find
    start, end = 0, find(b"\n")
    while end >= 0:
        yield data[start:end], offset + start
        start = end + 1
        end = find(b"\n", start)


def _lines_of(data: bytes | TooLong, pos: int, run: int) -> Iterable[tuple[bytes | TooLong, int]]:
    """The lines of one of :meth:`LineReader.runs`' blocks (``run`` 0: ``data`` is one line)."""
    if not run:
        return ((data, pos),)
    assert isinstance(data, bytes)
    return whole_lines(data, pos)


def _read_exactly(fd: int, start: int, size: int) -> bytes:
    """``size`` bytes from ``start``, in one buffer: one ``pread`` returns them all from a regular
    file (up to 2 GiB), so fewer means the file shrank under it."""
    data = os.pread(fd, size, start)
    if len(data) == size:
        return data
    raise OSError(f"the file ended at {start + len(data)}, in the middle of a line that ran to {start + size}")
