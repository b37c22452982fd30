"""Durable file operations: install without replacing, replace atomically, fsync directories,
sync a whole file system.

A landed file is installed with a rename that refuses to replace anything (Linux
``renameat2(RENAME_NOREPLACE)``, else a hard link and an unlink), so two writers can never
overwrite each other's file and a crash leaves either the old state or the new one.
A group commit (:mod:`~asz_core.root.group`) makes many files durable with one ``syncfs``
(:func:`sync_filesystem`) and holds the state files it will write meanwhile in
:data:`DEFERRED`, where :func:`read_small` reads them, so this process never sees a state older
than the one it wrote.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import stat
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

from asz_core.root import confined, faults, libc

if TYPE_CHECKING:
    from asz_core.sessiondata.reader import SessionDataFile

__all__ = ["DEFERRED", "OWNER_DIR", "OWNER_FILE", "can_sync_filesystem", "fsync_dir", "install_noreplace",
           "make_dirs", "make_dirs_text", "open_landed", "open_private", "open_read", "read_bytes", "read_small",
           "read_table", "start_writeback", "sync_filesystem", "temp_name", "temp_name_in", "write_note",
           "write_replace", "write_state_copy", "write_whole"]

OWNER_DIR: Final = 0o700
OWNER_FILE: Final = 0o600

#: state files a group commit will write (path → bytes), not written yet: what this process
#: reads at those paths meanwhile (:func:`read_small`)
DEFERRED: dict[str, bytes] = {}


def install_noreplace(temp: str | Path, final: str | Path) -> None:
    """Move ``temp`` to ``final`` (the same directory); ``FileExistsError`` if ``final`` exists.
    Never replaces, and follows no link on the way (:mod:`~asz_core.root.confined`)."""
    confined.rename(temp, final, replace=False)


def fsync_dir(directory: Path) -> None:
    """Make a directory's entries (a new name, a rename) durable."""
    fd, owned = confined.dir_descriptor(directory)
    try:
        os.fsync(fd)
    finally:
        if owned:
            os.close(fd)


def can_sync_filesystem() -> bool:
    """Whether :func:`sync_filesystem` is there (Linux's ``syncfs``)."""
    return _syncfs() is not None


def sync_filesystem(fd: int) -> None:
    """Make everything written to the file system that holds ``fd`` durable: file contents,
    names, directories, in one call and one flush of the disk's cache, where an ``fsync`` of each
    costs a flush each. A write that failed since ``fd`` was opened is an ``OSError`` here
    (Linux 5.8 and later report them to ``syncfs``)."""
    fn = _syncfs()
    assert fn is not None, "only where can_sync_filesystem()"
    if fn(fd) != 0:
        import ctypes

        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


_UNLOADED: Any = object()
_syncfs_fn: Any = _UNLOADED


def _syncfs() -> Any:
    """libc's ``syncfs``, loaded on first use (``None`` where there is none)."""
    global _syncfs_fn
    if _syncfs_fn is _UNLOADED:
        _syncfs_fn = _load_syncfs()
    return _syncfs_fn


#: the first Linux whose ``syncfs`` reports a write that failed; before it, a failed write would
#: pass unseen, so each file is fsynced on its own there
_SYNCFS_REPORTS_ERRORS: Final = (5, 8)


def _kernel_release() -> tuple[int, int]:
    """The running kernel's major and minor version (``(0, 0)`` when it does not say)."""
    parts = os.uname().release.split(".")
    try:
        return int(parts[0]), int("".join(ch for ch in parts[1] if ch.isdigit()) or 0)
    except (IndexError, ValueError):
        return 0, 0


def _load_syncfs() -> Any:
    if not sys.platform.startswith("linux") or _kernel_release() < _SYNCFS_REPORTS_ERRORS:
        return None
    import ctypes

    return libc.function("syncfs", [ctypes.c_int])


