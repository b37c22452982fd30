"""What a collector hands a dialect: one source line, parsed once, with its exact bytes.

A dialect turns a :class:`SourceLine` into a record as the mapping it lands as, made with
:func:`~asz_core.sessiondata.fields.record` and the part functions. It reads values from
``line.value`` and puts the source's own JSON into parts with :meth:`SourceLine.data_at`, which
returns the bytes the source wrote (compacted) and never a re-encoding that could differ from
them. The collector fills in the record's place, size and ``sha`` and encodes it
(:func:`~asz_core.sessiondata.writer.encode_fields`); what it lands is the encoded line with the
few fields the file writer and the cursor read (:data:`Encoded`).
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Final, Protocol, cast

from mypy_extensions import mypyc_attr

from asz_core.collect.lines import TooLong
from asz_core.sessiondata.errors import NotEncodable, SessionDataError
from asz_core.sessiondata.fields import PartFields, RecordFields, record, too_large_part, unknown_part
from asz_core.sessiondata.jsonbytes import NOT_PROVED, JSONLine, NotJSON
from asz_core.sessiondata.rawjson import RawJSON
from asz_core.sessiondata.writer import encode_fields

__all__ = ["DialectUndeclared", "Encoded", "LineDialect", "LineProof", "NotARecordMapping", "SourceLine",
           "convert_encoded", "convert_line", "converted_lines", "line_sha", "made_to_fit", "too_long_record"]

#: A record as the collector lands it: its encoded line, what the file writer and the cursor read
#: of it, and the record as the dialect made it when its line is so long that a file may not hold
#: it whole (:data:`WHOLE_WITHIN` of a file's size), else ``None``: ``(line, ord, off, bytes, time,
#: id, whole)``. A plain tuple: one is made for every line.
Encoded = tuple[bytes, int, int, int, str | None, str | None, RecordFields | None]
#: What another process worked out of a line's bytes for the collector (:mod:`.prove`): the digit
#: of what parsing it proved (:attr:`~asz_core.sessiondata.jsonbytes.JSONLine.proof`), then its
#: ``sha`` (:func:`line_sha`); empty: nothing was worked out. One string, as it came down the pipe.
LineProof = str
#: a line this close to a file's size, or larger, may not fit beside the file's header and closing
#: line: its record is kept as the dialect made it, to be reduced (:func:`made_to_fit`) without
#: parsing its line again (which would hold the line, its parse and a slice of it at once)
WHOLE_WITHIN: Final = 1 << 16

#: the reason an unknown part gives for a line that is not JSON
NOT_JSON: Final = "the record is not valid JSON"
#: the code point of the digit 0 (:data:`LineProof`'s first character)
_ZERO: Final = ord("0")
#: bound once: compiled, ``hashlib.sha256`` is a name looked up on the module at each line
_sha256: Final = hashlib.sha256


def line_sha(raw: bytes) -> str:
    """A record's ``sha``: the first 12 hex digits of the SHA-256 of its source bytes."""
    return _sha256(raw).hexdigest()[:12]


