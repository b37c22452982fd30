"""Collecting a document rewritten in place (a sidecar, a manifest, a metadata file).

A document is one record (``ord`` 1, ``off`` 0). Its payload is the file with every trailing
``\n`` and ``\r`` trimmed, as upstream trims it: ``bytes``, ``sha``, the content digest and
the record are all of that payload, and a document that is empty once trimmed lands nothing.
Each new version (a new content digest) lands whole as a new one-record file. While the file's
size, mtime and inode are unchanged it is not read at all. A document longer than a line may be
to be read whole (:data:`~asz_core.collect.lines.READ_LIMIT`) lands as its size and digest.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from asz_core.collect.append import cursor_path
from asz_core.collect.lines import READ_LIMIT, TooLong, digest_span
from asz_core.collect.saving import load_cursor, save_state, stat_source
from asz_core.collect.source import LineDialect, SourceLine, convert_encoded, line_sha, made_to_fit, too_long_record
from asz_core.context import AdapterContext
from asz_core.root.cursors import ACTIVE, SnapshotCursor
from asz_core.root.durable import open_landed
from asz_core.root.layout import parse_file_name
from asz_core.root.storage import SessionHandle, landed_files_in
from asz_core.sessiondata.errors import SessionDataError
from asz_core.sessiondata.model import Header

__all__ = ["SnapshotSource", "collect_snapshot", "document_payload"]

_CLOSING_ROOM = 128


class SnapshotSource:
    """One document of a session, and where its versions land. A plain class
    (docs/architecture.md, "Classes a pass imports")."""

    __slots__ = ("batch", "dialect", "kind", "path", "src", "stream", "subdir")

    def __init__(self, path: Path, src: str, subdir: str, kind: str, dialect: LineDialect,
                 stream: str | None = None, batch: str | None = None) -> None:
        self.path = path
        self.src = src
        self.subdir = subdir
        self.kind = kind
        self.dialect = dialect
        self.stream = stream
        self.batch = batch


def document_payload(document: bytes) -> bytes:
    """What lands of a document: its bytes without any trailing ``\n`` or ``\r``."""
    return document.rstrip(b"\r\n")


def collect_snapshot(ctx: AdapterContext, session: SessionHandle, source: SnapshotSource) -> None:
    """Land ``source`` again if its content changed since the version that last landed."""
    counters = ctx.counters
    path = cursor_path(session, source.subdir, source.kind)
    cursor = load_cursor(ctx, SnapshotCursor, path)
    st = stat_source(ctx, session, cursor, path, source.path)
    if st is None:
        return
    if cursor is None:
        cursor = SnapshotCursor(source=source.src)
    elif (cursor.state == ACTIVE and (cursor.size, cursor.mtime, cursor.ino, cursor.dev)
          == (st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)):
        return
    limit = max(READ_LIMIT, ctx.max_delta_bytes)
    try:
        document = _read_payload(source.path, st.st_size, limit)
    except OSError as exc:
        counters.unreadable += 1
        ctx.warn(f"cannot read {source.path}: {exc.strerror or exc}")
        return
    if not document:
        return  # nothing to land yet; read again next pass (an empty file costs a stat and a read)
    digest = document.sha256 if isinstance(document, TooLong) else hashlib.sha256(document).hexdigest()
    cursor.state, cursor.size, cursor.mtime = ACTIVE, st.st_size, st.st_mtime_ns
    cursor.ino, cursor.dev = st.st_ino, st.st_dev
    if digest != cursor.content_sha256:
        adopted = _landed_after(session, source, cursor.last_seq, document)
        if adopted is not None:
            cursor.last_seq = adopted
        else:
            cursor.last_seq = _land(ctx, session, source, document, limit)
        cursor.content_sha256 = digest
    save_state(ctx, session, cursor, path)


def _read_payload(path: Path, size: int, limit: int) -> bytes | TooLong:
    """The document's payload (:func:`document_payload`); one longer than ``limit`` as its size
    and digest, streamed and never held."""
    if size <= limit:
        return document_payload(path.read_bytes())
    fd = os.open(path, os.O_RDONLY)
    try:
        end = os.fstat(fd).st_size
        while end > 0:  # trailing line breaks, looked at from the end a block at a time
            block = os.pread(fd, min(end, 1 << 16), end - min(end, 1 << 16))
            kept = len(block.rstrip(b"\r\n"))
            end -= len(block) - kept
            if kept:
                break
        if end <= limit:
            return os.pread(fd, end, 0)
        return TooLong(end, digest_span(fd, 0, end))
    finally:
        os.close(fd)


def _land(ctx: AdapterContext, session: SessionHandle, source: SnapshotSource, document: bytes | TooLong,
          limit: int) -> int:
    """Land the payload ``document`` as a new one-record file; its seq."""
    if isinstance(document, TooLong):
        encoded, reason = too_long_record(document, 1, 0, limit)
        ctx.warn(f"{source.path}: {reason}")
    else:
        encoded, why = convert_encoded(source.dialect, SourceLine(document, 1, 0), ctx.max_delta_bytes)
        if why is not None:
            ctx.warn(f"{source.path}: {why}; it lands as a document that does not decode, its bytes kept whole")
    header = Header(kind=source.kind, session="", src=source.src, dialect=source.dialect.name,
                    adapter=ctx.adapter_id, stream=source.stream, batch=source.batch)
    landing = session.begin(source.subdir, header)
    try:
        room = ctx.max_delta_bytes - landing.writer.size - _CLOSING_ROOM - 1
        landing.write(*made_to_fit(encoded, room)[:5])
        return session.commit(landing).seq
    except BaseException:
        landing.abort()
        raise


def _landed_after(session: SessionHandle, source: SnapshotSource, after_seq: int,
                  document: bytes | TooLong) -> int | None:
    """The seq of a file that already holds this version (landed before a crash lost the
    cursor write), so it does not land twice."""
    candidates = []
    for seq, landed in landed_files_in(session.path(source.subdir)):  # a link is no landed file
        parsed = parse_file_name(landed.name)
        if parsed and not parsed.skeleton and parsed.kind == source.kind and seq > after_seq:
            candidates.append((seq, landed))
    if not candidates:
        return None
    seq, newest = max(candidates)
    sha, size = ((document.sha256[:12], document.size) if isinstance(document, TooLong)
                 else (line_sha(document), len(document)))
    try:
        with open_landed(newest) as reader:  # a link at its name: the session is refused
            if reader.header.get("src") != source.src:
                return None
            records = list(reader)
    except SessionDataError:
        return None
    if len(records) == 1 and records[0].sha == sha and records[0].bytes == size:
        return seq
    return None

