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
import select
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

__all__ = ["PIPE_BYTES", "PipedProcess", "read_exactly", "widen", "write_all"]

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


class PipedProcess:
    """A process forked for a source, the pipe the pass writes to it on (``outbox``) and the one
    it writes back on (``inbox``).

    ``target(their_inbox, their_outbox, the_pass_ends, *args)`` runs in it: it closes the pass's
    ends, which it was forked with (those of processes forked before it too: ``others``). Its
    end of the pipe back is open in it alone (the pass closes its copy once it is forked), so
    the pass reads the end of that pipe, never a message, when it dies.
    """

    def __init__(self, context: Any, target: Callable[..., None], args: tuple[Any, ...],
                 others: tuple[int, ...] = ()) -> None:
        theirs, self.outbox = os.pipe()
        self.inbox, mine = os.pipe()
        widen(self.outbox)
        widen(self.inbox)
        try:
            self.process = context.Process(target=target, daemon=True,
                                           args=(theirs, mine, (*others, self.outbox, self.inbox), *args))
            self.process.start()
        except BaseException:
            os.close(self.outbox)
            os.close(self.inbox)
            raise
        finally:
            os.close(theirs)
            os.close(mine)

    def ready(self) -> bool:
        """Whether a message it sent has begun to arrive (never waits): reading it then waits only
        for the rest of a message under way."""
        return bool(select.select([self.inbox], [], [], 0)[0])

    @property
    def fds(self) -> tuple[int, int]:
        """The pass's ends of its pipes (a process forked after it closes them)."""
        return self.outbox, self.inbox

    def end(self, goodbye: bytes | None) -> None:
        """End it: send it ``goodbye`` and let it end by itself, or, with none (or if it does not
        end within a minute), kill it; it holds nothing the pass needs."""
        if goodbye is not None and self.process.is_alive():
            with contextlib.suppress(OSError):
                write_all(self.outbox, [goodbye])
            self.process.join(timeout=60)
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        os.close(self.outbox)
        os.close(self.inbox)