def start_writeback(fd: int, offset: int, length: int) -> None:
    """Ask the disk to start writing ``length`` bytes of ``fd`` from ``offset``, and return at
    once (Linux's ``sync_file_range`` with ``SYNC_FILE_RANGE_WRITE``; nothing elsewhere). It makes
    nothing durable and changes no step of a landing: the ``fsync`` or ``syncfs`` after it still
    makes the bytes durable and reports a write that failed (so its result is not read here), but
    finds them mostly written."""
    global _writeback_fn
    if _writeback_fn is _UNLOADED:  # loaded on first use, ``None`` where there is none
        _writeback_fn = _load_writeback()
    if _writeback_fn is not None:
        _writeback_fn(fd, offset, length, _SYNC_FILE_RANGE_WRITE)


#: ``sync_file_range``'s flag: start writing the range's dirty pages, do not wait
_SYNC_FILE_RANGE_WRITE: Final = 2
#: libc's ``sync_file_range`` (a global a test may set, as ``_syncfs_fn``)
_writeback_fn: Any = _UNLOADED


def _load_writeback() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    return libc.function("sync_file_range", [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint])


def make_dirs(directory: Path) -> list[Path]:
    """Create ``directory`` and its parents, owner-only; return the ones created, outermost first.

    Their entries are not fsynced here: a caller that needs them durable (before a state file
    refers to what is inside) fsyncs each created directory's parent, as
    :meth:`asz_core.root.storage.SessionHandle.sync` does.
    """
    return [Path(made) for made in make_dirs_text(os.fspath(directory))]


def make_dirs_text(directory: str, *, hold: bool = False) -> list[str]:
    """:func:`make_dirs` of a path given as a string, which a session's landing makes its
    directories with: joined and split as strings, with no ``Path`` made for each level.
    ``hold``: in a directory a held session's writer knows (a new session's), each directory
    is made and held through its parent's descriptor (:func:`~asz_core.root.confined.make_held`),
    so the next level is made, and the last opened, through its descriptor, not by a path."""
    # what a known directory says (a new session's) needs no probe; elsewhere mkdir first and
    # the parents only when it says they are missing: most levels already exist, and a stat of
    # each level before its mkdir spent calls finding that out
    there = confined.known(directory)
    if there:
        return []
    if there is False:
        parent, name = confined.split(directory)
        created = make_dirs_text(parent, hold=hold)
        try:
            if hold:
                confined.make_held(parent, name, OWNER_DIR)  # made and held through the parent's descriptor
            else:
                confined.mkdir(directory, OWNER_DIR)
        except FileExistsError:
            return created
        created.append(directory)
        return created
    try:
        confined.mkdir(directory, OWNER_DIR)
    except FileExistsError:
        return []
    except FileNotFoundError:
        parent = confined.split(directory)[0]
        if parent == directory or not parent:
            raise
        created = make_dirs_text(parent)
        try:
            confined.mkdir(directory, OWNER_DIR)
        except FileExistsError:  # made meanwhile by another writer
            return created
        created.append(directory)
        return created
    return [directory]


def temp_name(final: str | Path) -> str:
    """A temporary name beside ``final``; readers skip names starting with a dot. A string:
    it is only ever used in system calls, and a ``Path`` would cost a parse per landed file.
    Unique without a system call each: a prefix drawn once per process (again in a forked
    child) and a counter; a name a killed writer left is swept before its directory is written
    again, and ``O_EXCL`` refuses any name that is there all the same."""
    return temp_name_in(*confined.split(final if type(final) is str else os.fspath(final)))


def temp_name_in(directory: str, name: str) -> str:
    """:func:`temp_name` of ``name`` in ``directory``, for a caller that has both apart."""
    return os.path.join(directory, f".tmp-{_temp_prefix}{next(_temp_count):04x}-{name}")


def _new_temp_prefix() -> None:
    global _temp_prefix, _temp_count
    _temp_prefix = os.urandom(4).hex()
    _temp_count = itertools.count()


_temp_prefix = ""
_temp_count = itertools.count()
_new_temp_prefix()
os.register_at_fork(after_in_child=_new_temp_prefix)


