"""Collecting a document rewritten in place (a sidecar, a manifest, a metadata file).

A document is one record (``ord`` 1, ``off`` 0, ``bytes``/``sha`` over the whole document). Each
new version — a new digest of the content with trailing newlines trimmed — lands whole as a new
one-record file. While the file's size, mtime and inode are unchanged it is not read at all.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from asz_core.collect.append import cursor_path
from asz_core.collect.saving import save_state, stat_source
from asz_core.collect.source import LineDialect, SourceLine, convert_line, line_sha
from asz_core.context import AdapterContext
from asz_core.root.cursors import ACTIVE, SnapshotCursor
from asz_core.root.layout import parse_file_name
from asz_core.root.storage import SessionHandle
from asz_core.sessiondata.errors import SessionDataError
from asz_core.sessiondata.model import Header
from asz_core.sessiondata.reader import open_file
from asz_core.sessiondata.reduce import reduce_to_fit
from asz_core.sessiondata.writer import encode_record

__all__ = ["SnapshotSource", "collect_snapshot"]

_CLOSING_ROOM = 128


@dataclass
class SnapshotSource:
    """One document of a session, and where its versions land."""

    path: Path
    src: str
    subdir: str
    kind: str
    dialect: LineDialect
    stream: str | None = None
    batch: str | None = None


def _content_digest(document: bytes) -> str:
    return hashlib.sha256(document.rstrip(b"\r\n")).hexdigest()


def collect_snapshot(ctx: AdapterContext, session: SessionHandle, source: SnapshotSource) -> None:
    """Land ``source`` again if its content changed since the version that last landed."""
    counters = ctx.counters
    path = cursor_path(session, source.subdir, source.kind)
    cursor = SnapshotCursor.load(path)
    st = stat_source(ctx, session, cursor, path, source.path)
    if st is None:
        return
    if cursor is None:
        cursor = SnapshotCursor(source=source.src)
    elif (cursor.state == ACTIVE and (cursor.size, cursor.mtime, cursor.ino, cursor.dev)
          == (st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)):
        return
    try:
        document = source.path.read_bytes()
    except OSError as exc:
        counters.unreadable += 1
        ctx.warn(f"cannot read {source.path}: {exc.strerror or exc}")
        return
    digest = _content_digest(document)
    cursor.state, cursor.size, cursor.mtime = ACTIVE, st.st_size, st.st_mtime_ns
    cursor.ino, cursor.dev = st.st_ino, st.st_dev
    if digest != cursor.content_sha256:
        adopted = _landed_after(session, source, cursor.last_seq, document)
        if adopted is not None:
            cursor.last_seq = adopted
        else:
            cursor.last_seq = _land(ctx, session, source, document)
        cursor.content_sha256 = digest
    save_state(ctx, session, cursor, path)


def _land(ctx: AdapterContext, session: SessionHandle, source: SnapshotSource, document: bytes) -> int:
    line = SourceLine(document, 1, 0)
    record = convert_line(source.dialect, line)
    record.ord, record.off, record.bytes, record.sha = 1, 0, len(document), line_sha(document)
    header = Header(kind=source.kind, session="", src=source.src, dialect=source.dialect.name,
                    adapter=ctx.adapter_id, stream=source.stream, batch=source.batch)
    landing = session.begin(source.subdir, header)
    try:
        room = ctx.max_delta_bytes - landing.writer.size - _CLOSING_ROOM - 1
        encoded = encode_record(record)
        if len(encoded) > room:
            record, encoded = reduce_to_fit(record, room)
        landing.write(record, encoded)
        return session.commit(landing).seq
    except BaseException:
        landing.abort()
        raise


def _landed_after(session: SessionHandle, source: SnapshotSource, after_seq: int,
                  document: bytes) -> int | None:
    """The seq of a file that already holds this version (landed before a crash lost the
    cursor write), so it does not land twice."""
    directory = session.path(source.subdir)
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return None
    candidates = []
    for name in names:
        parsed = parse_file_name(name)
        if parsed and not parsed.skeleton and parsed.kind == source.kind and parsed.seq > after_seq:
            candidates.append((parsed.seq, directory / name))
    if not candidates:
        return None
    seq, newest = max(candidates)
    sha = line_sha(document)
    try:
        with open_file(newest) as reader:
            if reader.header.get("src") != source.src:
                return None
            records = list(reader)
    except SessionDataError:
        return None
    if len(records) == 1 and records[0].sha == sha and records[0].bytes == len(document):
        return seq
    return None

