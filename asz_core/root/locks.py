"""Locks: one pass per root, one writer per session.

Both are ``flock`` locks on a file that is never removed, so a crashed holder releases its lock
with its process. The root lock's file names its holder, so a second pass can say who it is.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from types import TracebackType

from asz_core.root.durable import OWNER_FILE

__all__ = ["FileLock", "LockBusy"]


class LockBusy(RuntimeError):
    """Another process holds the lock; ``holder`` is what it wrote about itself."""

    def __init__(self, path: Path, holder: str) -> None:
        self.path = path
        self.holder = holder
        super().__init__(f"{path} is held by {holder or 'another process'}")


class FileLock:
    """An exclusive ``flock`` on ``path``; ``wait`` blocks until it is free instead of failing."""

    def __init__(self, path: Path, *, wait: bool = False, describe: bool = False) -> None:
        self.path = path
        self.wait = wait
        self.describe = describe
        self._fd: int | None = None

    def acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, OWNER_FILE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if self.wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 512, 0).decode("utf-8", "replace").strip()
            os.close(fd)
            raise LockBusy(self.path, holder) from None
        except BaseException:
            os.close(fd)
            raise
        if self.describe:
            note = f"pid {os.getpid()} on {os.uname().nodename} since {time.strftime('%Y-%m-%dT%H:%M:%S%z')}"
            os.ftruncate(fd, 0)
            os.pwrite(fd, note.encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        if self.describe:
            os.ftruncate(self._fd, 0)
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()
