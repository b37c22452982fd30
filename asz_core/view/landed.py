"""A session's landed files as the document needs them, each read once.

For every landed file, by seq: its ``files`` entry (path on the wire, format ``sd``, kind from its
header, ``seq``, ``stream`` or ``run``, ``lines``, ``bytes``, ``digest`` of its bytes, and the time
range of its records in milliseconds, null when none carries a time); the time of each record
(nanoseconds, by ``(seq, row)``) and the lane it sits in, which order the document's lists; and
every record, kept for the nodes that stand on it. A ``provider_body`` file's records are read
for their times only: a body is never in the document. A file that stops reading part way gives
the records before the fault; its entry is still listed, as it is on disk.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from asz_core.root.durable import read_bytes
from asz_core.sessiondata.errors import SessionDataError
from asz_core.sessiondata.model import Record
from asz_core.sessiondata.reader import open_file
from asz_core.sessiondata.times import parse_instant
from asz_core.view.files import PROVIDER_BODY, session_files

__all__ = ["Landed", "millis", "read_landed"]

Position = tuple[int, int]


def millis(nanos: int) -> int:
    """Unix milliseconds, rounded down."""
    return nanos // 1_000_000


@dataclass
class Landed:
    files: list[dict[str, Any]] = field(default_factory=list)
    digests: dict[int, str] = field(default_factory=dict)
    kinds: dict[int, str] = field(default_factory=dict)
    paths: dict[int, Path] = field(default_factory=dict)
    #: the lane (stream or run) of each seq
    lanes: dict[int, str] = field(default_factory=dict)
    #: record time in nanoseconds, for records that carry one
    times: dict[Position, int] = field(default_factory=dict)
    records: dict[Position, Record] = field(default_factory=dict)

    def time(self, seq: int, row: int) -> int:
        return self.times.get((seq, row), 0)

    def record(self, seq: int, row: int) -> Record | None:
        return self.records.get((seq, row))

    def of_kind(self, kind: str) -> list[int]:
        return [seq for seq, k in self.kinds.items() if k == kind]


def read_landed(root: Path, session: str) -> Landed:
    out = Landed()
    for lf in session_files(root / session):
        data = read_bytes(lf.path)
        digest = hashlib.sha256(data).hexdigest()
        stream = lf.owner if lf.group == "streams" else None
        run = lf.owner if lf.group == "runs" else None
        kind = _header_kind(lf.path, data) or lf.kind
        lo = hi = 0
        for row, nanos, record in _records(lf.path, data, kind):
            if nanos is not None:
                out.times[(lf.seq, row)] = nanos
                lo = nanos if lo == 0 or nanos < lo else lo
                hi = max(hi, nanos)
            if record is not None:
                out.records[(lf.seq, row)] = record
        out.digests[lf.seq], out.kinds[lf.seq], out.paths[lf.seq] = digest, kind, lf.path
        out.lanes[lf.seq] = stream or run or ""
        out.files.append({
            "file": lf.rel, "format": "sd", "kind": kind, "seq": lf.seq, "round": None,
            "stream": stream, "run": run, "lines": data.count(b"\n"), "bytes": len(data), "digest": digest,
            "from_time": millis(lo) if lo else None, "through_time": millis(hi) if hi else None,
        })
    return out


def _header_kind(path: Path, data: bytes) -> str | None:
    if path.suffix == ".sk":
        try:
            with open_file(path, data=data) as landed:
                kind = landed.header.get("kind")
        except SessionDataError:
            return None
    else:
        try:
            kind = orjson.loads(data[:data.find(b"\n")]).get("kind")
        except (orjson.JSONDecodeError, AttributeError):
            return None
    return kind if isinstance(kind, str) and kind else None


def _records(path: Path, data: bytes, kind: str) -> Iterator[tuple[int, int | None, Record | None]]:
    """``(row, time, record)`` of every record that reads. A provider body's record gives its time
    only: it is never in the document, and decoding its pieces is most of the cost of reading it."""
    if kind == PROVIDER_BODY and path.suffix != ".sk":
        lines = data.split(b"\n")[1:-2]  # after the header; before the closing line and the end
        for row, line in enumerate(lines, start=1):
            try:
                value = orjson.loads(line)
            except orjson.JSONDecodeError:
                return
            yield row, parse_instant(value.get("time") if isinstance(value, dict) else None), None
        return
    try:
        with open_file(path, data=data) as landed:  # the bytes read once, for the digest too
            for row, record in enumerate(landed, start=1):
                yield row, parse_instant(record.time), record
    except SessionDataError:
        return  # what read stays; verify names the fault
