"""A session new to the root, of one append-only source, landed in one place.

A new session's landing is the same few steps whatever its source holds, and for a session of a
few lines those steps, not its lines, are most of what it costs: the session handle, the landing
file and the collector each add their own Python around the same system calls (figures:
``benchmarks/README.md``, "A new session landed in one place, round 36"). So when the adapter
names the one source such a session holds (``asz_new_session``), the host lands it here, through
the descriptors of the directories it makes, with the bytes, the steps and the order
:func:`~asz_core.collect.append.collect_append` gives a session its landing made
(``SessionHandle.fresh``), and the group commit (:mod:`asz_core.root.group`) makes it durable
with the others. The steps, and the code below in the same order:

1. The session's directory is not in the root, and the pass lands in a group; else ``None``,
   and the claim goes to ``asz_land`` as always.
2. The source is read and its lines converted before anything is made, so that whatever this
   landing does not take as it is goes to ``asz_land`` with nothing made yet: a source that is
   not a regular file, one large enough to have a prover or workers of its own, one with no
   whole line, a line the dialect warns about, more than one file's worth.
3. The session's directory (``FileExistsError``: another writer made it first, ``None``), its
   lock (made here, ``O_EXCL``), ``streams/<stream>/`` (or ``runs/<run>/``) and the temporary
   file, written, read-only from its creation, not fsynced; the cursor's bytes made. From here
   a failure is the session's error, as it is in ``asz_land``.
4. The group's steps for it (:class:`NewSession`, what a ``SessionHandle`` is to the group): the
   file renamed (never replacing), the cursor's temporary copy written and renamed over the
   cursor, each after the group's ``syncfs``; then, still locked, its settled entry
   (:func:`~asz_core.root.settled.settled_entry`), its ``session.state``, the lock let go.

A kill at any instant leaves what ``asz_land``'s landing of a new session would: a directory
with its lock, a temporary file (swept by the session's next holder), a file ahead of its
cursor (brought forward from the file), or the cursor replaced whole. Each step calls the
checkpoint (:mod:`asz_core.root.faults`) the same step of ``asz_land``'s landing calls.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import os
import stat
from pathlib import Path

from asz_core.collect.append import CLOSING_ROOM, AppendSource
from asz_core.collect.lines import READ_LIMIT, LineReader
from asz_core.collect.source import converted_lines
from asz_core.collect.split import helper_cpus
from asz_core.context import AdapterContext
from asz_core.failures import describe_failure
from asz_core.plugin import SessionClaim
from asz_core.root import confined, faults
from asz_core.root.cursors import ACTIVE, AppendCursor, format_pairs
from asz_core.root.durable import DEFERRED, OWNER_DIR, OWNER_FILE, temp_name_in, write_state_copy, write_whole
from asz_core.root.group import CommitGroup
from asz_core.root.landing import LANDED_FILE, LandedFile
from asz_core.root.layout import cursor_name, file_name
from asz_core.root.settled import settled_entry
from asz_core.sessiondata.model import Header
from asz_core.sessiondata.times import format_instant
from asz_core.sessiondata.writer import FileSummary, SessionDataWriter
from asz_core.tally import SessionOutcome

__all__ = ["NewSession", "land_new_session", "new_to_root"]

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_CREATE = os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


def new_to_root(actx: AdapterContext, session: str) -> bool:
    """Step 1 (the caller lands in a group): whether ``session`` has no directory in the root."""
    if actx.dry_run:
        return False
    try:
        os.stat(session, dir_fd=actx.root.descriptor(), follow_symlinks=False)
    except FileNotFoundError:
        return True
    except OSError:  # whatever it is, ``asz_land``'s landing says it
        return False
    return False


class _Converted:
    """Step 2's result: the file's bytes and what its cursor says of the source (``end``: the
    offset after its last landed line)."""

    __slots__ = ("data", "dev", "end", "ino", "last_id", "mtime", "summary", "tail")

    def __init__(self, data: bytes, summary: FileSummary, last_id: str, dev: int, ino: int, mtime: int,
                 tail: str) -> None:
        self.data = data
        self.summary = summary
        self.end = summary.last_off + summary.last_bytes + 1
        self.last_id = last_id
        self.dev, self.ino, self.mtime = dev, ino, mtime
        self.tail = tail


def land_new_session(actx: AdapterContext, claim: SessionClaim, source: AppendSource,
                     group: CommitGroup) -> SessionOutcome | None:
    """Land ``source``, the one source of ``claim``'s session, new to the root (step 1 said so),
    in ``group``; ``None`` (nothing made) when this landing does not take it as it is."""
    root = actx.root
    header = source.header(actx.adapter_id)
    header.session, header.seq, header.at = claim.session, 1, root.at
    converted = _convert(actx, source, header)
    if converted is None:
        return None
    outcome = SessionOutcome(claim.session, settles=claim.settled_by is not None)
    outcome.counters.sources = 1
    made = _make(actx, claim, source, outcome)
    if made is None:
        return None
    try:
        made.write(converted, root.stamp)
    except Exception as exc:  # noqa: BLE001 - the session's error, as in asz_land
        made.drop_queued(exc)
        made.let_go()
        return outcome
    group.queued(made)
    group.hold(made)
    return outcome


def _convert(actx: AdapterContext, source: AppendSource, header: Header) -> _Converted | None:
    """Step 2: the source's whole lines converted into the file's bytes, or ``None``."""
    path = os.fspath(source.path)
    try:
        st = os.lstat(path)
    except OSError:
        return None
    limit = actx.max_delta_bytes
    if not stat.S_ISREG(st.st_mode) or helper_cpus(actx, st.st_size) >= 2:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        reader = LineReader(fd, 0, b"", read_limit=max(READ_LIMIT, limit), size=st.st_size)
        sink = io.BytesIO()  # the file's bytes, kept until its temporary file is made
        writer = SessionDataWriter(sink, header)
        room = limit - writer.size - CLOSING_ROOM
        warned: list[str] = []
        last_id = ""
        for line, ord_, off, size, time, record_id, _ in converted_lines(
                reader.lines(), 1, source.dialect, source.path, limit, reader.read_limit, warned.append):
            room -= len(line) + 1  # what the writer counts for it, its newline included
            if warned or room < 0:  # a warning to say, or a second file's worth: asz_land's
                return None
            writer.write(line, ord_, off, size, time)
            last_id = record_id or ""
        if warned or reader.waiting > reader.read_limit:
            return None
        summary = writer.close()
        if not summary.records:
            return None
        return _Converted(sink.getvalue(), summary, last_id, st.st_dev, st.st_ino, os.fstat(fd).st_mtime_ns,
                          reader.tail_digest(summary.last_off + summary.last_bytes + 1))
    finally:
        os.close(fd)


def _make(actx: AdapterContext, claim: SessionClaim, source: AppendSource,
          outcome: SessionOutcome) -> NewSession | None:
    """Step 3's directories and lock; ``None`` (what was opened closed) when another writer
    made the session's directory first, or put anything in it."""
    session = claim.session
    root_fd = actx.root.descriptor()
    try:
        os.mkdir(session, OWNER_DIR, dir_fd=root_fd)
    except FileExistsError:
        return None
    opened: list[int] = []  # the session's directory, its lock, then each level of the place
    try:
        opened.append(os.open(session, _DIRECTORY, dir_fd=root_fd))
        opened.append(os.open(".lock", os.O_RDWR | _CREATE, OWNER_FILE, dir_fd=opened[0]))
        fcntl.flock(opened[1], fcntl.LOCK_EX | fcntl.LOCK_NB)
        parent = opened[0]
        for name in source.subdir.split("/"):
            os.mkdir(name, OWNER_DIR, dir_fd=parent)
            parent = os.open(name, _DIRECTORY, dir_fd=parent)
            opened.append(parent)
    except OSError:
        for fd in reversed(opened):
            os.close(fd)
        return None  # ``asz_land`` takes it from here, as a session some other writer began
    for fd in opened[2:-1]:  # the directories between the session's and the file's
        os.close(fd)
    return NewSession(actx, claim, outcome, source, opened[0], opened[1], opened[-1])


