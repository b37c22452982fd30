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
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from asz_core.root import confined, faults
from asz_core.root.durable import OWNER_FILE, install_noreplace, make_dirs, temp_name
from asz_core.root.layout import file_name
from asz_core.sessiondata.model import Header, Record
from asz_core.sessiondata.writer import FileSummary, SessionDataWriter

__all__ = ["LandedFile", "LandingFile"]


@dataclass(frozen=True, slots=True)
class LandedFile:
    """A file now in the root, with what it holds."""

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


class LandingFile:
    """One file being landed. Write records, then :meth:`commit`; on error, :meth:`abort`."""

    def __init__(self, root: Path, session: str, subdir: str, header: Header, stamp: str,
                 *, dry_run: bool = False, directory: Path | None = None) -> None:
        #: ``directory`` is ``root / session / subdir``, when the caller has it joined already
        self.directory = root / session / subdir if directory is None else directory
        name = file_name(header.kind, stamp, header.seq)
        self.final = self.directory / name
        self.relpath = f"{session}/{subdir}/{name}"
        self.header = header
        self.dry_run = dry_run
        self._temp: str | None = None
        self._file: BinaryIO | None = None
        #: directories this landing created; their parents need an fsync too
        self.created_dirs: list[Path] = []
        if dry_run:
            self.writer = SessionDataWriter(_CountingSink(), header)
            return
        self.created_dirs = make_dirs(self.directory)
        self._temp = temp_name(self.final)
        fd = confined.open_path(self._temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, OWNER_FILE)
        self._file = os.fdopen(fd, "wb", buffering=1 << 20)
        try:
            self.writer = SessionDataWriter(self._file, header)
        except BaseException:
            self.abort()
            raise

    def write(self, record: Record, line: bytes | None = None) -> None:
        faults.checkpoint("temp-write")
        self.writer.write(record, line)

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
        if self._file is not None and self._temp is not None:
            try:
                self._file.flush()
                if durable:
                    faults.checkpoint("temp-fsync")
                    os.fsync(self._file.fileno())
                faults.checkpoint("temp-readonly")
                os.fchmod(self._file.fileno(), 0o400)
                self._file.close()
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
            install_noreplace(self._temp, self.final)
            self._temp = None
        except BaseException:
            self.abort()
            raise

    def abort(self) -> None:
        """Drop the temporary file; nothing of it was ever visible."""
        if self._file is not None and not self._file.closed:
            with contextlib.suppress(OSError):
                self._file.close()
        if self._temp is not None:
            with contextlib.suppress(OSError):
                confined.unlink(self._temp)
            self._temp = None
