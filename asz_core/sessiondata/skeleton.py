"""Skeletons: what stays of a landed file once retention removes it (spec, "Skeletons").

A skeleton is Session Data compressed with gzip, named like the landed file with ``.sk``. It
keeps what a conversation's structure is built from and none of the content, so an index rebuilt
from it is the index rebuilt from the landed file:

* the header, whole, with one more key, ``removed`` (digest, size and records of the landed file,
  when it was removed, the generation, what the receiver confirmed, the owner);
* every record with its identifiers, times, flags, usage, model and dropped entries (``sha`` only
  on provider bodies);
* every part in its place, with ``k``, ``bytes``, ``failed``, ``sha256`` and its identifiers, state
  ``removed`` (``too_large`` where it held nothing to remove); text and data go, except the
  structure of a ``changes/1`` record, an ``execution/1`` record and a provider body's manifest
  (without its literal strings). Every other data part keeps the SHA-256 of its data.
"""

from __future__ import annotations

import gzip
import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO

from asz_core.sessiondata.model import Header, Part, Record
from asz_core.sessiondata.rawjson import raw_json_of, raw_json_value
from asz_core.sessiondata.reader import open_file
from asz_core.sessiondata.writer import FileSummary, SessionDataWriter, record_line

__all__ = ["Removal", "skeleton_part", "skeleton_record", "write_skeleton"]

_CHANGES_KEEP = ("schema", "id", "captured_by", "tool", "tool_name", "time", "basis", "root", "coverage",
                 "changed_files")
_CHANGE_FILE_KEEP = ("path", "operation", "before", "after", "attribution", "additions", "deletions")
_EXECUTION_KEEP = ("schema", "id", "tool", "time", "outcome")


@dataclass(frozen=True)
class Removal:
    """Why and when a landed file was removed, as the skeleton's header records it."""

    at: str
    generation: int = 1
    receiver: str = "unconfirmed"  #: accepted | rejected | unconfirmed
    owner: str = ""


def _changes(value: dict[str, Any]) -> dict[str, Any]:
    out = {k: value[k] for k in _CHANGES_KEEP if k in value}
    files = value.get("changes")
    if isinstance(files, list):
        kept = []
        for f in files:
            if not isinstance(f, dict):
                continue
            entry = {k: f[k] for k in _CHANGE_FILE_KEEP if k in f}
            if f.get("diff") == "available":
                entry["diff"] = "unavailable"  # its lines are not kept
            elif "diff" in f:
                entry["diff"] = f["diff"]
            kept.append(entry)
        out["changes"] = kept
    return out


def _manifest(value: dict[str, Any]) -> dict[str, Any]:
    out = dict(value)
    segments = []
    for segment in value.get("segments") or []:
        if isinstance(segment, dict):
            rest = {k: v for k, v in segment.items() if k != "lit"}
            if rest:
                segments.append(rest)
    out["segments"] = segments
    return out


def _structure(part: Part) -> dict[str, Any] | None:
    """The structure a data part keeps in a skeleton, or ``None`` when it keeps none."""
    if part.data is None or not part.data.startswith(b"{"):
        return None
    try:
        value = raw_json_value(part.data)
    except ValueError:  # not JSON: nothing of its structure to keep
        return None
    schema = value.get("schema") if isinstance(value, dict) else None
    if schema == "changes/1":
        return _changes(value)
    if schema == "execution/1":
        return {k: value[k] for k in _EXECUTION_KEEP if k in value}
    if schema == "provider_body/1":
        return _manifest(value)
    return None


def skeleton_part(part: Part) -> Part:
    out = Part(k=part.k, bytes=part.bytes, failed=part.failed, sha256=part.sha256,
               state="too_large" if part.state == "too_large" else "removed")
    if part.k == "call":
        out.id, out.name, out.server, out.server_tool = part.id, part.name, part.server, part.server_tool
    if part.k == "result":
        out.of = part.of
    structure = _structure(part)
    if structure is not None:
        out.data = raw_json_of(structure)
    elif part.data is not None and part.sha256 is None:
        out.sha256 = hashlib.sha256(part.data).hexdigest()
    return out


def skeleton_record(record: Record, *, provider_body: bool) -> Record:
    return Record(ord=record.ord, off=record.off, bytes=record.bytes,
                  sha=record.sha if provider_body else None, id=record.id, parent=record.parent,
                  call=record.call, run=record.run, continues=record.continues, tool=record.tool,
                  child=record.child, batch=record.batch, label=record.label,
                  started_by=record.started_by, from_=record.from_, time=record.time,
                  trigger=record.trigger, flags=record.flags, usage=record.usage, model=record.model,
                  parts=[skeleton_part(p) for p in record.parts], dropped=record.dropped)


def write_skeleton(landed: str, sink: BinaryIO, removal: Removal, *,
                   opener: Callable[[str, int], int] = os.open) -> FileSummary:
    """Write the gzip skeleton of the landed file ``landed`` into ``sink``.

    The landed file is read twice, streaming: once for its digest, size and count (which the
    header holds), once for its records. Each time it is opened by ``opener(landed, flags)``, as
    ``open``'s ``opener`` opens a file: a storage root's writer passes one that follows no link
    there, which this library, knowing no root, cannot.
    """
    digest = hashlib.sha256()
    size = 0
    # opened as the reader opens a file (:class:`~.reader.SessionDataFile`): a fifo in its place
    # reads empty, it never waits
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
    with os.fdopen(opener(landed, flags), "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
            size += len(chunk)
    with open_file(landed, fd=opener(landed, flags)) as source:
        head = source.header
        count = sum(1 for _ in source)
    header = Header(kind=head["kind"], session=head["session"], src=head["src"], dialect=head["dialect"],
                    adapter=str(head.get("adapter", "")), seq=int(head.get("seq", 0)),
                    at=str(head.get("at", "")), stream=head.get("stream"), batch=head.get("batch"),
                    extra={k: v for k, v in head.items() if k not in (
                        "h", "schema", "seq", "at", "kind", "adapter", "dialect", "src", "session", "stream",
                        "batch")})
    header.extra["removed"] = {"digest": digest.hexdigest(), "size": size, "records": count,
                               "at": removal.at, "generation": removal.generation,
                               "receiver": removal.receiver, "owner": removal.owner}
    provider_body = head["kind"] == "provider_body"
    with gzip.GzipFile(fileobj=sink, mode="wb", mtime=0) as zipped:
        writer = SessionDataWriter(zipped, header)
        for record in open_file(landed, fd=opener(landed, flags)):
            writer.write(*record_line(skeleton_record(record, provider_body=provider_body)))
        return writer.close()
