"""A session's landed files as the view lists them, read one record at a time.

Every landed file of the session, by seq; where a skeleton (``.sk``) stands beside its landed
file (a removal in progress), the landed file is read. Each file is read once, streaming: its
records go to the caller as they are decoded, and what the document says about the file (record
lines, time range, whether it read to a good closing line) is filled in as it goes. Its size and
digest come from the file's bytes, the digest a round's ``input_digest`` binds.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from asz_core.root.durable import open_landed, open_read
from asz_core.root.layout import parse_file_name
from asz_core.root.storage import landed_files
from asz_core.sessiondata.errors import SessionDataError
from asz_core.sessiondata.model import Record
from asz_core.sessiondata.times import parse_instant

__all__ = ["PROVIDER_BODY", "LandedFile", "session_files"]

PROVIDER_BODY = "provider_body"


@dataclass
class LandedFile:
    """One landed file of a session and what reading it found."""

    seq: int
    path: Path
    rel: str                 #: root-relative path, forward slashes
    kind: str
    group: str               #: ``streams``, ``runs`` or ``provider_body``
    owner: str | None        #: the stream or run the file is under (``None`` for provider bodies)
    skeleton: bool
    lines: int = 0
    batch: str | None = None
    problem: str | None = None
    _first: tuple[int, str] | None = None
    _last: tuple[int, str] | None = None

    def records(self) -> Iterator[tuple[int, Record]]:
        """``(row, record)`` of every record, in order. A file that does not read to a good
        closing line stops there, and says why in :attr:`problem`."""
        try:
            with open_landed(self.path) as landed:
                batch = landed.header.get("batch")
                self.batch = batch if isinstance(batch, str) else None
                for row, record in enumerate(landed, start=1):
                    self.lines = row
                    self._saw_time(record.time)
                    yield row, record
        except SessionDataError as exc:
            self.problem = str(exc)

    def _saw_time(self, text: str | None) -> None:
        nanos = parse_instant(text)
        if nanos is None or text is None:
            return
        if self._first is None or nanos < self._first[0]:
            self._first = (nanos, text)
        if self._last is None or nanos > self._last[0]:
            self._last = (nanos, text)

    @property
    def first_time(self) -> tuple[int, str] | None:
        return self._first

    @property
    def last_time(self) -> tuple[int, str] | None:
        return self._last

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.rel, "kind": self.kind, "seq": self.seq}
        if self.group == "streams" and self.owner is not None:
            out["stream"] = self.owner
        if self.batch is not None:
            out["batch"] = self.batch
        out["lines"] = self.lines
        size, digest = _size_and_digest(self.path)
        out["bytes"] = size
        out["digest"] = digest
        if self._first is not None and self._last is not None:
            out["from_time"] = self._first[1]
            out["through_time"] = self._last[1]
        if self.skeleton:
            out["skeleton"] = True
        if self.problem is not None:
            out["problem"] = self.problem
        return out


def _size_and_digest(path: Path) -> tuple[int, str]:
    with open_read(path) as fh:  # no link followed, as the records were read
        digest = hashlib.sha256()
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
        return os.fstat(fh.fileno()).st_size, digest.hexdigest()


def session_files(session_dir: Path) -> list[LandedFile]:
    """The session's landed files by seq, a landed file preferred to its skeleton."""
    chosen: dict[int, LandedFile] = {}
    session = session_dir.name
    for seq, path in landed_files(session_dir):
        name = parse_file_name(path.name)
        if name is None:
            continue
        rel_parts = path.relative_to(session_dir).parts
        group = rel_parts[0]
        owner = rel_parts[1] if group in ("streams", "runs") and len(rel_parts) == 3 else None
        entry = LandedFile(seq=seq, path=path, rel="/".join((session, *rel_parts)), kind=name.kind,
                           group=group, owner=owner, skeleton=name.skeleton)
        held = chosen.get(seq)
        if held is None or (held.skeleton and not entry.skeleton):
            chosen[seq] = entry
    return [chosen[seq] for seq in sorted(chosen)]
