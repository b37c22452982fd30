"""Durable file operations: install without replacing, replace atomically, fsync directories.

A landed file is installed with a rename that refuses to replace anything (Linux
``renameat2(RENAME_NOREPLACE)``, else a hard link and an unlink), so two writers can never
overwrite each other's file and a crash leaves either the old state or the new one.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from asz_core.root import faults

__all__ = ["OWNER_DIR", "OWNER_FILE", "fsync_dir", "install_noreplace", "make_dirs", "read_table", "temp_name",
           "write_note", "write_replace"]

OWNER_DIR = 0o700
OWNER_FILE = 0o600
_AT_FDCWD = -100
_RENAME_NOREPLACE = 1


_UNLOADED: Any = object()
_renameat2_fn: Any = _UNLOADED


def _renameat2() -> Any:
    """libc's ``renameat2``, loaded on the first install (``None`` where there is none)."""
    global _renameat2_fn
    if _renameat2_fn is _UNLOADED:
        _renameat2_fn = _load_renameat2()
    return _renameat2_fn


def _load_renameat2() -> Any:
    import ctypes

    try:
        # The process's own symbols, libc's among them: ctypes.util.find_library("c") would run
        # ldconfig in a subprocess (8 ms, in every worker process too) to name the same library.
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


def install_noreplace(temp: str | Path, final: str | Path) -> None:
    """Move ``temp`` to ``final``; ``FileExistsError`` if ``final`` exists. Never replaces."""
    renameat2 = _renameat2()
    if renameat2 is not None:
        if renameat2(_AT_FDCWD, os.fsencode(temp), _AT_FDCWD, os.fsencode(final), _RENAME_NOREPLACE) == 0:
            return
        import ctypes

        err = ctypes.get_errno()
        if err not in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
            raise OSError(err, os.strerror(err), str(final))
    os.link(temp, final)  # raises FileExistsError rather than replacing
    os.unlink(temp)


def fsync_dir(directory: Path) -> None:
    """Make a directory's entries (a new name, a rename) durable."""
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def make_dirs(directory: Path) -> list[Path]:
    """Create ``directory`` and its parents, owner-only; return the ones created, outermost first.

    Their entries are not fsynced here: a caller that needs them durable (before a state file
    refers to what is inside) fsyncs each created directory's parent, as
    :meth:`asz_core.root.storage.SessionHandle.sync` does.
    """
    # mkdir first and the parents only when it says they are missing: a session's three new
    # directories cost 5 calls, not the 11 that a stat of each level before its mkdir took
    try:
        os.mkdir(directory, OWNER_DIR)
    except FileExistsError:
        return []
    except FileNotFoundError:
        if directory.parent == directory:
            raise
        created = make_dirs(directory.parent)
        try:
            os.mkdir(directory, OWNER_DIR)
        except FileExistsError:  # made meanwhile by another writer
            return created
        created.append(directory)
        return created
    return [directory]


def temp_name(final: str | Path) -> str:
    """A temporary name beside ``final``; readers skip names starting with a dot. A string:
    it is only ever used in system calls, and a ``Path`` would cost a parse per landed file."""
    directory, name = os.path.split(final)
    return os.path.join(directory, f".tmp-{os.urandom(6).hex()}-{name}")


def write_replace(path: Path, data: bytes | Iterable[bytes], *, sync_dir: bool = True,
                  derived: bool = False) -> None:
    """Replace ``path`` with ``data`` (bytes, or chunks of them so that a large table need not be
    held whole) atomically: temp file, fsync, rename, directory fsync.

    ``sync_dir=False`` skips the last step, for state that may lag after a power loss without
    harm (a cursor is brought forward from the landed files): the new content is still never
    seen half-written, because the temporary file is fsynced before the rename.
    ``derived=True`` skips both fsyncs, for a note rebuilt from the root whenever it is wrong.
    """
    temp = temp_name(path)
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, OWNER_FILE)
    try:
        try:
            faults.checkpoint("state-write")
            _write_all(fd, data)
            if not derived:
                os.fsync(fd)
        finally:
            os.close(fd)
        faults.checkpoint("state-rename")
        os.replace(temp, path)
    except BaseException:
        _unlink_quietly(temp)
        raise
    if sync_dir and not derived:
        fsync_dir(path.parent)


def read_table(path: Path, format: int, **expected: Any) -> dict[str, Any] | None:
    """A derived table written as one JSON object (``{"format": N, ..., "sessions": {...}}``):
    the object when it is there, readable, of ``format``, holds a ``sessions`` object and each
    key of ``expected`` with its value (a table written by another adapter version); else
    ``None``, and the caller starts from an empty table or rebuilds it."""
    import orjson

    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    if (not isinstance(data, dict) or data.get("format") != format
            or not isinstance(data.get("sessions"), dict)
            or any(data.get(key) != value for key, value in expected.items())):
        return None
    return data


def write_note(path: Path, data: bytes) -> None:
    """Write a note nothing relies on in place (no temporary file, no fsync).

    For a note derived from the root that asz never reads back (``session.state``): written
    through a temporary file, a kill between the temporary write and the rename left the
    temporary file in a session directory that is swept only when the session lands again,
    which may be never. In place, a kill leaves the note short, which is all a wrong note is.
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, OWNER_FILE)
    try:
        faults.checkpoint("state-write")
        _write_all(fd, data)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes | Iterable[bytes]) -> None:
    for chunk in (data,) if isinstance(data, bytes) else data:
        view = memoryview(chunk)
        while view:
            written = os.write(fd, view)
            view = view[written:]


def _unlink_quietly(path: str | Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
