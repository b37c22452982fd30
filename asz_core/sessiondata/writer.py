"""The Session Data writer: a header, one record per line, a closing line with the digest.

The digest is computed over the bytes as they are written, never by reading the file back, and
sizes are counted as written (``max_delta_bytes`` limits written bytes, not source bytes).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, Final, NamedTuple, Protocol

import orjson

from asz_core.sessiondata.errors import NotEncodable, SessionDataError
from asz_core.sessiondata.fields import RecordFields
from asz_core.sessiondata.jsonbytes import MAX_DEPTH, compact, depth_exceeds, encode_value, holds_separator
from asz_core.sessiondata.model import Header, Record
from asz_core.sessiondata.rawjson import RawJSON
from asz_core.sessiondata.times import parse_instant, same_sort, sorts_after, sorts_as_instant

__all__ = ["SPLICE_FROM", "ByteSink", "FileSummary", "NotEncodable", "SessionDataWriter", "check_header",
           "closing_line", "encode_fields", "encode_record", "record_line", "times_following"]

#: Records are handed to the sink and the digest in batches of about this many bytes, joined
#: once: a write and a hash update per record cost more than the bytes they carry. A line this
#: long or longer is handed on by itself, never copied into a batch.
_BATCH_BYTES: Final = 1 << 16
#: looked for as byte values: ``b"\n" in line`` first tries ``b"\n"`` as an integer, and
#: raising and clearing that error cost more than the search, on every record
_LF: Final = 0x0A
_CR: Final = 0x0D
#: the last byte of U+2028 and of U+2029 in UTF-8: a line holding neither byte (found by
#: ``memchr``, faster than ``isascii`` over an ASCII line) holds neither character, and is not
#: searched for them
_A8: Final = 0xA8
_A9: Final = 0xA9


def check_header(header: dict[str, Any]) -> None:
    """The reader's header check; the writer refuses to start a file that would fail it."""
    if header.get("h") != 1 or header.get("schema") != "sd/1":
        raise SessionDataError("header: h must be 1 and schema sd/1")
    for key in Header.REQUIRED:
        value = header.get(key)
        if not isinstance(value, str) or not value:
            raise SessionDataError(f"header: {key} is required")


#: a part's ``data`` this large, in a record of a source this large, is not handed to the encoder:
#: :func:`encode_fields` puts :data:`_DATA_HOLE` in its place and the bytes into the line after
SPLICE_FROM: Final = 1 << 20
#: orjson's calls a record takes, bound once (as jsonbytes binds them): a constant in C, where
#: ``orjson.dumps`` is a name looked up on the module at each call
_orjson_dumps: Final = orjson.dumps
_Fragment: Final = orjson.Fragment
_DATA_HOLE: Final = orjson.Fragment(b"null")


def encode_fields(fields: RecordFields, *, deep: bool = False) -> bytes:
    """One record, as a dialect makes it (:mod:`~asz_core.sessiondata.fields`), as its landed
    line, without the newline: one ``orjson.dumps`` of the mapping, each part's ``data`` put in
    as the bytes it is.

    Raises :class:`NotEncodable` for a record no writer could land (an integer past 64 bits;
    with ``deep``, a line nested deeper than a reader reads): trying again would fail again, so
    a collector lands something else in its place rather than failing its source every pass.
    ``deep`` says the record's data may nest that deep (a slice of a source line that held more
    than :data:`~asz_core.sessiondata.jsonbytes.RECORD_DATA_DEPTH` containers): checking every
    line would cost a scan of its bytes, for a case one line in hundreds could hold.
    """
    # A record whose source is large may hold a large data part: its data goes into the line
    # after encoding (``_fill_holes``), not through the encoder. (Data as large as that from a
    # smaller source is copied through the encoder, as every other data is.)
    holes = _make_holes(fields) if fields["bytes"] >= SPLICE_FROM else None
    try:
        line = _orjson_dumps(fields, default=_Fragment)
    except orjson.JSONEncodeError:
        line = _dumps_repaired(fields)  # a lone surrogate in a string we encode, or worse
    else:
        if (_A8 in line or _A9 in line) and holds_separator(line):  # both bytes only in a line not ASCII
            # Our own strings escape U+2028/U+2029; a source's data keeps what it wrote.
            line = _dumps_repaired(fields)
    if holes:
        line = _fill_holes(line, fields, holes)
    if _LF in line or _CR in line:
        # Only a part's raw data can hold a line break (whitespace between its tokens); a
        # record is one line, so such data lands compacted, as upstream's writer lands it.
        for part in fields.get("parts", ()):
            data = part.get("data")
            if data is not None:
                part["data"] = RawJSON(compact(data))
        return encode_fields(fields, deep=deep)
    if deep and depth_exceeds(line):
        raise NotEncodable(f"the record nests deeper than {MAX_DEPTH} objects and lists, more than a reader reads")
    return line


def encode_record(record: Record, *, deep: bool = False) -> bytes:
    """A :class:`Record` (one read back, or made outside a dialect) as its landed line, by
    :func:`encode_fields`'s rules."""
    return encode_fields(record.to_json(), deep=deep)