class SourceLine(JSONLine):
    """One line of a source (without its newline), its place, and its parse: the
    :class:`~asz_core.sessiondata.jsonbytes.JSONLine` of its bytes, with what a collector knows
    of it. One object a line, parsed as it is made.

    ``is_json``: whether the line is one JSON value. ``value``: the parsed line (``None`` when
    it is not JSON). ``deep``: whether a slice of it could nest too deep inside a record (it
    nests deeper than a part's data may: :attr:`JSONLine.deep`). ``error``: why the line is not
    JSON, when it is not. They are plain attributes, set once: a dialect reads them several
    times a line.
    """

    __slots__ = ("_too_large", "error", "is_json", "off", "ord")

    def __init__(self, raw: bytes, ord: int = 1, off: int = 0, *, unread: str | None = None,
                 proved: int = NOT_PROVED) -> None:
        self.ord = ord
        self.off = off
        self.error: str | None = unread
        self._too_large = ""  # the line's SHA-256 once the collector says it cannot land whole
        self.is_json = False
        if unread is not None:  # taken as a line that does not decode, for the reason given
            self.raw, self.value, self.deep, self._canonical = raw, None, False, None
            return
        try:
            JSONLine.__init__(self, raw, proved)
        except NotJSON as exc:
            self.error = str(exc)
            self.value, self.deep = None, False
            return
        self.is_json = True

    def release(self, *, keep_bytes: bool = True) -> None:
        """Let go of the parse once the record is built, and of the bytes unless ``keep_bytes``
        (:attr:`raw` is then empty); the line reads as one that did not parse from then on."""
        self.value = None
        self.is_json = self.deep = False
        if not keep_bytes:
            self.raw = b""

    def data_at(self, *path: str | int) -> RawJSON:
        """The source's own bytes of the value at ``path`` (the whole line with no path)."""
        return self.data_at_path(path)

    def data_at_path(self, path: tuple[str | int, ...]) -> RawJSON:
        """:meth:`data_at` with its path as one tuple: compiled, a call that spreads a tuple
        (``data_at(*path, key)``) is a generic Python call, this one a native call."""
        if not self.is_json:
            raise ValueError(f"line {self.ord} is not JSON")
        return RawJSON(self.raw_at_path(path))

    def unknown_part(self, reason: str = NOT_JSON) -> PartFields:
        """The part a dialect lands for bytes of this line it cannot describe: the line kept
        whole, or, when the collector said the line is too large to land
        (:meth:`too_large_to_land`), its size and digest only. Building the whole part first
        would escape every control byte to six, so a dialect asks here instead of calling
        :func:`~asz_core.sessiondata.fields.unknown_part` on :attr:`raw`."""
        if self._too_large:
            return too_large_part(len(self.raw), self._too_large, reason)
        return unknown_part(self.raw, reason)

    def unknown_record(self, reason: str = NOT_JSON) -> RecordFields:
        """The record a dialect lands for a line it cannot read: its bytes, kept whole."""
        return record(parts=[self.unknown_part(reason)])

    def too_large_to_land(self, sha256: str) -> None:
        """Mark the line as larger than a file may hold (its SHA-256 given): its unknown parts
        keep its size and digest, not its bytes."""
        self._too_large = sha256


class LineDialect(Protocol):
    """Converts one line of a source into one record (made with
    :func:`~asz_core.sessiondata.fields.record`). ``name`` is e.g. ``claude-code/1``.

    ``reads_non_json`` must be said, either way. ``False``: a line that is not JSON (a damaged
    or partial line of a JSON source) lands as one unknown part (:meth:`SourceLine.unknown_record`)
    without reaching :meth:`convert`. ``True``: every line reaches :meth:`convert`, and a
    dialect for sources that are not JSON at all (a program, a log) describes their bytes
    itself. A dialect that says neither is refused as soon as a source of it is converted
    (:class:`DialectUndeclared`): left to a default, a dialect for a plain-text source would
    never be called and every line would land as an unknown part without a word.
    """

    name: str
    reads_non_json: bool

    def convert(self, line: SourceLine) -> RecordFields: ...


@mypyc_attr(native_class=False)  # compiled by mypyc, a native class cannot derive from TypeError
class DialectUndeclared(TypeError):
    """A dialect that does not say whether it reads lines that are not JSON."""

    def __init__(self, dialect: object) -> None:
        name = getattr(dialect, "name", None) or type(dialect).__name__
        super().__init__(
            f"dialect {name} does not say whether it reads lines that are not JSON: set "
            f"reads_non_json = True on it to be handed every line (a source that is not JSON), "
            f"or reads_non_json = False to land a line that is not JSON as an unknown part "
            f"without calling it")


def convert_line(dialect: LineDialect, line: SourceLine) -> RecordFields:
    """``dialect``'s record for ``line``; a line that is not JSON is an unknown part unless the
    dialect says it reads such lines (``reads_non_json``). A dialect that returns anything but
    the mapping :func:`~asz_core.sessiondata.fields.record` makes is refused by name
    (:class:`NotARecordMapping`)."""
    reads = reads_non_json(dialect)  # asked first: an undeclared dialect is refused
    return _record(dialect, line, reads, dialect.convert)


#: a dialect's ``convert``, called as returning any object: compiled (mypyc), a call typed as
#: returning a record would be checked to be a dict as it returns, before the refusal in
#: :func:`_record` could name it
_Convert = Callable[[SourceLine], object]


