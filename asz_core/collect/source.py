"""What a collector hands a dialect: one source line, parsed once, with its exact bytes.

A dialect turns a :class:`SourceLine` into a :class:`~asz_core.sessiondata.model.Record`. It
reads values from ``line.json`` and puts the source's own JSON into parts with
:meth:`SourceLine.data_at`, which returns the bytes the source wrote (compacted) and never a
re-encoding that could differ from them.
"""

from __future__ import annotations

import hashlib
from typing import Any, Protocol

from asz_core.sessiondata.jsonbytes import JSONLine, NotJSON
from asz_core.sessiondata.model import Part, RawJSON, Record

__all__ = ["DialectUndeclared", "LineDialect", "SourceLine", "convert_line", "line_sha"]

#: the reason an unknown part gives for a line that is not JSON
NOT_JSON = "the record is not valid JSON"


def line_sha(raw: bytes) -> str:
    """A record's ``sha``: the first 12 hex digits of the SHA-256 of its source bytes."""
    return hashlib.sha256(raw).hexdigest()[:12]


class SourceLine:
    """One line of a source (without its newline), its place, and its parse."""

    __slots__ = ("_error", "_json", "off", "ord", "raw")

    def __init__(self, raw: bytes, ord: int = 1, off: int = 0) -> None:
        self.raw = raw
        self.ord = ord
        self.off = off
        self._json: JSONLine | None = None
        self._error: str | None = None
        try:
            self._json = JSONLine(raw)
        except NotJSON as exc:
            self._error = str(exc)

    @property
    def is_json(self) -> bool:
        return self._json is not None

    @property
    def value(self) -> Any:
        """The parsed line (``None`` when it is not JSON; check :attr:`is_json`)."""
        return self._json.value if self._json is not None else None

    @property
    def error(self) -> str | None:
        """Why the line is not JSON, when it is not."""
        return self._error

    def data_at(self, *path: str | int) -> RawJSON:
        """The source's own bytes of the value at ``path`` (the whole line with no path)."""
        if self._json is None:
            raise ValueError(f"line {self.ord} is not JSON")
        return RawJSON(self._json.raw_at(*path))

    def unknown_record(self, reason: str = NOT_JSON) -> Record:
        """The record a dialect lands for a line it cannot read: its bytes, kept whole."""
        return Record(parts=[Part.unknown(self.raw, reason)])


class LineDialect(Protocol):
    """Converts one line of a source into one record. ``name`` is e.g. ``claude-code/1``.

    ``reads_non_json`` must be said, either way. ``False``: a line that is not JSON (a damaged
    or partial line of a JSON source) lands as one unknown part (:meth:`SourceLine.unknown_record`)
    without reaching :meth:`convert`. ``True``: every line reaches :meth:`convert`, and a
    dialect for sources that are not JSON at all (a program, a log) describes their bytes
    itself. A dialect that says neither is refused on the first line it is given
    (:class:`DialectUndeclared`): left to a default, a dialect for a plain-text source would
    never be called and every line would land as an unknown part without a word.
    """

    name: str
    reads_non_json: bool

    def convert(self, line: SourceLine) -> Record: ...


class DialectUndeclared(TypeError):
    """A dialect that does not say whether it reads lines that are not JSON."""

    def __init__(self, dialect: object) -> None:
        name = getattr(dialect, "name", None) or type(dialect).__name__
        super().__init__(
            f"dialect {name} does not say whether it reads lines that are not JSON: set "
            f"reads_non_json = True on it to be handed every line (a source that is not JSON), "
            f"or reads_non_json = False to land a line that is not JSON as an unknown part "
            f"without calling it")


def convert_line(dialect: LineDialect, line: SourceLine) -> Record:
    """``dialect``'s record for ``line``; a line that is not JSON is an unknown part unless the
    dialect says it reads such lines (``reads_non_json``)."""
    try:
        reads_non_json = dialect.reads_non_json
    except AttributeError:
        raise DialectUndeclared(dialect) from None
    if line.is_json or reads_non_json:
        return dialect.convert(line)
    return line.unknown_record()
