"""Which lines reach a dialect: JSON always; bytes that are not JSON only when it says it reads them."""

from __future__ import annotations

import pytest

from asz_core.collect import NOT_JSON, SourceLine, convert_line
from asz_core.collect.source import DialectUndeclared, NotARecordMapping
from asz_core.sessiondata import Record, RecordFields, data_part, record, unknown_part
from asz_core.testing import as_record


class _JsonOnly:
    name = "test/1"
    reads_non_json = False

    def convert(self, line: SourceLine) -> RecordFields:
        return record(from_="runtime", parts=[data_part(line.data_at())])


class _ReadsAnyBytes(_JsonOnly):
    reads_non_json = True

    def convert(self, line: SourceLine) -> RecordFields:
        return record(from_="runtime", parts=[unknown_part(line.raw, "a program")])


def test_a_line_that_is_not_json_is_an_unknown_part_without_reaching_the_dialect() -> None:
    landed = as_record(convert_line(_JsonOnly(), SourceLine(b"console.log(1)")))
    assert [p.k for p in landed.parts] == ["unknown"]
    assert landed.parts[0].text == NOT_JSON and landed.from_ is None


def test_a_dialect_that_reads_non_json_describes_the_bytes_itself() -> None:
    landed = as_record(convert_line(_ReadsAnyBytes(), SourceLine(b"console.log(1)")))
    assert landed.parts[0].text == "a program" and landed.from_ == "runtime"
    assert landed.parts[0].raw() == b"console.log(1)"


def test_json_lines_reach_the_dialect_either_way() -> None:
    assert as_record(convert_line(_JsonOnly(), SourceLine(b'{"a":1}'))).parts[0].data == b'{"a":1}'


class _Undeclared:
    """A dialect written for a log that is not JSON, which forgot to say so."""

    name = "plain-log/1"

    def convert(self, line: SourceLine) -> RecordFields:
        return record(from_="runtime", parts=[unknown_part(line.raw, "a log line")])


def test_a_dialect_that_does_not_say_whether_it_reads_non_json_is_refused_with_a_message() -> None:
    with pytest.raises(DialectUndeclared, match=r"plain-log/1.*reads_non_json = True"):
        convert_line(_Undeclared(), SourceLine(b"12:00 started"))
    with pytest.raises(DialectUndeclared):  # refused on a JSON line as well: on the first one it meets
        convert_line(_Undeclared(), SourceLine(b'{"a":1}'))


class _MadeForAnEarlierAsz(_JsonOnly):
    """A dialect that still builds a ``Record`` object."""

    def convert(self, line: SourceLine) -> RecordFields:
        return Record(from_="runtime")  # type: ignore[return-value]


def test_a_dialect_that_returns_a_record_object_is_refused_with_what_to_use_instead() -> None:
    with pytest.raises(NotARecordMapping, match=r"test/1 returned a Record.*sessiondata\.record\(\.\.\.\)"):
        convert_line(_MadeForAnEarlierAsz(), SourceLine(b'{"a":1}'))


def test_converted_lines_numbers_lines_from_the_first_and_warns_before_handing_out_the_record() -> None:
    from pathlib import Path

    from asz_core.collect.lines import TooLong
    from asz_core.collect.source import converted_lines

    said: list[str] = []
    lines = [(b'{"a":1}', 100), (TooLong(size=70, sha256="ab" * 32), 108), (b"not json", 179)]
    handed = []
    for encoded in converted_lines(lines, 5, _JsonOnly(), Path("s.jsonl"), 1 << 20, 64, said.append):
        handed.append((encoded[1], encoded[2], len(said)))  # ord, off, warnings said by then
    assert handed == [(5, 100, 0), (6, 108, 1), (7, 179, 1)]
    assert said[0].startswith("s.jsonl: line 6: the line is 70 bytes, more than the 64")


def test_a_source_line_that_is_not_json_has_no_value_and_no_data() -> None:
    line = SourceLine(b"{unfinished", 3, 40)
    assert (line.is_json, line.value, line.deep, line.ord, line.off) == (False, None, False, 3, 40)
    assert line.error
    with pytest.raises(ValueError, match="line 3 is not JSON"):
        line.data_at()
    released = SourceLine(b'{"a":[1, 2]}')
    assert released.data_at("a") == b"[1,2]"
    released.release(keep_bytes=False)
    assert (released.is_json, released.value, released.raw) == (False, None, b"")
