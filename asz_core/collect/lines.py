"""Reading a source's complete lines in blocks, keeping the bytes a cursor's tail digest covers.

Reading a line at a time costs a call into the buffered reader per line; reading a block at a
time and splitting it at its newlines costs one call per block. The reader keeps the blocks it
read (about :data:`TAIL_BYTES` of them, and of a line longer than a block only its last
:data:`TAIL_BYTES`), so the digest a cursor keeps of the bytes before its offset is the digest of
the very bytes that were landed, with no second read that a rewrite could slip into.
"""

from __future__ import annotations

import hashlib
import os
from collections import deque
from collections.abc import Iterator

__all__ = ["BLOCK_BYTES", "TAIL_BYTES", "LineReader"]

#: How much of the source before the offset the tail digest covers.
TAIL_BYTES = 1 << 20
#: How much is read at once; a line longer than this is read in pieces of this size.
BLOCK_BYTES = 1 << 18


class LineReader:
    """The complete lines of the file open as ``fd``, from ``offset`` on.

    ``before`` is the source's bytes just before ``offset`` (at most :data:`TAIL_BYTES`; what
    :meth:`tail_digest` needs when fewer bytes than that are read).
    """

    def __init__(self, fd: int, offset: int, before: bytes = b"") -> None:
        self._fd = fd
        self._offset = offset
        #: ``(file offset, bytes)``, ascending and disjoint: what :meth:`tail_digest` may need
        self._kept: deque[tuple[int, bytes | memoryview]] = deque()
        if before:
            self._kept.append((offset - len(before), before))
        #: the start of the last line handed out: no tail digest will end before it
        self._last_start = offset
        #: a line longer than a block, read and not yet handed out
        self._long = b""

    def lines(self) -> Iterator[tuple[bytes, int]]:
        """``(line without its newline, its offset)`` for each complete line. A last line
        without its newline is a write in progress: it is not a line yet, and it waits."""
        fd = self._fd
        pos = self._offset
        while True:
            block = os.pread(fd, BLOCK_BYTES, pos)
            cut = block.rfind(b"\n") + 1
            if not cut:
                if len(block) < BLOCK_BYTES or not self._read_long_line(pos, block):
                    return  # the end of the file, or a line still being written
                del block
                self._last_start = pos
                size = len(self._long) + 1
                yield self._take_long(), pos  # not kept in this frame while it is used
                pos += size
                continue
            self._keep(pos, memoryview(block)[:cut] if cut < len(block) else block)
            pieces = block.split(b"\n")
            pieces.pop()  # what follows the last newline: read again with the next block
            for raw in pieces:
                self._last_start = pos
                yield raw, pos
                pos += len(raw) + 1
            if len(block) < BLOCK_BYTES:
                return

    def _read_long_line(self, start: int, first: bytes) -> bool:
        """Read a line longer than a block on from ``first`` (its first block) to its newline
        into ``_long``, without it; False if it has none yet. Of it, only its last
        :data:`TAIL_BYTES` are kept, so a line of any size is held once here, not once more for
        the digest."""
        pieces = [first]
        pos = start + len(first)
        while True:
            block = os.pread(self._fd, BLOCK_BYTES, pos)
            newline = block.find(b"\n")
            if newline >= 0:
                pieces.append(block[:newline])
                break
            if len(block) < BLOCK_BYTES:
                return False
            pieces.append(block)
            pos += len(block)
        del block
        self._long = line = b"".join(pieces)
        del pieces
        last = line[-(TAIL_BYTES - 1):] + b"\n"
        self._keep(start + len(line) + 1 - len(last), last)
        return True

    def _take_long(self) -> bytes:
        line, self._long = self._long, b""
        return line

    def _keep(self, start: int, data: bytes | memoryview) -> None:
        kept = self._kept
        floor = self._last_start - TAIL_BYTES
        while len(kept) > 1 and kept[1][0] <= floor:
            kept.popleft()
        kept.append((start, data))

    def tail_digest(self, end: int) -> str:
        """SHA-256 of the :data:`TAIL_BYTES` before ``end`` (fewer at the file's start), a line
        end at or after the start of the last line handed out. Hashed piece by piece: joining
        them would copy a large line just to hash its last MiB."""
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