def _record(dialect: LineDialect, line: SourceLine, reads: bool, convert: _Convert) -> RecordFields:
    """:func:`convert_line`, ``reads`` being :func:`reads_non_json` of ``dialect`` and ``convert``
    its ``convert``, each asked once for all of a source's lines (compiled, a method fetched from
    an object of a class mypyc does not know is an attribute looked up, at each line)."""
    if reads or line.is_json:
        fields = convert(line)
        if type(fields) is not dict:
            raise NotARecordMapping(dialect, fields)
        return cast("RecordFields", fields)
    return line.unknown_record()


@mypyc_attr(native_class=False)  # compiled by mypyc, a native class cannot derive from TypeError
class NotARecordMapping(TypeError):
    """A dialect whose ``convert`` returned something else than a record made with
    :func:`~asz_core.sessiondata.fields.record` (a ``Record``, written for an earlier asz)."""

    def __init__(self, dialect: object, returned: object) -> None:
        name = getattr(dialect, "name", None) or type(dialect).__name__
        super().__init__(
            f"dialect {name} returned a {type(returned).__name__} from convert(): make the record with "
            f"asz_core.sessiondata.record(...) and its parts with the part functions (data_part, "
            f"text_part, call_part, ...), which return the mapping that lands")


def reads_non_json(dialect: LineDialect) -> bool:
    """Whether ``dialect`` is handed lines that are not JSON; :class:`DialectUndeclared` when it
    does not say."""
    try:
        return bool(dialect.reads_non_json)
    except AttributeError:
        raise DialectUndeclared(dialect) from None


def convert_encoded(dialect: LineDialect, line: SourceLine,
                    larger_than: int | None = None) -> tuple[Encoded, str | None]:
    """``line``'s record with its envelope (``ord``, ``off``, ``sha``, ``bytes``), encoded
    (:data:`Encoded`), and why the dialect's record could not be encoded when it could not
    (else ``None``).

    A record no writer can land (:class:`~asz_core.sessiondata.NotEncodable`: an integer past
    64 bits, data nested too deep) would fail its source on every pass. It lands instead as the
    line would if it did not decode, the dialect's record for such a line or one unknown part
    of its bytes, which is what upstream lands for the case known: a number its typed decoder
    cannot hold makes the whole line not decode.

    A line longer than ``larger_than`` (a file's size: its bytes cannot land whole) is let go
    of, bytes and parse, once its record is built, so it is never held beside its record and
    its encoding; should that record not encode, it lands as what "Too large to land" leaves
    of an unknown part of its bytes (:func:`~asz_core.sessiondata.fields.too_large_part`). So
    does such a line that is not JSON, which no dialect reads, without being encoded at all: a
    line of control bytes, which escape to six bytes each, is never built six times over.
    """
    reads = reads_non_json(dialect)
    return _convert(dialect, line, larger_than, reads, dialect.convert)


def _convert(dialect: LineDialect, line: SourceLine, larger_than: int | None, reads: bool,
             convert: _Convert, sha: str = "") -> tuple[Encoded, str | None]:
    """:func:`convert_encoded`, ``reads`` and ``convert`` as :func:`_record` takes them; ``sha``
    the line's :func:`line_sha` when it is known already."""
    raw = line.raw
    size = len(raw)
    large = larger_than is not None and size > larger_than
    digest = _sha256(raw).hexdigest() if large else ""
    if large and not line.is_json:
        if not reads:
            return _too_large_record(line, size, digest), None
        line.too_large_to_land(digest)  # the dialect describes it, its bytes are never escaped
    fields = _record(dialect, line, reads, convert)
    place = line.ord, line.off, digest[:12] if large else sha or line_sha(raw), size
    deep = line.deep
    line.release(keep_bytes=not large)
    del raw
    try:
        return _encoded(fields, place, larger_than, deep), None
    except NotEncodable as exc:
        why = str(exc)
    if large:
        return _too_large_record(line, size, digest), why
    unread = SourceLine(line.raw, line.ord, line.off, unread=why)
    try:
        return _encoded(_record(dialect, unread, reads, convert), place, larger_than), why
    except NotEncodable:
        return _encoded(unread.unknown_record(), place, larger_than), why


def _encoded(fields: RecordFields, place: tuple[int, int, str, int], limit: int | None = None,
             deep: bool = False) -> Encoded:
    """``fields`` as the collector lands it in files of ``limit`` bytes, its envelope set from
    ``place`` (``ord``, ``off``, ``sha``, ``bytes``)."""
    fields["ord"], fields["off"], fields["sha"], fields["bytes"] = place
    line = encode_fields(fields, deep=deep)
    whole = fields if limit is not None and len(line) > limit - WHOLE_WITHIN else None
    return line, fields["ord"], fields["off"], fields["bytes"], fields.get("time"), fields.get("id"), whole