def record_line(record: Record) -> tuple[bytes, int, int, int, str | None]:
    """A :class:`Record` as :meth:`SessionDataWriter.write` takes it: its line, ``ord``, ``off``,
    ``bytes`` and ``time``."""
    return encode_record(record), record.ord, record.off, record.bytes, record.time


def _make_holes(fields: RecordFields) -> dict[int, RawJSON]:
    """Take each data of :data:`SPLICE_FROM` bytes or more out of its part, :data:`_DATA_HOLE` in
    its place: the originals by part index (:func:`_fill_holes` puts them back)."""
    holes: dict[int, RawJSON] = {}
    for index, part in enumerate(fields.get("parts", ())):
        data = part.get("data")
        if data is not None and len(data) >= SPLICE_FROM:
            holes[index] = data
            part["data"] = _DATA_HOLE  # type: ignore[typeddict-item]  # a stand-in, for the encoder only
    return holes


def _fill_holes(line: bytes, fields: RecordFields, holes: dict[int, RawJSON]) -> bytes:
    """Put each large part's data back in its part, and into ``line`` where :func:`_make_holes`
    left :data:`_DATA_HOLE` for it.

    Each part's ``data`` is the first ``"data":`` after the end of the previous part's: no key
    before it in a part holds raw JSON, and a string cannot hold ``"data":`` unescaped.
    """
    pieces: list[bytes | memoryview] = []
    view = memoryview(line)  # slices of it are not copies; the one join is
    pos = done = 0  # where to look for the next part's data; what is in ``pieces`` already
    for index, part in enumerate(fields.get("parts", ())):
        hole = holes.get(index)
        if hole is not None:
            part["data"] = hole
        data = part.get("data")
        if not data:
            continue
        at = line.index(b'"data":', pos) + 7
        if hole is None:
            pos = at + len(data)
            continue
        pieces.append(view[done:at])
        pieces.append(hole)
        pos = done = at + 4  # past the hole's ``null``
    pieces.append(view[done:])
    return b"".join(pieces)


def _dumps_repaired(obj: RecordFields) -> bytes:
    try:
        return _orjson_dumps(_escape_strings(obj), default=_Fragment)
    except orjson.JSONEncodeError as exc:
        raise NotEncodable(str(exc)) from None


def _escape_strings(value: Any) -> Any:
    if isinstance(value, str):
        return _Fragment(encode_value(value))
    if isinstance(value, dict):
        return {k: _escape_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_escape_strings(v) for v in value]
    return value


def _run_end(follows: bytes, start: int, stop: int) -> int:
    """The first index from ``start`` (below ``stop``) whose record does not follow the one
    before it, or ``stop``: found by a search of the bytes, not a step a record."""
    found = follows.find(0, start, stop)
    return stop if found < 0 else found


class _Time:
    """The earliest or latest time a file's records name: its text, its instant once parsed,
    and whether its text sorts as its instant (:func:`sorts_as_instant`). Each is held by one
    end of the file's times only, so the writer moves the latest on in place."""

    __slots__ = ("_instant", "sorts", "text")

    def __init__(self, text: str, instant: int | None, sorts: bool) -> None:
        self.text, self._instant, self.sorts = text, instant, sorts

    def instant(self) -> int:
        if self._instant is None:
            self._instant = parse_instant(self.text)
            assert self._instant is not None  # it was noted as a time
        return self._instant


def times_following(times: Sequence[str | None]) -> bytes:
    """For each of consecutive records' times, 1 where it sorts after the time before it (as
    :func:`sorts_after` knows it), else 0 (the first; a record with no time or after one): what
    :meth:`SessionDataWriter.write_lines` reads to take a run of such records in one step. A
    worker converting records works it out for them, so the process writing them need not."""
    follows = bytearray(len(times))
    before: str | None = None
    for index, time in enumerate(times):
        if time is not None and before is not None and sorts_after(time, before):
            follows[index] = 1
        before = time
    return bytes(follows)


def closing_line(records: int, digest: str) -> bytes:
    return b'{"t":"end","records":%d,"digest":"%s"}\n' % (records, digest.encode("ascii"))


class FileSummary(NamedTuple):
    """What a closed file holds: counted while it was written. A named tuple
    (docs/architecture.md, "Classes a pass imports")."""

    records: int
    bytes: int
    digest: str  #: the closing line's digest: every byte before the closing line
    sha256: str  #: the whole file's bytes, as a receiver checks them
    lines: int
    from_time: str | None
    through_time: str | None
    last_ord: int
    last_off: int
    last_bytes: int


class ByteSink(Protocol):
    """Where a writer's bytes go: a binary file, a gzip stream, a counter for a dry run."""

    def write(self, data: bytes, /) -> object: ...


