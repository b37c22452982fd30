"""Properties of the Session Data library, for any input hypothesis can think of."""

from __future__ import annotations

import contextlib
import io
import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asz_core.sessiondata import (
    Header,
    Part,
    RawJSON,
    Record,
    SessionDataError,
    SessionDataWriter,
    decode_record,
    encode_record,
    raw_json_of,
    reduce_to_fit,
)
from asz_core.sessiondata.jsonbytes import JSONLine, compact
from asz_core.sessiondata.writer import record_line
from asz_core.testing import run_sdcheck
from tests.helpers import examples

texts = st.text(st.characters(codec="utf-8") | st.sampled_from("\u2028\u2029<>&\"\\\x00\x1f"), max_size=40)
ids = st.none() | st.text("abcdef0123456789-_", min_size=1, max_size=12)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False, allow_infinity=False) | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=12,
)


@st.composite
def parts(draw: st.DrawFn) -> Part:
    kind = draw(st.sampled_from(["text", "call", "result", "data", "unknown", "reasoning"]))
    if kind == "unknown":
        return Part.unknown(draw(st.binary(max_size=60)), draw(texts))
    if kind == "text":
        return Part.text_part(draw(texts))
    if kind == "reasoning":
        return Part.reasoning(draw(st.none() | texts), draw(st.sampled_from(["available", "unavailable", "redacted"])))
    # a top-level null is absent by the reading rules, so it is not a value a part can hold
    data = RawJSON(compact(json.dumps(draw(json_values.filter(lambda v: v is not None))).encode()))
    if kind == "call":
        return Part.call(draw(ids), draw(st.text(min_size=1, max_size=20)), data)
    if kind == "result":
        return Part.result(draw(ids), draw(st.none() | texts), data, draw(st.none() | st.booleans()))
    return Part.data_part(data)


records = st.builds(
    Record, ord=st.integers(0, 2**40), off=st.integers(0, 2**40), bytes=st.integers(0, 2**40),
    id=ids, parent=ids, call=ids, run=ids, label=st.none() | texts,
    from_=st.sampled_from([None, "agent", "external", "runtime"]),
    time=st.none() | st.just("2026-01-01T00:00:00Z") | texts,
    flags=st.lists(st.sampled_from(["finished", "system_prompt", "child_result"]), max_size=2),
    parts=st.lists(parts(), max_size=5),
)


@given(st.binary(max_size=300))
@settings(max_examples=examples(100))
def test_any_bytes_come_back_from_an_unknown_part(raw: bytes) -> None:
    line = encode_record(Record(parts=[Part.unknown(raw, "reason")]))
    assert decode_record(line).parts[0].raw() == raw


@given(records)
@settings(max_examples=examples(300))
def test_any_record_reads_back_equal(record: Record) -> None:
    line = encode_record(record)
    assert b"\n" not in line
    assert encode_record(decode_record(line)) == line


@given(st.lists(records, max_size=6))
@settings(max_examples=examples(25))
def test_sdcheck_accepts_any_file_the_writer_writes(tmp_path_factory: pytest.TempPathFactory,
                                                    rows: list[Record]) -> None:
    path = tmp_path_factory.mktemp("sd") / "f.sd"
    with open(path, "wb") as f:
        writer = SessionDataWriter(f, Header(kind="transcript", session="s", src="x", dialect="t/1", adapter="t/1"))
        off = 0
        for n, r in enumerate(rows, start=1):
            r.ord, r.off = n, off  # a file's records chain, as a collector lands them
            off += r.bytes + 1
            writer.write(*record_line(r))
        writer.close()
    verdict = run_sdcheck(path)
    if verdict is not None:
        assert verdict["ok"], verdict["problems"]


@given(json_values)
@settings(max_examples=examples(100))
def test_source_bytes_of_any_value_are_kept(value: object) -> None:
    spaced = json.dumps({"v": value}, indent=1, ensure_ascii=True).encode()
    assert JSONLine(spaced).raw_at("v") == compact(json.dumps(value, indent=1, ensure_ascii=True).encode())


