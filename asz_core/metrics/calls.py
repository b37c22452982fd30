"""The model calls of one landed file, read from Session Data alone, as the assembler reads them.

1. Only a transcript of a dialect whose calls are a coding agent's own (``claude-code``, and the
   scenarios' ``mock``, which writes the same shape) holds calls the token metric counts; any
   other file is read for its digest only.
2. A call is the records that share a ``call`` id, in line order. Its usage, model and time are
   its last fragment's (never a sum): a main transcript repeats the final usage on every
   fragment, a child's carries streaming partials on all but the last.
3. A call has finished once a fragment is flagged ``finished``; one that never is has a
   streaming stub for usage and is not counted.
4. A call whose fragment is the file's last record may go on in the stream's next files: their
   leading fragments of that call are read too. A file of another kind (meta, changes,
   execution) does not end the read; the first transcript record of anything else does.
5. ``query_source`` is ``main`` on the session's own stream and ``subagent`` on any other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from asz_core.root.durable import open_landed, sha256_of
from asz_core.sessiondata import parse_instant
from asz_core.sessiondata.model import Record

__all__ = ["Call", "FileCalls", "read_calls", "read_on"]

COUNTED_DIALECTS = frozenset({"claude-code", "mock"})
MAIN, SUBAGENT = "main", "subagent"
FINISHED = "finished"


@dataclass(slots=True)
class Call:
    """What one call's fragments said so far (rule 2)."""

    id: str
    source: str
    model: str = ""
    at_ns: int | None = None
    usage: tuple[int, int, int, int] | None = None  #: input, output, cacheRead, cacheCreation
    finished: bool = False

    def take(self, record: Record) -> None:
        if record.usage is not None:
            u = record.usage
            self.usage = (u.in_ or 0, u.out or 0, u.cache_read or 0, u.cache_write or 0)
        if record.model:
            self.model = record.model
        instant = parse_instant(record.time)
        if instant is not None:
            self.at_ns = instant
        if FINISHED in record.flags:
            self.finished = True


@dataclass(slots=True)
class FileCalls:
    """One landed file as the derivation needs it."""

    session: str
    stream: str | None
    digest: str  #: SHA-256 of the file; ``""`` for a file rule 1 does not count
    calls: list[Call] = field(default_factory=list)
    #: the call the file's last record belongs to, when it may go on in a later file
    open_tail: Call | None = None


def _dialect(header: dict[str, object]) -> str:
    return str(header.get("dialect") or "").split("/", 1)[0]


def read_calls(path: Path) -> FileCalls:
    """Rules 1-3 and 5 for one file (``SessionDataError`` when it does not read by the rules)."""
    with open_landed(path) as landed:
        header = landed.header
        stream = header.get("stream")
        counted = header.get("kind") == "transcript" and _dialect(header) in COUNTED_DIALECTS
        out = FileCalls(str(header["session"]), stream if isinstance(stream, str) else None, "")
        if not counted:  # a file no call of which can count is known by its header alone
            return out
        source = MAIN if out.stream == MAIN else SUBAGENT
        by_id: dict[str, Call] = {}
        last: Call | None = None
        for record in landed:
            last = None
            if not counted or not record.call:
                continue
            call = by_id.get(record.call)
            if call is None:
                call = by_id[record.call] = Call(record.call, source)
                out.calls.append(call)
            call.take(record)
            last = call
        out.open_tail = last
        # the bytes just read, digested as they were (a skeleton's are compressed: read again)
        out.digest = landed.sha256 or sha256_of(path)
    return out


def read_on(call: Call, following: Sequence[tuple[Path, str]]) -> None:
    """Rule 4: fold the leading fragments of ``call`` from the stream's next files (path, kind)
    into it."""
    for path, kind in following:
        if kind != "transcript":
            continue  # meta, changes, execution: the call may still go on after them
        with open_landed(path) as landed:
            for record in landed:
                if record.call != call.id:
                    return
                call.take(record)