def write_replace(path: Path, data: bytes | Iterable[bytes], *, sync_dir: bool = True,
                  derived: bool = False) -> int:
    """Replace ``path`` with ``data`` (bytes, or chunks of them so that a large table need not be
    held whole) atomically: temp file, fsync, rename, directory fsync. Returns the bytes written.

    ``sync_dir=False`` skips the last step, for state that may lag after a power loss without
    harm (a cursor is brought forward from the landed files): the new content is still never
    seen half-written, because the temporary file is fsynced before the rename.
    ``derived=True`` skips both fsyncs, for a note rebuilt from the root whenever it is wrong.
    """
    temp = temp_name(path)
    fd = confined.open_path(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, OWNER_FILE)
    try:
        try:
            faults.checkpoint("state-write")
            size = _write_all(fd, data)
            if not derived:
                os.fsync(fd)
        finally:
            os.close(fd)
        faults.checkpoint("state-rename")
        confined.rename(temp, path, replace=True)
    except BaseException:
        _unlink_quietly(temp)
        raise
    if sync_dir and not derived:
        fsync_dir(path.parent)
    return size


def read_table(path: Path, format: int, **expected: Any) -> dict[str, Any] | None:
    """A derived table written as one JSON object (``{"format": N, ..., "sessions": {...}}``):
    the object when it is there, readable, of ``format``, holds a ``sessions`` object and each
    key of ``expected`` with its value (a table written by another adapter version); else
    ``None``, and the caller starts from an empty table or rebuilds it."""
    import orjson

    try:
        raw = read_small(path)
        data = orjson.loads(raw) if raw is not None else None
    except (OSError, orjson.JSONDecodeError):
        return None
    if (not isinstance(data, dict) or data.get("format") != format
            or not isinstance(data.get("sessions"), dict)
            or any(data.get(key) != value for key, value in expected.items())):
        return None
    return data


def sha256_of(path: Path | str) -> str:
    """The SHA-256 of a file's bytes (hex), read 1 MiB at a time; a link is refused."""
    import hashlib  # here: it loads OpenSSL, which a pass that checks no file (a no-op) need not

    fd = confined.open_path(path, os.O_RDONLY)
    digest = hashlib.sha256()
    try:
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
    finally:
        os.close(fd)
    return digest.hexdigest()


def open_read(path: Path | str) -> IO[bytes]:
    """A file of the root opened to read, as a buffered binary stream, the way every reader of the
    root opens one (a round, a landed file, a cursor, the parse's cache): no link followed on the way
    (:class:`~asz_core.root.confined.LinkRefused`, an ``OSError``), and nothing waited for, so a
    fifo planted at its name reads empty (:mod:`~asz_core.root.confined`, rules 2, 5 and 6).
    ``open(path, "rb")`` would read through a link and wait on a fifo for good."""
    return os.fdopen(confined.open_path(path, os.O_RDONLY), "rb")


def open_landed(path: Path | str) -> SessionDataFile:
    """A Session Data file of the root (``.sd``, ``.sk``) opened to read its records, as
    :func:`open_read` opens a file: ``open_file(path)`` would follow a link on the way to it and
    at its name. The reader is imported here, not with this module: a pass that writes only,
    and a command that reads no landed file, never load it."""
    from asz_core.sessiondata.reader import open_file

    return open_file(path, fd=confined.open_path(path, os.O_RDONLY))


def read_bytes(path: Path | str) -> bytes:
    """A file's bytes, opened as :func:`open_read` opens it: ``Path.read_bytes`` with no link
    followed. With ``os.open`` and ``os.read``: an open, a read or two and a close, where a
    buffered stream over it costs an ``fstat``, an ``isatty`` ``ioctl`` and two ``lseek``s more
    (the parse reads every landed file and round this way, the pass every cursor)."""
    fd = confined.open_path(path, os.O_RDONLY)
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks)