class SessionDataWriter:
    """Streams one Session Data file into ``sink`` (a binary file opened for writing). Records
    reach the sink in batches, all of them by :meth:`close`; :attr:`size` counts them at once."""

    def __init__(self, sink: ByteSink, header: Header) -> None:
        head = header.to_json()
        check_header(head)
        self._sink = sink
        self._hash = hashlib.sha256()
        self._size = 0
        #: records written but not yet handed to the sink (each line, then its newline)
        self._batch: list[bytes] = []
        self._batch_size = 0
        self._records = 0
        self._first: _Time | None = None
        self._last: _Time | None = None
        self._last_record = (0, 0, 0)
        self._closed = False
        self._emit(_orjson_dumps(head) + b"\n")

    @property
    def size(self) -> int:
        """Bytes written so far (header and records, each with its newline)."""
        return self._size

    @property
    def records(self) -> int:
        return self._records

    def _emit(self, chunk: bytes) -> None:
        self._sink.write(chunk)
        self._hash.update(chunk)
        self._size += len(chunk)

    def _hand_on(self) -> None:
        """Hand the batch of records to the sink and the digest (their size is counted)."""
        if self._batch:
            chunk = b"".join(self._batch)
            self._batch.clear()
            self._batch_size = 0
            self._sink.write(chunk)
            self._hash.update(chunk)

    def write(self, line: bytes, ord: int, off: int, bytes: int, time: str | None) -> None:
        """Write one record: its encoded line (:func:`encode_fields`), and what the file's
        summary and span read of it: its place (``ord``, ``off``), its source's size
        (``bytes``) and its ``time``. (A :class:`Record`: :func:`record_line`.)"""
        if self._closed:
            raise SessionDataError("the file is closed")
        size = len(line) + 1
        if size < _BATCH_BYTES:
            self._batch += (line, b"\n")
            self._batch_size += size
            self._size += size
            if self._batch_size >= _BATCH_BYTES:
                self._hand_on()
        else:
            self._hand_on()
            self._emit(line)  # a large line is not copied into a batch, nor to add its newline
            self._emit(b"\n")
        self._records += 1
        self._last_record = (ord, off, bytes)
        if time is not None:
            self._note_time(time)

    def write_lines(self, lines: bytes, count: int, ord: int, off: int, bytes: int,
                    times: Sequence[str | None], follows: bytes) -> None:
        """Write ``count`` records at once, already encoded: ``lines`` is their lines joined by
        newlines (the last one's is added here); ``ord``, ``off`` and ``bytes`` are the last
        record's; ``times`` each one's time, and ``follows`` :func:`times_following` of them.

        The file is what :meth:`write` of each would make: the bytes go to the sink and the
        digest in one piece, and the times are noted as :meth:`write` notes them, record by
        record, except a run of records each sorting after the one before it, following a
        record whose time is now the file's latest: :meth:`write` would move the latest on to
        each in turn, so it moves to the run's last at once.
        """
        if self._closed:
            raise SessionDataError("the file is closed")
        self._hand_on()
        self._emit(lines)  # not copied to add its last newline, as a large line in :meth:`write`
        self._emit(b"\n")
        self._records += count
        self._last_record = (ord, off, bytes)
        index, run_end = 0, 0
        while index < count:
            time = times[index]
            if time is not None:
                self._note_time(time)
                if run_end <= index + 1:
                    run_end = _run_end(follows, index + 1, count)
                last = self._last
                if run_end > index + 1 and last is not None and last.sorts and last.text == time:
                    latest = times[run_end - 1]
                    assert latest is not None  # it follows the one before it
                    last.text, last._instant = latest, None
                    index = run_end
                    continue
            index += 1

    def _note_time(self, text: str) -> None:
        first, last = self._first, self._last
        if last is not None and text == last.text:
            return  # the latest time again (records often share one): nothing moves
        if last is not None and last.sorts and sorts_after(text, last.text):
            # the usual record: the latest time moves on, its instant not parsed yet, rather than
            # being made anew for every record
            last.text, last._instant = text, None
            return
        # Compared as texts where that is shown to compare the instants (most records).
        if (first is not None and last is not None and last.sorts and sorts_as_instant(text)
                and same_sort(text, last.text)):
            if text >= last.text:
                self._last = _Time(text, None, True)
                return
            if first.sorts and same_sort(text, first.text):
                if text < first.text:
                    self._first = _Time(text, None, True)
                return
        instant = parse_instant(text)
        if instant is None:
            return
        if first is None or instant < first.instant():
            self._first = _Time(text, instant, sorts_as_instant(text))
        if last is None or instant >= last.instant():
            self._last = _Time(text, instant, sorts_as_instant(text))

    def close(self) -> FileSummary:
        """Write the closing line; the caller then flushes and installs the file."""
        if self._closed:
            raise SessionDataError("the file is already closed")
        self._hand_on()
        digest = self._hash.hexdigest()
        closing = closing_line(self._records, digest)
        self._sink.write(closing)
        whole = self._hash.copy()
        whole.update(closing)
        self._closed = True
        last_ord, last_off, last_bytes = self._last_record
        return FileSummary(
            records=self._records,
            bytes=self._size + len(closing),
            digest=digest,
            sha256=whole.hexdigest(),
            lines=self._records + 2,
            from_time=self._first.text if self._first else None,
            through_time=self._last.text if self._last else None,
            last_ord=last_ord,
            last_off=last_off,
            last_bytes=last_bytes,
        )
