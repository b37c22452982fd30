"""Upstream's index in a session, removed before this code adds a file to that session.

Upstream's ``asz`` keeps a derived index in ``<session>/index/`` (``index.state``,
``entries.bin``); its parse never reads a landed file past the ``indexed_seq`` the index
covers, and builds an index only for a session that has none. So a program that adds files to
a session that has one removes ``index/`` (the Session Data format's rule for writers): it costs
upstream a rebuild, where a stale index would hide every file added here.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from asz_core.root import confined

__all__ = ["UPSTREAM_INDEX", "drop_upstream_index"]

#: the files of upstream's index (``index.state`` says how far it reaches)
UPSTREAM_INDEX = ("index.state", "entries.bin")


def drop_upstream_index(session_dir: Path) -> bool:
    """Remove ``<session>/index/`` when it holds upstream's index; True if it did. What this
    project keeps there (``ids``, ``provider_bodies``) is derived and goes with it: a session
    upstream landed has none of it yet."""
    directory = session_dir / "index"
    try:
        names = confined.listdir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return False
    if not any(name in names for name in UPSTREAM_INDEX):
        return False
    for name in names:
        with contextlib.suppress(IsADirectoryError, FileNotFoundError, PermissionError):
            confined.unlink(directory / name)
    with contextlib.suppress(OSError):  # something that is not a file of an index stays
        fd = confined.open_dir(session_dir)
        try:
            os.rmdir("index", dir_fd=fd)
        finally:
            os.close(fd)
    return True