def read_small(path: Path | str) -> bytes | None:
    """A small state file's bytes (:func:`read_bytes`), or ``None`` when there is none; a link is
    refused. A state file a group commit has yet to write (:data:`DEFERRED`) reads as it will be.
    """
    text = path if type(path) is str else os.fspath(path)
    if DEFERRED:
        deferred = DEFERRED.get(text)
        if deferred is not None:
            return deferred
    if confined.known(text) is False:  # a new session's: nothing to open, nor an error to raise
        return None
    try:
        return read_bytes(text)
    except FileNotFoundError:
        return None


def write_note(path: str | Path, data: bytes) -> None:
    """Write a note nothing relies on in place (no temporary file, no fsync).

    For a note derived from the root that asz never reads back (``session.state``): written
    through a temporary file, a kill between the temporary write and the rename left the
    temporary file in a session directory that is swept only when the session lands again,
    which may be never. In place, a kill leaves the note short, which is all a wrong note is.
    """
    new = confined.known(path) is False  # a new session's: made here, nothing to truncate
    fd = open_private(path, os.O_WRONLY)
    try:
        if not new:
            os.ftruncate(fd, 0)
        faults.checkpoint("state-write")
        _write_all(fd, data)
    finally:
        os.close(fd)


def open_private(path: str | Path, flags: int) -> int:
    """Open (creating it, owner-only) a file of the root's own that is written in place: the
    lock, ``session.state``, an index appended to.

    A link above it is refused (:mod:`~asz_core.root.confined`); a name that is not a regular
    file of its own (a link, a hard link to another file, a fifo, a device) is replaced by a new
    empty file first, so that writing in place can only ever change this file. A name a known
    directory says is not there (a new session's) is created with ``O_EXCL``, which makes a
    regular file of one link or fails: nothing to check after it.
    """
    if confined.known(path) is False:
        with contextlib.suppress(FileExistsError):
            return confined.open_path(path, flags | os.O_CREAT | os.O_EXCL, OWNER_FILE)
    try:
        fd = confined.open_path(path, flags | os.O_CREAT | os.O_NONBLOCK, OWNER_FILE)
    except confined.LinkRefused:
        if not os.path.islink(path):
            raise  # a link above it: refused
    else:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
            os.set_blocking(fd, True)
            return fd
        os.close(fd)
    confined.unlink(path)  # the link itself: ``unlinkat`` never follows the last component
    return confined.open_path(path, flags | os.O_CREAT | os.O_EXCL, OWNER_FILE)


#: what :func:`_write_all` gathers of a state's chunks before it writes them
_GATHER_BYTES: Final = 1 << 16


def _write_all(fd: int, data: bytes | Iterable[bytes]) -> int:
    """Write ``data`` whole and say how many bytes that was; chunks are gathered up to
    :data:`_GATHER_BYTES` a ``write``, where a table written a session at a time cost a system call
    a session."""
    if isinstance(data, bytes):
        write_whole(fd, data)
        return len(data)
    gathered: list[bytes] = []
    size = total = 0
    for chunk in data:
        gathered.append(chunk)
        size += len(chunk)
        if size >= _GATHER_BYTES:
            write_whole(fd, b"".join(gathered))
            gathered.clear()
            total += size
            size = 0
    if gathered:
        write_whole(fd, b"".join(gathered))
    return total + size


def write_whole(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd``, however many ``write`` calls it takes."""
    view = memoryview(data)
    while view:
        # counted first, not inside the slice: compiled by mypyc, a memoryview's slice bound is
        # evaluated twice, which wrote every chunk twice
        written = os.write(fd, view)
        view = view[written:]


def write_state_copy(fd: int, data: bytes) -> None:
    """Write a state file's temporary copy whole through ``fd``, which this closes: the group's
    step c for a cursor (:mod:`~asz_core.root.group`), at its checkpoint, ``state-write``."""
    try:
        faults.checkpoint("state-write")
        write_whole(fd, data)
    finally:
        os.close(fd)


def _unlink_quietly(path: str | Path) -> None:
    with contextlib.suppress(OSError):
        confined.unlink(path)
