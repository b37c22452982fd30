"""The strict Session Data reader: every rule of "Reading a record", one record at a time.

A file is read line by line and never held whole. Records are handed out as they are read; the
file's verdict (closing line present, count and digest right) comes when the last line is
reached, as a :class:`SessionDataError` from the iterator. A caller that must not act on a file
that turns out bad reads it to the end first (:func:`check_file`).

A ``.sk`` skeleton is read the same way, through gzip.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, cast

import orjson

from asz_core.sessiondata.errors import SessionDataError
from asz_core.sessiondata.jsonbytes import JSONLine, NotJSON, loads_strict, slice_at
from asz_core.sessiondata.model import STATES, Dropped, Part, Record, Usage
from asz_core.sessiondata.rawjson import RawJSON
from asz_core.sessiondata.writer import check_header

__all__ = ["SessionDataFile", "check_file", "decode_record", "open_file", "read_records"]

_INT_MIN, _INT_MAX = -(2**63), 2**63 - 1
_RECORD_STR = ("sha", "id", "parent", "call", "run", "continues", "tool", "child", "batch",
               "label", "started_by", "from", "time", "trigger", "model")
_PART_STR = ("k", "text", "id", "name", "of", "server", "server_tool", "media", "encoding",
             "state", "sha256")
#: each string field by its key, to the attribute it is read into
_RECORD_ATTRS = {key: "from_" if key == "from" else key for key in _RECORD_STR}
_PART_ATTRS = {key: key for key in _PART_STR}
_USAGE_KEYS = (("in", "in_"), ("out", "out"), ("cache_read", "cache_read"),
               ("cache_write", "cache_write"))


def _is_int(value: object) -> bool:
    return type(value) is int and _INT_MIN <= value <= _INT_MAX


def _want_str(obj: dict[str, Any], key: str, where: str) -> str | None:
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    raise SessionDataError(f"{where}{key} is not a string")


def _strings(obj: dict[str, Any], attrs: dict[str, str], where: str) -> dict[str, Any]:
    """The string fields ``obj`` holds (null is absent), by attribute. A field of another type
    is an error, and of two the first in ``attrs``'s order is named, as checking each in turn
    names it; only the fields present are looked at (a record holds a few of its fifteen)."""
    found = {attrs[key]: value for key, value in obj.items() if key in attrs and value is not None}
    if not all(isinstance(value, str) for value in found.values()):
        for key in attrs:
            _want_str(obj, key, where)
    return found


def _want_int(obj: dict[str, Any], key: str, where: str, *, non_negative: bool = False) -> int | None:
    value = obj.get(key)
    if value is None:
        return None
    if not _is_int(value) or (non_negative and value < 0):
        kind = "a whole non-negative 64-bit integer" if non_negative else "a whole 64-bit integer"
        raise SessionDataError(f"{where}{key} is not {kind}")
    return value  # type: ignore[no-any-return]


def decode_record(raw: bytes) -> Record:
    """One record line (without its newline) into a :class:`Record`, or ``SessionDataError``."""
    try:
        line = JSONLine(raw)
    except NotJSON as exc:
        raise SessionDataError(f"not JSON: {exc}") from None
    obj = line.value
    if not isinstance(obj, dict):
        raise SessionDataError("a record is a JSON object")
    record = Record(
        ord=_want_int(obj, "ord", "", non_negative=True) or 0,
        off=_want_int(obj, "off", "", non_negative=True) or 0,
        bytes=_want_int(obj, "bytes", "") or 0,
        **_strings(obj, _RECORD_ATTRS, ""),
    )
    flags = obj.get("flags")
    if flags is not None:
        if not isinstance(flags, list) or not all(isinstance(f, str) for f in flags):
            raise SessionDataError("flags is not a list of strings")
        record.flags = flags
    usage = obj.get("usage")
    if usage is not None:
        if not isinstance(usage, dict):
            raise SessionDataError("usage is not an object")
        record.usage = Usage(**{attr: _want_int(usage, key, "usage.") for key, attr in _USAGE_KEYS})
    dropped = obj.get("dropped")
    if dropped is not None:
        record.dropped = _decode_dropped(dropped)
    parts = obj.get("parts")
    if parts is not None:
        if not isinstance(parts, list):
            raise SessionDataError("parts is not a list")
        # a line that is not its own encoding has its parts sliced in one scan: found from the
        # line's start each, a record of many parts was scanned again and again
        sliced = None if line.canonical else list(line.items_at("parts"))
        record.parts = [_decode_part(line, n, p, sliced) for n, p in enumerate(parts)]
    return record


def _decode_dropped(dropped: object) -> list[Dropped]:
    if not isinstance(dropped, list):
        raise SessionDataError("dropped is not a list")
    out = []
    for entry in dropped:
        if not isinstance(entry, dict):
            raise SessionDataError("a dropped entry is not an object")
        out.append(Dropped(what=_want_str(entry, "what", "dropped.") or "",
                           bytes=_want_int(entry, "bytes", "dropped.") or 0,
                           why=_want_str(entry, "why", "dropped.") or ""))
    return out


def _decode_part(line: JSONLine, index: int, obj: object, sliced: list[bytes] | None) -> Part:
    where = f"part {index}: "
    if not isinstance(obj, dict):
        raise SessionDataError(f"{where}not an object")
    values = _strings(obj, _PART_ATTRS, where)
    state = values.pop("state", None) or "available"
    if state not in STATES:
        raise SessionDataError(f"{where}state {state!r} is not one the spec names")
    if "encoding" in values and (values["encoding"] != "base64" or values.get("k") != "unknown"):
        raise SessionDataError(f"{where}encoding is only base64, and only on an unknown part")
    failed = obj.get("failed")
    if failed is not None and not isinstance(failed, bool):
        raise SessionDataError(f"{where}failed is not a boolean")
    data = None
    if obj.get("data") is not None:
        data = RawJSON(line.raw_at("parts", index, "data") if sliced is None else slice_at(sliced[index], "data"))
    return Part(k=values.pop("k", ""), state=state, bytes=_want_int(obj, "bytes", where) or 0,
                data=data, failed=failed, **values)


class SessionDataFile:
    """An open landed file: ``header`` is read on opening; iterate for the records.

    Iterating checks, at the end, that a closing line is there and its count and digest match;
    then :attr:`sha256` is the SHA-256 of the file's bytes (of a ``.sd``: a skeleton's are
    compressed, and its stays ``None``), taken as they were read, so a caller that needs it
    does not read the file a second time. The file is closed when iteration ends, or by
    :meth:`close` / a ``with`` block.
    """

    def __init__(self, path: str | Path, *, fd: int | None = None, data: bytes | None = None) -> None:
        self.path = str(path)
        #: the SHA-256 of the file's bytes, once iteration has read them all and they check
        self.sha256: str | None = None
        # Closed by close(), on every path: the file outlives this call, so no ``with``. ``fd``
        # is ``path`` already opened by the caller (a storage root's reader, which opens it
        # without following a link) and is owned by this file from now on; ``data`` is its
        # bytes, read whole by the caller already. Opened here without blocking: a fifo in a
        # landed file's place reads as an empty file, it never waits.
        if data is not None:
            self._raw: IO[bytes] = io.BytesIO(data)
        else:
            if fd is None:
                fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            try:
                self._raw = open(fd, "rb")  # noqa: SIM115
            except OSError as exc:  # a directory in its place: said of the path, the descriptor let go
                os.close(fd)
                raise type(exc)(exc.errno, exc.strerror, self.path) from None
        self._stream: IO[bytes] = (cast(IO[bytes], gzip.GzipFile(fileobj=self._raw, mode="rb"))
                                   if self.path.endswith(".sk") else self._raw)
        self._hash = hashlib.sha256()
        self.closing: dict[str, Any] | None = None
        try:
            first = self._stream.readline()
            if not first.endswith(b"\n"):
                raise SessionDataError("no header line", path=self.path, line=1)
            self._hash.update(first)
            try:
                header = loads_strict(first[:-1])
            except NotJSON as exc:
                raise SessionDataError(f"header is not JSON: {exc}", path=self.path, line=1) from None
            if not isinstance(header, dict):
                raise SessionDataError("header is not an object", path=self.path, line=1)
            try:
                check_header(header)
            except SessionDataError as exc:
                raise SessionDataError(exc.reason, path=self.path, line=1) from None
        except (OSError, EOFError) as exc:
            self.close()
            raise SessionDataError(f"cannot read: {exc}", path=self.path) from None
        except BaseException:
            self.close()
            raise
        self.header: dict[str, Any] = header

    def __enter__(self) -> SessionDataFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._stream.close()
        self._raw.close()  # a ``GzipFile`` leaves the file it reads open

    def __iter__(self) -> Iterator[Record]:
        try:
            yield from self._records()
        finally:
            self.close()

    def raw_records(self) -> Iterator[tuple[bytes, Record]]:
        """Like iterating, with each record's landed line beside it."""
        try:
            yield from self._lines()
        finally:
            self.close()

    def _records(self) -> Iterator[Record]:
        for _, record in self._lines():
            yield record

    def _lines(self) -> Iterator[tuple[bytes, Record]]:
        count = 0
        number = 1
        try:
            while True:
                chunk = self._stream.readline()
                number += 1
                if not chunk:
                    raise SessionDataError("no closing line", path=self.path, line=number)
                if not chunk.endswith(b"\n"):
                    raise SessionDataError("the last line has no newline", path=self.path, line=number)
                raw = chunk[:-1]
                if raw.startswith(b'{"t":') and self._is_closing(raw, count, number):
                    if self._stream is self._raw:  # what was read is the file's bytes, all of them
                        whole = self._hash.copy()
                        whole.update(chunk)
                        self.sha256 = whole.hexdigest()
                    return
                try:
                    record = decode_record(raw)
                except SessionDataError as exc:
                    raise SessionDataError(exc.reason, path=self.path, line=number) from None
                self._hash.update(chunk)
                count += 1
                yield raw, record
        except (OSError, EOFError) as exc:
            raise SessionDataError(f"cannot read: {exc}", path=self.path, line=number) from None

    def _is_closing(self, raw: bytes, count: int, number: int) -> bool:
        try:
            closing = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return False
        if not isinstance(closing, dict) or closing.get("t") != "end":
            return False
        if self._stream.read(1):
            raise SessionDataError("lines after the closing line", path=self.path, line=number + 1)
        if closing.get("records") != count:
            raise SessionDataError(f"closing line counts {closing.get('records')} records, "
                                   f"the file holds {count}", path=self.path, line=number)
        if closing.get("digest") != self._hash.hexdigest():
            raise SessionDataError("closing digest does not match the file's bytes",
                                   path=self.path, line=number)
        self.closing = closing
        return True


def open_file(path: str | Path, *, fd: int | None = None, data: bytes | None = None) -> SessionDataFile:
    """Open a landed ``.sd`` (or ``.sk``) file (or read ``fd``, ``path`` opened already, or
    ``data``, its bytes read already); ``SessionDataError`` if its header is bad."""
    return SessionDataFile(path, fd=fd, data=data)


def read_records(path: str | Path) -> Iterator[Record]:
    """Every record of a landed file, in order, checked as :class:`SessionDataFile` does."""
    yield from open_file(path)


def check_file(path: str | Path) -> tuple[dict[str, Any], int]:
    """Read a whole file by the rules; its header and record count, or ``SessionDataError``."""
    with open_file(path) as landed:
        count = sum(1 for _ in landed)
        return landed.header, count
