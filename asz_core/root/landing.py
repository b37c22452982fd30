"""Landing one Session Data file: temp file → fsync → read-only → install (→ directory fsync).

A file becomes visible under its final name only once every byte is durable, and it is never
rewritten or appended after that. A crash at any instant leaves at most a temporary file, which
the next holder of the session's lock removes. The directory fsync that makes the new name
durable is the session's (:meth:`~asz_core.root.storage.SessionHandle.sync`): it is done once per
directory before anything refers to the file (a cursor, a state table), not once per file.
In a group commit (:mod:`~asz_core.root.group`) the same steps run in the same order, several
sessions' files at each: :meth:`LandingFile.close` without the fsync, one ``syncfs`` for all,
then :meth:`LandingFile.install`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Final, NamedTuple

from asz_core.root import confined, faults
from asz_core.root.durable import install_noreplace, make_dirs_text, start_writeback, temp_name_in, write_whole
from asz_core.root.layout import file_name
from asz_core.sessiondata.model import Header
from asz_core.sessiondata.writer import FileSummary, SessionDataWriter

__all__ = ["LANDED_FILE", "LandedFile", "LandingFile"]

#: a landed file's mode: read-only, the owner's alone
LANDED_FILE: Final = 0o400


class LandedFile(NamedTuple):
    """A file now in the root, with what it holds. A named tuple
    (docs/architecture.md, "Classes a pass imports")."""

    path: Path          #: absolute path
    relpath: str        #: relative to the root, forward slashes
    session: str
    kind: str
    seq: int
    stream: str | None
    batch: str | None
    summary: FileSummary
    dry_run: bool = False


class _CountingSink:
    """Where a dry run writes: nothing is kept, only sizes are counted."""

    def write(self, chunk: bytes) -> int:
        return len(chunk)


#: what :class:`_FileSink` gathers before it writes
_BUFFER: Final = 1 << 20


class _FileSink:
    """Writes to a descriptor about :data:`_BUFFER` at a time: what a buffered file object did,
    without the ``fstat`` and ``lseek`` it makes when opened. A chunk as large as the buffer is
    written as it is, never copied into one.

    Once a buffer's worth is written, the disk is asked to start writing it
    (:func:`~asz_core.root.durable.start_writeback`), so that a large file is mostly on the disk
    by the time its durable step (its ``fsync``, or the group's ``syncfs``) waits for it, and
    the landing converts the next lines meanwhile. A file smaller than the buffer is left to
    that step, which writes many such at once for less than each one started alone
    (benchmarks/README.md, "Writing around the page cache, ..., round 17")."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._chunks: list[bytes] = []
        self._size = 0
        self._written = 0  #: bytes written to the descriptor
        self._started = 0  #: of them, those whose writeback was started

    def write(self, chunk: bytes) -> int:
        if len(chunk) >= _BUFFER:
            self.flush()
            self._write(chunk)
            self._start_writeback()
            return len(chunk)
        self._chunks.append(chunk)
        self._size += len(chunk)
        if self._size >= _BUFFER:
            self.flush()
            self._start_writeback()
        return len(chunk)

    def flush(self) -> None:
        """Write what is gathered; in a file large enough to have started a writeback, start
        this part's too (at its close, all of a large file is on its way)."""
        if self._chunks:
            chunks, self._chunks, self._size = self._chunks, [], 0
            self._write(chunks[0] if len(chunks) == 1 else b"".join(chunks))
            if self._started:
                self._start_writeback()

    def _write(self, data: bytes) -> None:
        write_whole(self.fd, data)
        self._written += len(data)

    def _start_writeback(self) -> None:
        if self._written > self._started:  # a length of 0 would mean up to the file's end
            start_writeback(self.fd, self._started, self._written - self._started)
            self._started = self._written


class LandingFile:
    """One file being landed. Write records, then :meth:`commit`; on error, :meth:`abort`."""

    def __init__(self, root: Path, session: str, subdir: str, header: Header, stamp: str,
                 *, dry_run: bool = False, directory: Path | None = None, hold: bool = False) -> None:
        #: ``directory`` is ``root / session / subdir``, when the caller has it joined already;
        #: ``hold``: keep it open (:func:`~asz_core.root.confined.hold`) for the session's holder,
        #: which lets it go with the session
        self.directory = root / session / subdir if directory is None else directory
        name = file_name(header.kind, stamp, header.seq)
        self.final = self.directory / name
        self.relpath = f"{session}/{subdir}/{name}"
        self.header = header
        self.dry_run = dry_run
        self._final_text = ""  #: :attr:`final` as a string, once it is to be installed
        self._temp: str | None = None
        self._fd: int | None = None
        #: directories this landing created; their parents need an fsync too
        self.created_dirs: list[str] = []
        if dry_run:
            self.writer = SessionDataWriter(_CountingSink(), header)
            return
        # the system calls below take the directory as a string, made once
        directory_text = os.fspath(self.directory)
        self.created_dirs = make_dirs_text(directory_text, hold=hold)
        if hold:
            confined.hold(directory_text)
        self._final_text = os.path.join(directory_text, name)
        self._temp = temp_name_in(directory_text, name)
        # read-only from the start (the open that creates it may write all the same): no
        # ``fchmod`` once it is written
        self._fd = confined.open_path(self._temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, LANDED_FILE)
        self._sink = _FileSink(self._fd)
        try:
            self.writer = SessionDataWriter(self._sink, header)
        except BaseException:
            self.abort()
            raise

    def write(self, line: bytes, ord: int, off: int, bytes: int, time: str | None) -> None:
        """Write one record: its encoded line and what the file's summary and span read of it
        (:meth:`~asz_core.sessiondata.writer.SessionDataWriter.write`)."""
        faults.checkpoint("temp-write")
        self.writer.write(line, ord, off, bytes, time)

    def write_lines(self, lines: bytes, count: int, ord: int, off: int, bytes: int,
                    times: Sequence[str | None], follows: bytes) -> None:
        """Write ``count`` records encoded elsewhere at once (:meth:`SessionDataWriter.write_lines`):
        a collector that has a run of records' lines joined writes them in one step."""
        faults.checkpoint("temp-write")
        self.writer.write_lines(lines, count, ord, off, bytes, times, follows)

    def commit(self) -> LandedFile:
        """Close, make durable and read-only, install under the final name (not yet fsynced
        in its directory: see :meth:`~asz_core.root.storage.SessionHandle.sync`)."""
        landed = self.close(durable=True)
        self.install()
        return landed

    def close(self, *, durable: bool) -> LandedFile:
        """Close the temporary file, fsynced first when ``durable``, and make it read-only.
        Not ``durable``: a group commit (:mod:`~asz_core.root.group`) makes it durable with
        others before it calls :meth:`install`."""
        summary = self.writer.close()
        if self._fd is not None and self._temp is not None:
            try:
                self._sink.flush()
                if durable:
                    faults.checkpoint("temp-fsync")
                    os.fsync(self._fd)
                faults.checkpoint("temp-readonly")  # made so when it was created
                fd, self._fd = self._fd, None
                os.close(fd)
            except BaseException:
                self.abort()
                raise
        return LandedFile(path=self.final, relpath=self.relpath, session=self.header.session,
                          kind=self.header.kind, seq=self.header.seq, stream=self.header.stream,
                          batch=self.header.batch, summary=summary, dry_run=self.dry_run)

    def install(self) -> None:
        """Rename the closed, durable temporary file to its final name, never replacing one."""
        if self._temp is None:
            return
        try:
            faults.checkpoint("install")
            install_noreplace(self._temp, self._final_text)
            self._temp = None
        except BaseException:
            self.abort()
            raise

    def abort(self) -> None:
        """Drop the temporary file; nothing of it was ever visible."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            with contextlib.suppress(OSError):
                os.close(fd)
        if self._temp is not None:
            with contextlib.suppress(OSError):
                confined.unlink(self._temp)
            self._temp = None
