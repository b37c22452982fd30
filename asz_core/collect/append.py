"""Collecting a source that only grows by whole lines (a transcript, a journal, an event log).

Each pass, per source (upstream's ``formats/storage-root.md``, "Append cursors"):

* the file is gone → the cursor says ``source_gone``; what landed stays;
* it is shorter than the cursor's offset → ``conflict`` (truncated);
* same size, same inode → nothing to read (mtime is never trusted);
* the ≤ 1 MiB before the offset no longer hashes to ``tail_sha256`` → ``conflict`` (rewritten).
  A new inode alone is not a conflict: the tail decides;
* otherwise the lines after the offset land, in files that end before a record that would take
  them past ``max_delta_bytes`` (as written). An unterminated last line is a write in progress and
  waits (counted ``waiting`` once longer than a line is read whole). A single record too large
  for a file lands alone, reduced; a line longer than 64 MiB (or ``max_delta_bytes``) is never
  held, and lands as its size and digest; a record that cannot be encoded lands as a line that
  does not decode. At most :data:`~asz_core.context.MAX_WINDOWS` files land per source per pass;
  the rest is pending.

A conflict is sticky: nothing more lands from the source, and every pass counts it, until a
person acts: the landed bytes are put back, or the rewrite is accepted as a new version
(``asz-pipeline conflicts --accept``), which then lands from its first byte in a place of its own
(:mod:`asz_core.collect.versions`). The cursor moves only after the file it covers has landed; a
cursor that lags (a crash between the two) is brought forward from the landed files before
reading, so no line lands twice.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections import deque
from collections.abc import Generator, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

import orjson
from mypy_extensions import mypyc_attr

from asz_core.collect.lines import READ_LIMIT, TAIL_BYTES, LineReader, TooLong
from asz_core.collect.prove import proved_lines, proves
from asz_core.collect.saving import save_state, stat_source
from asz_core.collect.source import Encoded, LineDialect, LineProof, converted_lines, line_sha, made_to_fit
from asz_core.collect.split import SplitDialect, SplitRecords, split_records, split_workers
from asz_core.collect.versions import current_place, stream_of
from asz_core.context import MAX_WINDOWS, AdapterContext
from asz_core.root.cursors import ACTIVE, CONFLICT, AppendCursor
from asz_core.root.durable import open_landed
from asz_core.root.landing import LandingFile
from asz_core.root.layout import cursor_name, parse_file_name
from asz_core.root.storage import SessionHandle, landed_files_in
from asz_core.sessiondata.errors import SessionDataError
from asz_core.sessiondata.model import Header, Record

__all__ = ["ACCEPT_HINT", "TAIL_BYTES", "AppendSource", "collect_append", "cursor_path", "landed_ord"]

#: what a conflict's warning says a person can do
ACCEPT_HINT: Final = ("nothing more lands from it until its landed bytes are back, or until "
               "`asz-pipeline conflicts --accept` takes the rewritten file as a new version")

#: Room a closing line takes (``{"t":"end","records":N,"digest":<64 hex>}`` and a newline).
CLOSING_ROOM: Final = 128
#: Room a header's seq and landing time take at most, beyond what its source says.
HEADER_ROOM: Final = 128


@mypyc_attr(native_class=False)  # compiled, a plain class: its instances pickle, frozen or not
@dataclass
class AppendSource:
    """One append-only source of a session, and where its files land."""

    path: Path           #: the source file
    src: str             #: relative to the adapter's source root, forward slashes
    subdir: str          #: under the session: ``streams/<stream>`` or ``runs/<run>``
    kind: str            #: ``transcript``, ``journal``, ...
    dialect: LineDialect
    stream: str | None = None
    batch: str | None = None

    def header(self, adapter: str) -> Header:
        return Header(kind=self.kind, session="", src=self.src, dialect=self.dialect.name,
                      adapter=adapter, stream=self.stream, batch=self.batch)


def cursor_path(session: SessionHandle, subdir: str, kind: str) -> Path:
    """The cursor of ``kind`` in the place ``subdir`` of the held ``session``."""
    return session.path(subdir, cursor_name(kind))


def landed_ord(session: SessionHandle, subdir: str, kind: str, *, dry_run: bool) -> int:
    """How far the source of ``kind`` in ``subdir`` has landed, this pass included: its cursor's
    ordinal, or in a dry run (no cursor is written) the last ordinal of the files the pass would
    have landed. A line converted but not landed (the pass stopped at its window) is past it."""
    cursor = AppendCursor.load(cursor_path(session, subdir, kind))
    landed = cursor.ord if cursor is not None else 0
    if dry_run:
        directory = session.path(subdir)
        for file in session.landed:
            if file.kind == kind and file.path.parent == directory:
                landed = max(landed, file.summary.last_ord)
    return landed


def _bytes_before(fd: int, offset: int) -> bytes:
    """The ≤ :data:`TAIL_BYTES` of the source before ``offset``: what the tail digest covers."""
    start = max(0, offset - TAIL_BYTES)
    return _read_at(fd, start, offset - start)


def _read_at(fd: int, offset: int, size: int) -> bytes:
    """``size`` bytes of the file from ``offset`` (fewer at its end): one ``pread`` may return
    less than asked."""
    chunks = []
    while size > 0:
        chunk = os.pread(fd, size, offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
        size -= len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _tail_digest(fd: int, offset: int) -> str:
    return hashlib.sha256(_bytes_before(fd, offset)).hexdigest()


def collect_append(ctx: AdapterContext, session: SessionHandle, source: AppendSource) -> None:
    """Land what is new in ``source`` into ``session``, by the append-cursor rules."""
    counters = ctx.counters
    place = current_place(ctx, session, source.subdir, source.kind, AppendCursor)
    if place.broken:
        counters.conflicts += 1
        ctx.warn(f"{place.broken}; {ACCEPT_HINT}")
        return
    if place.subdir != source.subdir:  # an accepted rewrite: it lands on in its version's place
        source = replace(source, subdir=place.subdir, stream=stream_of(place.subdir, source.stream))
    path, cursor = place.path, place.cursor
    st = stat_source(ctx, session, cursor, path, source.path)
    if st is None:
        return
    # nothing of it has landed in a session its landing made, unless it wrote the place's cursor
    first = cursor is None and session.fresh
    if cursor is None:
        cursor = AppendCursor(source=source.src)
    if cursor.state == ACTIVE and st.st_size == cursor.offset and (st.st_dev, st.st_ino) == (cursor.dev, cursor.ino):
        return  # nothing new, and the cheapest pass is a stat
    try:
        # a descriptor, read with ``pread``: a file object would add an fstat, an ``isatty``
        # ioctl, an ``lseek`` and a buffer to each source
        fd = os.open(source.path, os.O_RDONLY)
    except OSError as exc:
        counters.unreadable += 1
        ctx.warn(f"cannot open {source.path}: {exc.strerror or exc}")
        return
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # replaced since the lstat (``open`` said so itself)
            counters.unreadable += 1
            ctx.warn(f"cannot open {source.path}: it is no longer a regular file")
            return
        reconciled = cursor if first else _reconcile(session, source, cursor, fd, st.st_size)
        if reconciled is None:
            if cursor.state != CONFLICT:  # kept so, as any conflict, for `conflicts` to list
                cursor.state = CONFLICT
                save_state(ctx, session, cursor, path)
            counters.conflicts += 1
            ctx.warn(f"{source.path}: the bytes of its last landed record changed; {ACCEPT_HINT}")
            return
        cursor = reconciled
        before = _bytes_before(fd, cursor.offset) if st.st_size >= cursor.offset else b""
        verdict = _check(cursor, before, st.st_size)
        if verdict is not None:
            if cursor.state != CONFLICT:
                cursor.state = CONFLICT
                save_state(ctx, session, cursor, path)
            counters.conflicts += 1
            ctx.warn(f"{source.path}: {verdict}; {ACCEPT_HINT}")
            return
        changed = cursor.state != ACTIVE or (cursor.dev, cursor.ino) != (st.st_dev, st.st_ino)
        cursor.state, cursor.dev, cursor.ino = ACTIVE, st.st_dev, st.st_ino
        landed_any = _land_windows(ctx, session, source, cursor, path, fd, before, st.st_size)
        if changed and not landed_any and cursor.offset:
            save_state(ctx, session, cursor, path)  # a new inode with the same bytes, or a conflict cleared
    finally:
        os.close(fd)


def _check(cursor: AppendCursor, before: bytes, size: int) -> str | None:
    """Why the source no longer holds what landed (``before``: its bytes before the cursor),
    or ``None`` when it does."""
    if size < cursor.offset:
        return f"it is shorter ({size} bytes) than what landed ({cursor.offset} bytes): truncated"
    if cursor.offset and hashlib.sha256(before).hexdigest() != cursor.tail_sha256:
        return "the bytes before its cursor changed: rewritten in place"
    return None


def _reconcile(session: SessionHandle, source: AppendSource, cursor: AppendCursor,
               fd: int, size: int) -> AppendCursor | None:
    """Bring a lagging cursor forward from files that landed after it (a crash between landing
    and the cursor write). ``None`` if the source no longer holds the landed record."""
    newest = _newest_after(session.path(source.subdir), source.kind, cursor.last_seq)
    if newest is None:
        return cursor
    seq, landed = newest
    last: Record | None = None
    try:
        with open_landed(landed) as reader:  # a link at its name: the session is refused
            if reader.header.get("src") != source.src:
                return cursor
            for record in reader:
                last = record
    except SessionDataError:
        return cursor  # not ours to trust; verify reports it
    if last is None:
        return cursor
    end = last.off + last.bytes
    if end + 1 > size:
        return None
    if line_sha(_read_at(fd, last.off, last.bytes)) != (last.sha or "")[:12]:
        return None
    cursor.offset, cursor.ord, cursor.last_seq = end + 1, last.ord, seq
    cursor.last_uuid = last.id or ""
    cursor.tail_sha256 = _tail_digest(fd, cursor.offset)
    return cursor


def _newest_after(directory: Path, kind: str, after_seq: int) -> tuple[int, Path] | None:
    """The landed file of ``kind`` in ``directory`` with the highest seq above ``after_seq``
    (a link is no landed file: see :func:`~asz_core.root.storage.landed_files`)."""
    best: tuple[int, Path] | None = None
    for seq, landed in landed_files_in(directory):
        parsed = parse_file_name(landed.name)
        if (parsed and not parsed.skeleton and parsed.kind == kind and seq > after_seq
                and (best is None or seq > best[0])):
            best = (seq, landed)
    return best


def _land_windows(ctx: AdapterContext, session: SessionHandle, source: AppendSource,
                  cursor: AppendCursor, path: Path, fd: int, before: bytes, size: int) -> bool:
    """Land the new lines in files of at most ``max_delta_bytes``; True if any landed.
    ``before`` is the source's bytes before the cursor, which the tail digest may cover;
    ``size`` the source's size. A source with much to land may have its lines converted in
    worker processes (:mod:`asz_core.collect.split`), or digested and proved in one
    (:mod:`asz_core.collect.prove`): the same records, in the same order."""
    limit = ctx.max_delta_bytes
    reader = LineReader(fd, cursor.offset, before, read_limit=max(READ_LIMIT, limit), size=size)
    del before
    workers = split_workers(ctx, source.dialect, size - cursor.offset)
    split: SplitRecords | None = None
    prover: Generator[Any, None, None] | None = None  #: one beside the pass (:mod:`.prove`), ended here
    if workers and isinstance(source.dialect, SplitDialect):  # much to land: converted in workers
        header = source.header(ctx.adapter_id)
        header.session = session.id
        whole_above = limit - CLOSING_ROOM - HEADER_ROOM - len(orjson.dumps(header.to_json()))
        split = split_records(reader, cursor.offset, cursor.ord, source.dialect, source.path, limit, ctx.warn,
                              workers, whole_above)
        lines: Iterator[Encoded] = iter(())
    else:
        read: Iterator[tuple[bytes | TooLong, int]] = reader.lines()
        proofs: deque[LineProof] | None = None  #: each line's, as the prover put it there
        if proves(ctx, size - cursor.offset):  # much to land, no split: digested and proved beside
            proofs = deque()
            read, prover = proved_lines(reader, cursor.offset, proofs)
        lines = converted_lines(read, cursor.ord + 1, source.dialect, source.path, limit,
                                reader.read_limit, ctx.warn, proofs)
    pending = next(lines, None)
    windows = 0
    try:
        while pending is not None or (split is not None and split.more):
            if windows == MAX_WINDOWS:
                ctx.counters.pending += 1
                break
            landing = session.begin(source.subdir, source.header(ctx.adapter_id))
            try:
                if split is not None:  # a chunk's records that fit at a time
                    last_id = split.fill(landing, limit - landing.writer.size - CLOSING_ROOM)
                else:
                    assert pending is not None
                    pending, last_id = _fill(landing, pending, lines, limit)
                landed = session.commit(landing)
            except BaseException:
                landing.abort()
                raise
            windows += 1
            cursor.offset = landed.summary.last_off + landed.summary.last_bytes + 1
            cursor.ord = landed.summary.last_ord
            cursor.last_seq = landed.seq
            cursor.last_uuid = last_id
    finally:
        if split is not None:
            split.close()  # its workers end now, not when it is collected
        if prover is not None:
            prover.close()  # and so does a prover
    if reader.waiting > reader.read_limit:
        # A last line with no newline yet is a write in progress; one this long is more likely
        # a writer that died, and it is looked through (never held) on every pass until it ends.
        ctx.counters.waiting += 1
        ctx.warn(f"{source.path}: its last line has no newline after {reader.waiting} bytes; it lands as "
                 f"its size and digest once it ends, and is looked for every pass until then")
    if windows:
        # One cursor write for all of this pass's files: a crash before it only makes the
        # cursor lag, and the next pass brings it forward from the files (``_reconcile``).
        cursor.tail_sha256 = reader.tail_digest(cursor.offset)
        cursor.size = max(cursor.size, cursor.offset)
        cursor.mtime = os.fstat(fd).st_mtime_ns
        save_state(ctx, session, cursor, path)
    return windows > 0


def _fill(landing: LandingFile, first: Encoded, lines: Iterator[Encoded],
          limit: int) -> tuple[Encoded | None, str]:
    """Write records into ``landing`` until the next would not fit.

    Returns that next record (``None`` at the end) and the id of the last record written.
    """
    room = limit - landing.writer.size - CLOSING_ROOM
    line, ord_, off, size, time, last_id, _ = first
    write = landing.write
    if len(line) + 1 > room:  # alone in its file, made to fit
        write(*made_to_fit(first, room - 1)[:5])
        return next(lines, None), last_id or ""
    write(line, ord_, off, size, time)
    room -= len(line) + 1  # what the writer counts for it, its newline included
    for following in lines:  # taken by the loop, not by a call to ``next`` a record
        line, ord_, off, size, time, record_id, _ = following
        if len(line) + 1 > room:
            return following, last_id or ""
        write(line, ord_, off, size, time)
        room -= len(line) + 1
        last_id = record_id
    return None, last_id or ""
