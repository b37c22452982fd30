"""Where a check works when ``--out`` names no directory: a file system in memory when the
machine has one with room, else the system's temporary directory.

A check lands, pushes and removes the same few hundred small files many times over, and each
landing makes its durable steps (``fsync``, ``syncfs``) exactly as a user's pass makes them. On a
disk those wait for the device, and ``syncfs`` for everything else written to that file system
meanwhile; in memory they return at once and nothing the check proves depends on them having
waited. The code that runs is the same either way: only the place differs. ``$TMPDIR``, when
set, is the user's choice of place and is kept.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["MEMORY_DIR", "MEMORY_ROOM", "make_scratch", "scratch_parent"]

#: Linux's file system in memory, present on every distribution (a tmpfs)
MEMORY_DIR = "/dev/shm"
#: the free space it must have: a scenario's directory is well under a megabyte, and a
#: container's /dev/shm may be as small as 64 MB, shared with everything else using it
MEMORY_ROOM = 256 << 20


def scratch_parent(memory: str = MEMORY_DIR, room: int | None = None) -> str | None:
    """The directory a check's work directory is made in (``None``: the system's default):
    ``memory`` when it has ``room`` bytes free (:data:`MEMORY_ROOM` unless given) and
    ``$TMPDIR`` names no other place."""
    if os.environ.get("TMPDIR"):
        return None
    try:
        if not os.path.isdir(memory) or not os.access(memory, os.W_OK | os.X_OK):
            return None
        free = os.statvfs(memory)
    except OSError:
        return None
    return memory if free.f_bavail * free.f_frsize >= (MEMORY_ROOM if room is None else room) else None


def make_scratch(prefix: str, memory: str = MEMORY_DIR) -> Path:
    """A new, empty, owner-only directory for one check's work."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir=scratch_parent(memory)))
