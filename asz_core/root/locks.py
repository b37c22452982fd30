"""Locks: one pass per root, one writer per session.

Both are ``flock`` locks on a file that is never removed, so a crashed holder releases its lock
with its process. The root lock's file names its holder, so a second pass can say who it is;
the holder blanks it as it lets go.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from asz_core.root import confined
from asz_core.root.durable import OWNER_FILE, open_private

__all__ = ["FileLock", "LockBusy"]


class LockBusy(RuntimeError):
    """Another process holds the lock; ``holder`` is what it wrote about itself."""

    def __init__(self, path: Path | str, holder: str) -> None:
        self.path = path
        self.holder = holder
        super().__init__(f"{path} is held by {holder or 'another process'}")


class FileLock:
    """An exclusive ``flock`` on ``path``; ``wait`` blocks until it is free instead of failing."""

    def __init__(self, path: Path | str, *, wait: bool = False, describe: bool = False,
                 on_acquired: Callable[[], None] | None = None, new: bool = False) -> None:
        self.path = path
        #: the lock file is made here, in a directory the caller has just made
        #: (``FileExistsError`` if it is there): a new regular file needs no check
        self.new = new
        self.wait = wait
        self.describe = describe
        #: run once the lock is held (a root's sweep of what a killed holder left)
        self.on_acquired = on_acquired
        self._fd: int | None = None
        self._note = 0  #: the length of the note ``describe`` wrote

    def acquire(self) -> None:
        if self.new:
            fd = confined.open_path(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, OWNER_FILE)
        else:
            fd = open_private(self.path, os.O_RDWR)  # a link refused, a hard link replaced
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if self.wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 512, 0).decode("utf-8", "replace").strip()
            os.close(fd)
            raise LockBusy(self.path, holder) from None
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        try:
            if self.describe:
                note = f"pid {os.getpid()} on {os.uname().nodename} since {time.strftime('%Y-%m-%dT%H:%M:%S%z')}"
                self._note = len(note.encode())
                with contextlib.suppress(OSError):  # a full disk: the lock is held all the same,
                    os.pwrite(fd, note.encode(), 0)  # and the pass says so where it writes
                    os.ftruncate(fd, self._note)    # (a longer note before it cut off)
            if self.on_acquired is not None:
                self.on_acquired()
        except BaseException:
            self.release()
            raise

    def release(self) -> None:
        if self._fd is None:
            return
        if self.describe:
            # blanked, not truncated to nothing: truncating frees the note's block, which a
            # file system mounted with ``discard`` then trims, on every pass; a reader strips
            # the blanks and finds no holder, as it would an empty file
            with contextlib.suppress(OSError):
                os.pwrite(self._fd, b" " * self._note, 0)
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()