class NewSession:
    """A session :func:`land_new_session` landed, to its group what a ``SessionHandle`` is:
    its file and cursor wait for the group's ``syncfs``, and it is settled and let go once they
    are durable (the steps of :mod:`asz_core.root.group`, in its rules' order)."""

    def __init__(self, actx: AdapterContext, claim: SessionClaim, outcome: SessionOutcome, source: AppendSource,
                 session_fd: int, lock_fd: int, place_fd: int) -> None:
        self.outcome = outcome
        self.queued = False  #: in its group's list of sessions with steps waiting
        self.queued_files: list[str] = []  #: the temporary file, until it is renamed
        self._actx = actx
        self._claim = claim
        self._session = claim.session
        self._source = source
        self._session_fd, self._lock_fd, self._place_fd = session_fd, lock_fd, place_fd
        self._name = ""
        self._cursor = b""
        self._cursor_temp: str | None = None
        self._dir_text = f"{os.fspath(actx.root.path)}{os.sep}{claim.session}"
        #: the cursor's path, as the session would join it for its collector
        self._cursor_text = f"{self._dir_text}{os.sep}{source.subdir}{os.sep}{cursor_name(source.kind)}"

    def write(self, converted: _Converted, stamp: str) -> None:
        """Step 3's file and cursor: the temporary file written (read-only from its creation),
        the file it will be named, the cursor's bytes."""
        source = self._source
        self._name = name = file_name(source.kind, stamp, 1)
        temp = os.path.basename(temp_name_in(self._dir_text, name))
        fd = os.open(temp, os.O_WRONLY | _CREATE, LANDED_FILE, dir_fd=self._place_fd)
        self.queued_files.append(temp)
        try:
            for _ in range(converted.summary.records):  # asz_land's landing file reaches it a record
                faults.checkpoint("temp-write")
            write_whole(fd, converted.data)
            faults.checkpoint("temp-readonly")
        finally:
            os.close(fd)
        summary, end = converted.summary, converted.end
        self.outcome.landed.append(LandedFile(
            path=Path(f"{self._dir_text}{os.sep}{source.subdir}{os.sep}{name}"),
            relpath=f"{self._session}/{source.subdir}/{name}", session=self._session, kind=source.kind, seq=1,
            stream=source.stream, batch=source.batch, summary=summary))
        cursor = AppendCursor(source=source.src, state=ACTIVE, dev=converted.dev, ino=converted.ino, size=end,
                              mtime=converted.mtime, last_seq=1, updated_at=format_instant(self._actx.now_ns()),
                              offset=end, ord=summary.last_ord, last_uuid=converted.last_id,
                              tail_sha256=converted.tail)
        self._cursor = cursor.encode()

    # the group's steps (:mod:`asz_core.root.group`, rule 2: b, c, d's checkpoints, e; then rule 4)

    def install_queued(self) -> bool:
        """Rename the durable temporary file to its name, never replacing one."""
        try:
            for temp in self.queued_files:
                faults.checkpoint("install")
                confined.rename_noreplace_at(self._place_fd, temp, self._name)
            self.queued_files.clear()
        except OSError as exc:
            self.drop_queued(exc)
            return False
        return True

    def write_queued_states(self) -> bool:
        """Write the cursor's temporary copy (the group's ``syncfs`` follows)."""
        name = cursor_name(self._source.kind)
        try:
            temp = os.path.basename(temp_name_in(self._dir_text, name))
            fd = os.open(temp, os.O_WRONLY | _CREATE, OWNER_FILE, dir_fd=self._place_fd)
            self._cursor_temp = temp
            write_state_copy(fd, self._cursor)
        except OSError as exc:
            self.drop_queued(exc)
            return False
        return True

    def checkpoint_dirs(self) -> None:
        """The one directory whose new name the group's second ``syncfs`` makes durable."""
        faults.checkpoint("dir-fsync")

    def move_queued_states(self) -> None:
        """Rename the durable cursor copy over the cursor."""
        temp, self._cursor_temp = self._cursor_temp, None
        if temp is None:
            return
        try:
            faults.checkpoint("state-rename")
            os.replace(temp, cursor_name(self._source.kind), src_dir_fd=self._place_fd, dst_dir_fd=self._place_fd)
        except OSError as exc:
            self._cursor_temp = temp
            self.drop_queued(exc)
            return
        # what the settled entry reads there is what was written (no read back), while it is held
        DEFERRED[self._cursor_text] = self._cursor

    def drop_queued(self, exc: BaseException) -> None:
        """Remove what is left of its steps; ``exc`` is the session's error."""
        for temp in (*self.queued_files, self._cursor_temp):
            if temp is not None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(temp, dir_fd=self._place_fd)
        self.queued_files.clear()
        self._cursor_temp = None
        self.outcome.error(describe_failure(exc))

    def release_after_commit(self) -> None:
        """Its steps are durable or dropped: its settled entry, its ``session.state``, the
        lock let go."""
        try:
            settled_by = self._claim.settled_by
            if self.outcome.settles and self.outcome.settled_now and settled_by:
                sep = os.sep
                cursors = [(s, f"{self._dir_text}{sep}{s.subdir}{sep}{cursor_name(s.kind)}") for s in settled_by]
                written = self._cursor_text
                counters = self.outcome.counters
                try:  # as land._entry makes it: each cursor named as the session would join it
                    self.outcome.settled = settled_entry(
                        Path(self._dir_text), [(s.source, Path(path), s.append) for s, path in cursors],
                        {"sources": counters.sources, "gone": counters.gone}, [written])
                except Exception as exc:  # noqa: BLE001 - as the landing's own failure would be
                    self.outcome.error(describe_failure(exc))
        finally:
            self.let_go()

    def let_go(self) -> None:
        """The session's ``session.state`` (once a file landed), its descriptors and lock."""
        DEFERRED.pop(self._cursor_text, None)
        try:
            if self.outcome.landed:  # as asz_land's: once a file landed, whatever befell it
                fd = os.open("session.state", os.O_WRONLY | _CREATE, OWNER_FILE, dir_fd=self._session_fd)
                try:
                    write_whole(fd, format_pairs([("next_seq", 2), ("updated_at", self._actx.root.at)]))
                finally:
                    os.close(fd)
        finally:
            os.close(self._place_fd)
            os.close(self._session_fd)
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
