"""Whole messages on a pipe between the pass's process and one it forked for a large source.

What the pass's process and the processes it forks for a large source send each other
(:mod:`.split`'s workers, which convert its lines, and :mod:`.prove`'s prover, which digests and
proves them): a message is written whole, in as few ``writev`` calls as the pipe takes, and read
whole; one cut short is the pipe's end (:class:`EOFError`: the other process died or ended),
never a shorter message. Both ends are one program forked, so they agree on every header's
integers, their order and size.
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

__all__ = ["PIPE_BYTES", "read_exactly", "widen", "write_all"]

#: How much a pipe to or from a forked process holds (Linux's default most for a process that is
#: not privileged): a message of either kind fits, most of the time.
PIPE_BYTES = 1 << 20


def write_all(fd: int, parts: list[ReadableBuffer]) -> None:
    """Write ``parts`` one after the other, in as few ``writev`` calls as the pipe takes them."""
    views = [memoryview(part).cast("B") for part in parts]
    views = [view for view in views if view.nbytes]
    while views:
        sent = os.writev(fd, views)
        while views and sent >= views[0].nbytes:
            sent -= views[0].nbytes
            del views[0]
        if sent:
            views[0] = views[0][sent:]


def read_exactly(fd: int, size: int) -> bytes:
    """The next ``size`` bytes of the pipe ``fd``; :class:`EOFError` if it ends before them (the
    other end closed: the process that wrote it died, or ended, in the middle of a message)."""
    data = os.read(fd, size)
    if len(data) == size:
        return data
    parts = [data]
    got = len(data)
    while got < size:
        if not data:
            raise EOFError(f"the pipe ended after {got} of a message's {size} bytes")
        data = os.read(fd, size - got)
        parts.append(data)
        got += len(data)
    return b"".join(parts)


def widen(fd: int) -> None:
    """Let the pipe ``fd`` hold a message whole, so neither side waits for the other to read it:
    Linux's own limit for a pipe, or its default."""
    import fcntl

    with contextlib.suppress(OSError, AttributeError):
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