def _too_large_record(line: SourceLine, size: int, digest: str) -> Encoded:
    """The record of ``line`` (``size`` bytes, SHA-256 ``digest``) as one unknown part too large
    to land; its bytes may have been let go of already."""
    return _encoded(record(parts=[too_large_part(size, digest, NOT_JSON)]), (line.ord, line.off, digest[:12], size))


def too_long_record(line: TooLong, ord: int, off: int, limit: int) -> tuple[Encoded, str]:
    """The record of a line longer than ``limit``, the most a collector reads whole: its place,
    size and digest, and one unknown part that says so, with that part's reason. Its bytes were
    never held, so nothing of them is read (not even whether they are JSON)."""
    reason = (f"the line is {line.size} bytes, more than the {limit} a line is read whole up to; "
              f"its size and digest landed, its bytes did not")
    fields = record(parts=[too_large_part(line.size, line.sha256, reason)])
    return _encoded(fields, (ord, off, line.sha256[:12], line.size)), reason


def made_to_fit(encoded: Encoded, budget: int) -> Encoded:
    """``encoded`` as it lands alone in a file with room for ``budget`` bytes of it: its line
    reduced until it fits ("Too large to land", :func:`~asz_core.sessiondata.reduce_to_fit`),
    the one place a collector reads more of a record than its line. The record is the one the
    dialect made when it was kept (a line within :data:`WHOLE_WITHIN` of a file's size), else
    decoded back from its line; a line the reader refuses (nothing a dialect makes) lands as it
    is, as a record that cannot be made smaller does."""
    line, whole = encoded[0], encoded[6]
    if len(line) <= budget:
        return encoded
    # imported here: a pass that lands nothing this large needs neither
    from asz_core.sessiondata.model import Record
    from asz_core.sessiondata.reader import decode_record
    from asz_core.sessiondata.reduce import reduce_to_fit

    try:
        record = Record.from_fields(whole) if whole is not None else decode_record(line)
    except SessionDataError:
        return encoded
    del whole
    _, line = reduce_to_fit(record, budget, line)
    return line, *encoded[1:6], None


def converted_lines(lines: Iterable[tuple[bytes | TooLong, int]], first: int, dialect: LineDialect,
                    source: Path, limit: int, read_limit: int, warn: Callable[[str], None],
                    proofs: deque[LineProof] | None = None) -> Iterator[Encoded]:
    """Each ``(line, offset)`` of ``source``, numbered from ``first``, as it lands
    (:data:`Encoded`), its warning given to ``warn`` before it is handed out, as every collector
    of lines converts them, in its process or a worker's.

    A line's bytes and parse are let go before its record is encoded, so a line of any size is
    held about twice at once (its bytes and its parse, then its parse and its record) rather
    than four or five times. A line longer than ``read_limit`` (never read whole) lands as its
    size and digest (:func:`too_long_record`); a record that cannot be encoded lands as its line
    would if it did not decode (:func:`convert_encoded`, ``limit`` the most a file holds). Both
    with the warning given. One generator between the reader and the file: each line passes
    through no other layer on its way.

    ``proofs``: each line's :data:`LineProof`, taken from the left as its line is taken from
    ``lines`` (which put it there: :func:`~.prove.proved_lines`).
    """
    reads = reads_non_json(dialect)  # once for the source: an undeclared dialect is refused here
    convert = dialect.convert
    sha, proved = "", NOT_PROVED
    for ordinal, (raw, offset) in enumerate(lines, first):
        if proofs is not None:
            proof = proofs.popleft()
            sha, proved = (proof[1:], ord(proof[0]) - _ZERO) if proof else ("", NOT_PROVED)
        if isinstance(raw, TooLong):
            encoded, reason = too_long_record(raw, ordinal, offset, read_limit)
            warn(f"{source}: line {ordinal}: {reason}")
            yield encoded
            continue
        line = SourceLine(raw, ordinal, offset, proved=proved)
        del raw
        encoded, why = _convert(dialect, line, limit, reads, convert, sha)
        del line
        if why is not None:
            warn(f"{source}: line {ordinal}: {why}; it lands as a line that does not decode, its bytes kept whole")
        yield encoded
