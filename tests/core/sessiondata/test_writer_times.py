"""A file's first and last times are the earliest and latest instants its records name, however
the writer finds them (by parsing, or by comparing texts it has shown sort as their instants)."""

from __future__ import annotations

import io
import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from asz_core.sessiondata import Header, Record, SessionDataWriter, parse_instant
from asz_core.sessiondata.times import same_sort, sorts_after, sorts_as_instant
from asz_core.sessiondata.writer import encode_record, record_line, times_following
from tests.helpers import examples

_DAYS = st.sampled_from(["2026-01-01", "2026-01-02", "2025-12-31", "2024-02-29", "2026-02-30", "2026-13-01"])
_CLOCKS = st.sampled_from(["00:00:00", "12:30:59", "12:30:60", "12:31:00", "23:59:59", "23:59:60", "24:00:00",
                           "09:05:07", "99:00:00"])
_FRACTIONS = st.sampled_from(["", ".1", ".10", ".100", ".5", ".999", ".123456789", ".0000000001", "."])
_ZONES = st.sampled_from(["Z", "Z", "Z", "z", "+00:00", "+01:00", "-05:30", ""])


@st.composite
def times(draw: st.DrawFn) -> str:
    if draw(st.integers(0, 20)) == 0:
        return draw(st.sampled_from(["", "yesterday", "٢٠٢٦-01-01T00:00:00Z", "2026-01-01 00:00:00Z"]))
    return f"{draw(_DAYS)}T{draw(_CLOCKS)}{draw(_FRACTIONS)}{draw(_ZONES)}"


def _expected(texts: list[str]) -> tuple[str | None, str | None]:
    first: tuple[int, str] | None = None
    last: tuple[int, str] | None = None
    for text in texts:
        instant = parse_instant(text)
        if instant is None:
            continue
        if first is None or instant < first[0]:
            first = (instant, text)
        if last is None or instant >= last[0]:
            last = (instant, text)
    return (first[1] if first else None), (last[1] if last else None)


@settings(max_examples=examples(400))
@given(st.lists(times(), max_size=12), st.booleans())
def test_first_and_last_times_are_the_instants_extremes(texts: list[str], ordered: bool) -> None:
    if ordered:  # the usual file: records nearly in time order, which the writer's shortcut serves
        texts = sorted(texts)
        if len(texts) > 2:
            texts[1], texts[2] = texts[2], texts[1]
    writer = SessionDataWriter(io.BytesIO(), Header(kind="transcript", session="s", src="x", dialect="d/1",
                                                    adapter="a"))
    for n, text in enumerate(texts, start=1):
        writer.write(*record_line(Record(ord=n, time=text)))
    summary = writer.close()
    assert (summary.from_time, summary.through_time) == _expected(texts)


def test_a_time_repeating_the_latest_moves_nothing_and_an_earlier_one_still_counts() -> None:
    texts = ["2026-01-01T12:00:01Z", "2026-01-01T12:00:01Z", "2026-01-01T12:00:00Z", "2026-01-01T12:00:01Z",
             "2026-01-01T23:59:60Z", "2026-01-01T23:59:60Z", "2026-01-02T00:00:00Z"]
    writer = SessionDataWriter(io.BytesIO(), Header(kind="transcript", session="s", src="x", dialect="d/1",
                                                    adapter="a"))
    for n, text in enumerate(texts, start=1):
        writer.write(*record_line(Record(ord=n, time=text)))
    summary = writer.close()
    assert (summary.from_time, summary.through_time) == _expected(texts) == ("2026-01-01T12:00:00Z",
                                                                            "2026-01-02T00:00:00Z")


@settings(max_examples=examples(600))
@given(times(), times())
def test_texts_compare_as_their_instants_only_where_same_sort_says_so(text: str, than: str) -> None:
    if parse_instant(than) is None or not sorts_as_instant(than) or not sorts_as_instant(text):
        return  # only ever asked about a time the writer has accepted and found sorts
    if same_sort(text, than):
        instant, other = parse_instant(text), parse_instant(than)
        assert instant is not None and other is not None
        assert (text < than, text == than) == (instant < other, instant == other)


@settings(max_examples=examples(600))
@given(times(), times())
def test_sorts_after_is_same_sort_and_the_shape_of_a_later_text(text: str, than: str) -> None:
    if parse_instant(than) is None or not sorts_as_instant(than):
        return  # only ever asked against the latest time the writer has found sorts
    expected = sorts_as_instant(text) and same_sort(text, than) and text >= than
    assert sorts_after(text, than) == expected
    if expected:
        instant, other = parse_instant(text), parse_instant(than)
        assert instant is not None and other is not None and instant >= other