@given(st.lists(parts(), min_size=1, max_size=6), st.integers(60, 400))
@settings(max_examples=examples(200))
def test_reduction_is_deterministic_and_fits_or_lands_as_is(ps: list[Part], budget: int) -> None:
    record = Record(ord=1, parts=ps)
    first, line = reduce_to_fit(record, budget)
    _, line_again = reduce_to_fit(record, budget)
    assert line == line_again == encode_record(first)
    assert len(first.parts) == len(record.parts)
    if len(line) > budget:  # nothing left to take: every payload is out
        for p in first.parts:
            assert p.data is None or (p.k == "data" and p.data.startswith(b'{"schema"'))
    for before, after in zip(record.parts, first.parts, strict=True):
        assert (after.k, after.id, after.name, after.of, after.bytes) == (before.k, before.id, before.name,
                                                                          before.of, before.bytes)
        if after.state in ("too_large", "truncated") and before.state not in ("too_large", "truncated"):
            assert after.sha256 is not None


def test_reduction_takes_the_largest_first_and_ties_to_the_earlier_part() -> None:
    record = Record(parts=[Part.text_part("a" * 200), Part.text_part("b" * 200), Part.text_part("c" * 1000)])
    size = len(encode_record(record))
    reduced, _ = reduce_to_fit(record, size - 500)
    assert [p.state for p in reduced.parts] == ["available", "available", "too_large"]
    reduced, _ = reduce_to_fit(record, size - 1000)
    assert [p.state for p in reduced.parts] == ["too_large", "available", "too_large"]


def test_a_result_keeps_its_text_while_it_can() -> None:
    record = Record(parts=[Part.result("t1", text="readable", data=RawJSON(b'"' + b"d" * 500 + b'"'))])
    reduced, _ = reduce_to_fit(record, 200)
    (part,) = reduced.parts
    assert part.state == "truncated" and part.text == "readable" and part.data is None and part.of == "t1"


def test_changes_records_shrink_in_their_own_format() -> None:
    change = {"schema": "changes/1", "id": "c1", "tool": "t1", "changed_files": 2, "gaps": [], "changes": [
        {"path": "a.py", "additions": 3, "deletions": 1, "diff": "available", "hunks": ["+" * 400]},
        {"path": "b.py", "additions": 1, "deletions": 0, "diff": "available", "hunks": ["+" * 100]}]}
    record = Record(parts=[Part.data_part(raw_json_of(change))])
    reduced, _ = reduce_to_fit(record, 300)
    value = reduced.parts[0].value()
    assert value["id"] == "c1" and reduced.parts[0].state == "truncated"
    files = value.get("changes", [])
    assert all("hunks" not in f for f in files)
    reduced_more, _ = reduce_to_fit(record, 120)
    assert "changes" not in reduced_more.parts[0].value() and reduced_more.parts[0].value()["tool"] == "t1"


def test_execution_records_and_manifests_are_never_taken_out() -> None:
    execution = Part.data_part(raw_json_of({"schema": "execution/1", "id": "e", "pad": "x" * 300}))
    record = Record(parts=[execution, Part.text_part("y" * 300)])
    reduced, _ = reduce_to_fit(record, 100)
    assert reduced.parts[0].data is not None and reduced.parts[1].state == "too_large"


def test_reader_fuzz_raises_only_its_own_error(tmp_path: Path) -> None:
    """Mutated landed lines: the reader decodes them or raises SessionDataError, nothing else."""
    buf = io.BytesIO()
    writer = SessionDataWriter(buf, Header(kind="transcript", session="s", src="x", dialect="t/1", adapter="t/1"))
    sample = Record(ord=3, off=9, bytes=4, id="i", usage=None, flags=["finished"],
                    parts=[Part.call("c", "mcp__a__b", RawJSON(b'{"k":[1,2,{"x":"\\u00e9"}]}')),
                           Part.unknown(b"\xff", "r"), Part.result("c", text="t", failed=True)])
    writer.write(*record_line(sample))
    writer.close()  # records reach the sink by then
    line = buf.getvalue().split(b"\n")[1]
    rng = random.Random(20261129)
    alphabet = b'{}[]",:0123456789.-+eEtrufalsn \\u\xff\x00'
    for _ in range(5000):
        mutated = bytearray(line)
        for _ in range(rng.randint(1, 4)):
            op = rng.random()
            i = rng.randrange(len(mutated))
            if op < 0.4:
                mutated[i] = alphabet[rng.randrange(len(alphabet))]
            elif op < 0.7:
                del mutated[i]
            else:
                mutated.insert(i, alphabet[rng.randrange(len(alphabet))])
        with contextlib.suppress(SessionDataError):
            decode_record(bytes(mutated))
