"""The two names a scenario root adds, and moving and deleting under them with no link followed.

``_scenario/`` is the sign a ``claude-code`` build leaves that a pipeline over this root removes
the sessions the build marked; ``_removed/`` is where a removal renames a session directory and
a chain before deleting them. Nothing inside the root is trusted, so:

1. ``_removed`` is opened from the root's own directory with ``O_NOFOLLOW | O_DIRECTORY``: a
   link or a file there is :class:`UnsafeRemoved`, and nothing is moved into it or deleted
   through it.
2. A directory goes into ``_removed/`` in one ``renameat``, relative to the two directories'
   descriptors, never replacing anything there.
3. A tree in ``_removed/`` is deleted by descriptor, never following a link inside it
   (``shutil.rmtree`` with ``dir_fd``); a stopped deletion is finished by the next pass's sweep.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from asz_core.root.confined import rename_noreplace_at

__all__ = ["REMOVED_DIR", "SCENARIO_DIR", "UnsafeRemoved", "is_scenario_root", "move_to_removed",
           "open_nofollow_dir", "sweep_removed"]

SCENARIO_DIR: Final = "_scenario"
REMOVED_DIR: Final = "_removed"

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafeRemoved(OSError):
    """``_removed`` is a symbolic link or not a directory: nothing goes through it."""


def is_scenario_root(root: Path) -> bool:
    """A root a ``claude-code`` build wrote: ``_scenario`` is a directory of its own (a link there
    makes it no scenario root, so a planted link cannot switch removal on)."""
    try:
        return stat.S_ISDIR(os.lstat(root / SCENARIO_DIR).st_mode)
    except OSError:
        return False


@contextlib.contextmanager
def open_nofollow_dir(base_fd: int | None, rel: str) -> Iterator[int]:
    """The directory ``rel`` (components separated by ``/``) below ``base_fd``, each component
    opened without following a link. With no ``base_fd``, ``rel`` is the root or the source
    directory itself, the user's choice: it is resolved like any path, and opened as it resolves."""
    if base_fd is None:
        fd = os.open(os.path.realpath(rel), _DIR_FLAGS)
        parts: list[str] = []
    else:
        fd = os.dup(base_fd)
        parts = [p for p in rel.split("/") if p]
    try:
        for part in parts:
            nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = nxt
        yield fd
    finally:
        os.close(fd)


@contextlib.contextmanager
def _removed(root_fd: int, *, create: bool) -> Iterator[int | None]:
    """``_removed``'s descriptor (``None`` when absent and not ``create``); :class:`UnsafeRemoved`."""
    if create:
        with contextlib.suppress(FileExistsError):
            os.mkdir(REMOVED_DIR, 0o700, dir_fd=root_fd)
    try:
        fd = os.open(REMOVED_DIR, _DIR_FLAGS, dir_fd=root_fd)
    except FileNotFoundError:
        yield None
        return
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise UnsafeRemoved(exc.errno, f"{REMOVED_DIR} is a symbolic link or not a directory") from None
        raise
    try:
        yield fd
    finally:
        os.close(fd)


def sweep_removed(root: Path) -> int:
    """Delete whatever a stopped removal left in ``_removed/``; how many entries went.
    :class:`UnsafeRemoved` when ``_removed`` is a link or not a directory."""
    with open_nofollow_dir(None, str(root)) as root_fd, _removed(root_fd, create=False) as fd:
        if fd is None:
            return 0
        names = os.listdir(fd)
        for name in names:
            _delete_entry(fd, name)
        if names:
            os.fsync(fd)
        return len(names)


def move_to_removed(root: Path, rel: str, new_name: str) -> bool:
    """Rename ``root/rel`` (a directory, not a link) to ``_removed/new_name`` in one call and make
    both directories' entries durable; ``False`` when there is nothing at ``rel``."""
    parent, _, name = rel.rpartition("/")
    with open_nofollow_dir(None, str(root)) as root_fd, contextlib.ExitStack() as stack:
        try:  # no parent (no parse ever made _conversations/) is nothing at rel either
            src_fd = stack.enter_context(open_nofollow_dir(root_fd, parent))
            st = os.stat(name, dir_fd=src_fd, follow_symlinks=False)
        except FileNotFoundError:
            return False
        if not stat.S_ISDIR(st.st_mode):
            raise OSError(errno.ENOTDIR, f"{root / rel} is a symbolic link or not a directory; nothing moved")
        with _removed(root_fd, create=True) as removed_fd:
            assert removed_fd is not None
            _delete_entry(removed_fd, new_name)  # what a stopped removal left under that name
            rename_noreplace_at_two(src_fd, name, removed_fd, new_name)
            os.fsync(removed_fd)
            os.fsync(src_fd)
    return True


def delete_in_removed(root: Path, name: str) -> None:
    """Delete ``_removed/name`` (renamed there by :func:`move_to_removed`), by descriptor."""
    with open_nofollow_dir(None, str(root)) as root_fd, _removed(root_fd, create=False) as fd:
        if fd is not None:
            _delete_entry(fd, name)
            os.fsync(fd)


def rename_noreplace_at_two(src_fd: int, old: str, dst_fd: int, new: str) -> None:
    """``renameat`` between two directories, refusing to replace (``FileExistsError``)."""
    if src_fd == dst_fd:
        rename_noreplace_at(src_fd, old, new)
        return
    try:
        os.stat(new, dir_fd=dst_fd, follow_symlinks=False)
    except FileNotFoundError:
        os.rename(old, new, src_dir_fd=src_fd, dst_dir_fd=dst_fd)
        return
    raise FileExistsError(errno.EEXIST, f"{new} is there already; nothing moved")


def _delete_entry(dir_fd: int, name: str) -> None:
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        import shutil  # only a removal deletes a tree: every pass asks is_scenario_root

        shutil.rmtree(name, dir_fd=dir_fd)  # by descriptor: a link inside is unlinked, never followed
    else:
        os.unlink(name, dir_fd=dir_fd)