#: the shape :func:`sorts_as_instant` accepts, as the pattern it is written out from
_SORTS = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{1,9})?Z\Z")


@st.composite
def near_times(draw: st.DrawFn) -> str:
    """A time as :func:`times` draws it, with up to three characters replaced, added or taken out."""
    chars = list(draw(times()))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(chars)))
        char = draw(st.sampled_from([*"0123456789", "T", "Z", "z", ":", ".", "-", "+", " ", "٢", "\n"]))
        edit = draw(st.sampled_from(["replace", "add", "remove"]))
        if edit == "add" or not chars:
            chars.insert(at, char)
        elif edit == "replace":
            chars[min(at, len(chars) - 1)] = char
        else:
            del chars[min(at, len(chars) - 1)]
    return "".join(chars)


@settings(max_examples=examples(2000))
@given(near_times(), times())
@example("2026-01-01T23:59:59.123456789Z", "2026-01-01T00:00:00.000000000Z")
@example("2026-01-01T24:00:00Z", "2026-01-01T00:00:00Z")
@example("2026-01-01T19:60:00Z", "2026-01-01T00:00:00Z")
@example("2026-01-01T12:00:00.Z", "2026-01-01T00:00:00Z")
@example("2026-01-01T12:00:00.1234567890Z", "2026-01-01T00:00:00Z")
@example("2026-01-01T12:00:00Z\n", "2026-01-01T00:00:00Z")
@example("2026-01001T12:00:00Z", "2026-01-01T00:00:00Z")
@example("2026001-01T12:00:00Z", "2026-01-01T00:00:00Z")
def test_a_time_has_the_shape_that_sorts_exactly_where_the_pattern_matches_it(text: str, than: str) -> None:
    assert sorts_as_instant(text) == (_SORTS.match(text) is not None)
    if parse_instant(than) is not None and sorts_as_instant(than):
        shaped = _SORTS.match(than[:10] + text[10:]) is not None  # text's time of day, than's date
        expected = text >= than and len(text) == len(than) and text.startswith(than[:10]) and shaped
        assert sorts_after(text, than) == expected


def _writer(sink: io.BytesIO) -> SessionDataWriter:
    return SessionDataWriter(sink, Header(kind="transcript", session="s", src="x", dialect="d/1", adapter="a"))


@settings(max_examples=examples(400))
@given(st.lists(st.one_of(st.none(), times()), max_size=16), st.lists(st.integers(1, 5), max_size=8),
       st.booleans())
# a run of times each after the one before, which starts before the file's latest: it stays
@example(["2026-01-01T10:00:00Z", "2026-01-01T09:00:00Z", "2026-01-01T09:30:00Z"], [], False)
@example(["2026-01-01T10:00:00Z", "2026-01-01T09:00:00Z", "2026-01-01T09:30:00Z", "2026-01-01T11:00:00Z"], [1],
         False)
def test_records_written_a_run_at_a_time_make_the_file_written_one_at_a_time(
        texts: list[str | None], cuts: list[int], ordered: bool) -> None:
    if ordered:  # runs of records each after the one before, which write_lines takes in one step
        texts = sorted(texts, key=lambda text: (text is None, text or ""))
    records = [Record(ord=n, off=n * 10, bytes=9, time=text) for n, text in enumerate(texts, start=1)]
    lines = [encode_record(record) for record in records]
    one_sink, runs_sink = io.BytesIO(), io.BytesIO()
    one, runs = _writer(one_sink), _writer(runs_sink)
    for record, line in zip(records, lines, strict=True):
        one.write(line, record.ord, record.off, record.bytes, record.time)
    start = 0
    for cut in [*cuts, len(records)]:  # runs of the given sizes, the rest in one
        end = min(start + cut, len(records))
        if end > start:
            last = records[end - 1]
            runs.write_lines(b"\n".join(lines[start:end]), end - start, last.ord, last.off, last.bytes,
                             texts[start:end], times_following(texts[start:end]))
        start = end
    assert runs.close() == one.close()
    assert runs_sink.getvalue() == one_sink.getvalue()


def test_times_following_marks_each_time_that_sorts_after_the_one_before() -> None:
    texts = ["2026-01-01T00:00:01Z", "2026-01-01T00:00:02Z", None, "2026-01-01T00:00:03Z",
             "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"]
    assert times_following(texts) == bytes([0, 1, 0, 0, 0, 1, 0])
