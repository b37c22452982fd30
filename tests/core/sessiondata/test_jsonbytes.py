"""Source JSON lands byte for byte: the fast path, and the exact slow path for odd input."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asz_core.sessiondata import jsonbytes
from asz_core.sessiondata.jsonbytes import (
    NOT_PROVED,
    PROVED_CANONICAL,
    PROVED_NOT_CANONICAL,
    JSONLine,
    NotJSON,
    compact,
    depth_exceeds,
    encode_value,
    holds_separator,
    loads_strict,
)
from tests.helpers import examples


@pytest.mark.parametrize(("raw", "proof"), [
    (b'{"a":[1,{"b":"x"}],"c":"\xc3\xa9"}', PROVED_CANONICAL),
    (b'{"a": [1, {"b": "x"}], "c": "d"}', PROVED_NOT_CANONICAL),  # whitespace between tokens
    (b'{"c":"\\u00e9","n":1.0e2}', PROVED_NOT_CANONICAL),  # an escape and a number written otherwise
    (b"[" * 255 + b"]" * 255, NOT_PROVED),  # nests deeper than a record holds
    (b'["' + b"x" * (1 << 20) + b'"]', NOT_PROVED),  # too long to be encoded whole as it is parsed
])
def test_a_parse_says_what_it_proved_and_a_parse_told_so_reads_the_line_alike(raw: bytes, proof: int) -> None:
    parsed = JSONLine(raw)
    assert parsed.proof == proof
    told = JSONLine(raw, proved=parsed.proof)
    assert (told.value, told.deep, told.canonical) == (parsed.value, parsed.deep, parsed.canonical)
    assert told.raw_at() == parsed.raw_at()
    if isinstance(parsed.value, dict):
        assert [told.raw_at(key) for key in parsed.value] == [parsed.raw_at(key) for key in parsed.value]


def test_canonical_line_takes_the_fast_path_and_slices_exactly() -> None:
    raw = b'{"a":{"b":[1,"x<y>&z",{"c":null}]},"d":"\xc3\xa9"}'
    line = JSONLine(raw)
    assert line.canonical
    assert line.raw_at("a", "b") == b'[1,"x<y>&z",{"c":null}]'
    assert line.raw_at("d") == b'"\xc3\xa9"'
    assert line.raw_at() == raw


@pytest.mark.parametrize(
    ("raw", "path", "expected"),
    [
        # escapes the source chose are kept, not normalised
        (b'{"a":"\\u00e9\\/","b":1}', ("a",), b'"\\u00e9\\/"'),
        # a lone surrogate escape (orjson refuses it; the slow parser keeps it)
        (b'{"a":{"s":"\\ud800"},"b":2}', ("a",), b'{"s":"\\ud800"}'),
        # an integer past 64 bits keeps every digit
        (b'{"n":[18446744073709551616123]}', ("n",), b"[18446744073709551616123]"),
        # whitespace between tokens goes; inside strings it stays
        (b'{ "a" : { "k" : "two  spaces" ,\t"l" : [ 1 , 2 ] } }', ("a",), b'{"k":"two  spaces","l":[1,2]}'),
        # a number spelled as JavaScript writes it
        (b'{"x":1e+21,"y":[1E2]}', ("y",), b"[1E2]"),
        # the last of duplicate keys, as parsing keeps it
        (b'{"a":1,"a":{"z":0}}', ("a",), b'{"z":0}'),
        # brackets and quotes inside strings do not confuse the scan
        (b'{"a" : [ {"q":"]}\\""} , 7 ] }', ("a", 1), b"7"),
        (b'{"a" : [ {"q":"]}\\""} , 7 ] }', ("a", 0), b'{"q":"]}\\""}'),
    ],
)
def test_slow_path_slices_the_source_bytes(raw: bytes, path: tuple[str | int, ...], expected: bytes) -> None:
    line = JSONLine(raw)
    assert not line.canonical
    assert line.raw_at(*path) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # no whitespace byte at all: the line's own bytes, escapes and all, with no proof needed
        (b'{"a":"\\u00e9\\/","n":1E2,"a":{"z":0}}', b'{"a":"\\u00e9\\/","n":1E2,"a":{"z":0}}'),
        # whitespace inside a string only: the encoding proves the line, which lands as it is
        (b'{"a":"two  spaces\\tand a tab"}', b'{"a":"two  spaces\\tand a tab"}'),
        # whitespace between tokens goes, whichever whitespace byte it is
        (b'{"a":\t"\\u00e9"}', b'{"a":"\\u00e9"}'),
        (b'{"a":"\\u00e9",\r"b": [1 ,2]}', b'{"a":"\\u00e9","b":[1,2]}'),
    ],
)
def test_the_whole_line_is_its_own_bytes_compacted(raw: bytes, expected: bytes) -> None:
    assert JSONLine(raw).raw_at() == expected


def test_missing_path_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        JSONLine(b'{"a":1}').raw_at("b")
    with pytest.raises(KeyError):
        JSONLine(b'{"a" : 1}').raw_at("b")


@pytest.mark.parametrize("raw", [b"", b"{", b'{"a":NaN}', b'{"a":Infinity}', b"\xff\xfe", b'{"a":1}x'])
def test_not_json_is_refused(raw: bytes) -> None:
    with pytest.raises(NotJSON):
        loads_strict(raw)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # a lone surrogate escape is a string holding it (orjson refuses it; the standard library reads it)
        (b'["\\ud800","\\udc00x"]', ["\ud800", "\udc00x"]),
        # an integer a double can hold but 64 bits cannot reads as a double, as Go reads an untyped number
        (b"[18446744073709551616,-9223372036854775809]", [1.8446744073709552e19, -9.223372036854776e18]),
        # past a double's range it is refused by orjson, and the standard library keeps every digit
        (b"[" + b"1" * 400 + b"]", [int("1" * 400)]),
        (b"[1E400,-1e400]", [float("inf"), float("-inf")]),
        # the last of duplicate keys wins, in the first one's place
        (b'{"a":1,"b":2,"a":3}', {"a": 3, "b": 2}),
        (b"[-0,-0.0,1E2,1e-400]", [0, -0.0, 100.0, 0.0]),
        (b" {}\t\r\n", {}),
    ],
)
def test_odd_input_parses_to_the_values_its_readers_are_written_for(raw: bytes, expected: object) -> None:
    """What the parse of a line yields for input parsers disagree on; a parser put in orjson's
    place must yield the same (the typed reads judge these values, the slices keep the bytes)."""
    for value in (JSONLine(raw).value, loads_strict(raw)):
        assert repr(value) == repr(expected)  # repr: an int is not a float, -0.0 is not 0.0


@pytest.mark.parametrize("raw", [
    b'"\xff"', b'"\xed\xa0\x80"', b'"\xc0\xaf"', b'"\xf4\x90\x80\x80"',  # not UTF-8 (an encoded surrogate too)
    b"\xef\xbb\xbf{}",  # a byte order mark
    b"[1,]", b'{"a":1,}', b"01", b'"\x01"', b"  ", b"-Infinity", b"1 2",
])
def test_a_line_a_strict_reader_refuses_is_not_json(raw: bytes) -> None:
    with pytest.raises(NotJSON):
        JSONLine(raw)
    with pytest.raises(NotJSON):
        loads_strict(raw)


def test_nesting_limit_is_256() -> None:
    assert loads_strict(b"[" * 256 + b"]" * 256) is not None
    assert not depth_exceeds(b"[" * 256 + b"]" * 256)
    assert depth_exceeds(b"[" * 257 + b"]" * 257)
    with pytest.raises(NotJSON):
        loads_strict(b"[" * 257 + b"]" * 257)
    # brackets inside strings do not count
    assert not depth_exceeds(b'["' + b"[" * 400 + b'"]')
    with pytest.raises(NotJSON):
        loads_strict(b"[" * 10_000 + b"]" * 10_000)
    # objects count as lists do, and many containers side by side are not deep
    assert loads_strict(b'{"":' * 256 + b"0" + b"}" * 256) is not None
    with pytest.raises(NotJSON):
        loads_strict(b'{"":' * 256 + b"[]" + b"}" * 256)
    assert len(loads_strict(b"[" + b"[{}]," * 400 + b"[]]")) == 401


def _nested(depth: int, inner: bytes = b"0") -> bytes:
    """``depth`` objects and lists, alternating, nested in one another around ``inner``."""
    return b"".join(b'{"k":' if n % 2 else b"[" for n in range(depth)) + inner + b"".join(
        b"}" if n % 2 else b"]" for n in reversed(range(depth)))


def test_orjson_still_refuses_to_encode_past_254_so_one_encoding_proves_a_line_shallow() -> None:
    # the proof a line is parsed with rests on this limit of orjson's, probed at import; were it
    # lifted, lines would be proved the slower way, and this says so
    assert jsonbytes._ENCODER_PROVES_SHALLOW
    orjson.dumps(orjson.loads(_nested(254)))
    with pytest.raises(orjson.JSONEncodeError):
        orjson.dumps(orjson.loads(_nested(255)))


@pytest.mark.parametrize("prove_whole_below", [1 << 20, 0], ids=["proved as parsed", "proved as needed"])
def test_a_line_is_deep_only_past_what_a_record_holds_and_refused_past_256(
        prove_whole_below: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonbytes, "_PROVE_WHOLE_BELOW", prove_whole_below)
    # many containers side by side are not deep, nor are brackets inside strings
    wide = b"[" + b",".join([b'{"a":[1]}'] * 300) + b"]"
    assert not JSONLine(wide).deep
    assert JSONLine(wide).canonical
    assert not JSONLine(b'["' + b"[" * 400 + b'"]').deep
    assert not JSONLine(_nested(253)).deep
    for depth in (254, 256):
        line = JSONLine(_nested(depth))
        assert line.deep  # a slice of it, three deeper inside a record, could pass 256
        assert line.raw_at() == _nested(depth)
    assert JSONLine(b"[" + _nested(254) + b"," + wide + b"]").deep
    for depth in (257, 600):
        with pytest.raises(NotJSON):
            JSONLine(_nested(depth))
    # a value the encoder refuses for what it holds, not for its depth, is walked: still right
    big = b"[" * 255 + b"18446744073709551616" + b"]" * 255
    assert JSONLine(big).deep and not JSONLine(big).canonical
    assert not JSONLine(b'[[["\\ud800"]]]').deep


@pytest.mark.parametrize("prove_whole_below", [1 << 20, 0], ids=["proved as parsed", "proved as needed"])
def test_a_line_is_canonical_exactly_when_its_encoding_is_its_bytes(
        prove_whole_below: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonbytes, "_PROVE_WHOLE_BELOW", prove_whole_below)
    for raw in (b'{"a":"two  words","b":[1,2.5,null]}', b'"x"', b"[]", b'{"e":"\\u001f\\n\\"\\\\"}'):
        assert JSONLine(raw).canonical
        assert JSONLine(raw).raw_at() == raw
    for raw in (b'{"a": 1}', b'{"a":"\\u00e9"}', b'{"a":1E2}', b'{"a":1,"a":2}', b'{"a":"\\/"}', b" [1]"):
        line = JSONLine(raw)
        assert not line.canonical
        assert line.raw_at() == compact(raw)


def test_a_separator_is_found_in_an_encoding_only_when_it_is_there() -> None:
    assert not holds_separator(b'{"a":"plain"}')
    assert not holds_separator('{"a":"\u2014 \u201cquoted\u201d \u2027"}'.encode())
    assert holds_separator('{"a":"x\u2028"}'.encode())
    assert holds_separator('{"a":"\u2029x"}'.encode())


def _depth_by_scanning(raw: bytes) -> int:
    """The deepest nesting of ``raw``, byte by byte: the reference the fast check must agree with."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in b"[{":
            depth += 1
            deepest = max(deepest, depth)
        elif byte in b"]}":
            depth -= 1
    return deepest


@settings(max_examples=examples(100))
@given(st.recursive(st.none() | st.integers(-(2**63), 2**63 - 1) | st.text(alphabet='[]{}"\\ ab', max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                    max_leaves=400),
       st.integers(min_value=1, max_value=40))
def test_depth_check_agrees_with_a_byte_scan(value: object, limit: int) -> None:
    raw = orjson.dumps(value)
    assert depth_exceeds(raw, limit) == (_depth_by_scanning(raw) > limit)


_TRICKY_TEXT = st.text(alphabet='[]{}"\\,: \t\nabé\u2028', max_size=8)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False, allow_infinity=False)
    | _TRICKY_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TRICKY_TEXT, inner, max_size=4),
    max_leaves=60)


@st.composite
def _line_and_path(draw: st.DrawFn) -> tuple[dict[str, object], tuple[str | int, ...]]:
    value = draw(st.dictionaries(_TRICKY_TEXT, _JSON, min_size=1, max_size=4))
    path: list[str | int] = []
    here: object = value
    while isinstance(here, (dict, list)) and here and draw(st.booleans() if path else st.just(True)):
        step = draw(st.sampled_from(sorted(here) if isinstance(here, dict) else range(len(here))))
        path.append(step)
        here = here[step]  # type: ignore[index]
    return value, tuple(path)


@settings(max_examples=examples(300))
@given(_line_and_path(), st.sampled_from([None, 0, 2, "\t"]), st.booleans())
def test_any_value_of_a_spaced_line_is_sliced_as_its_compact_encoding(
        line_and_path: tuple[dict[str, object], tuple[str | int, ...]], indent: int | str | None,
        ascii_only: bool) -> None:
    # the slow path's scan, over strings holding quotes, backslashes, brackets and separators:
    # the bytes at the path are what the same encoder writes for that value with no spaces
    import json

    value, path = line_and_path
    raw = json.dumps(value, indent=indent, ensure_ascii=ascii_only).encode()
    line = JSONLine(raw)
    at = value
    for step in path:
        at = at[step]  # type: ignore[index]
    expected = json.dumps(at, separators=(",", ":"), ensure_ascii=ascii_only).encode()
    assert line.raw_at(*path) == expected
    if isinstance(at, list):
        assert list(line.items_at(*path)) == [
            json.dumps(item, separators=(",", ":"), ensure_ascii=ascii_only).encode() for item in at]


def test_compact_keeps_string_whitespace() -> None:
    assert compact(b' { "a b" : "c\\"  d" , "e" :\n[ ] } ') == b'{"a b":"c\\"  d","e":[]}'


def test_strings_we_encode_keep_lt_gt_amp_and_escape_line_separators() -> None:
    assert encode_value("a<b>&c") == b'"a<b>&c"'
    assert encode_value("x\u2028y\u2029z") == b'"x\\u2028y\\u2029z"'
    # a lone surrogate is U+FFFD, as Go's decoder reads it before upstream's writer sees it
    assert encode_value("lone \ud800 surrogate") == b'"lone \xef\xbf\xbd surrogate"'
    assert orjson.loads(encode_value("tab\tquote\"nl\n")) == "tab\tquote\"nl\n"
    assert encode_value({"k": ["\u2028", 1]}) == b'{"k":["\\u2028",1]}'
    assert encode_value({"k": "\udfff"}) == b'{"k":"\xef\xbf\xbd"}'


@pytest.mark.parametrize(
    "raw",
    [
        b'{"h":[{"a":1},"x",[2,3],null],"z":0}',                       # canonical: the fast path
        b'{"h": [{"a": 1}, "x" , [2, 3],\n null], "z": 0}',           # spaced: the slow path
        b'{"h":[{"s":"\\u00e9 ] , ["},{"n":18446744073709551616123}]}',  # escapes, big ints
    ],
)
def test_items_at_slices_each_element_as_raw_at_does(raw: bytes) -> None:
    line = JSONLine(raw)
    count = len(line.value["h"])
    assert list(line.items_at("h")) == [line.raw_at("h", i) for i in range(count)]


def test_items_at_on_an_empty_list_and_on_a_value_that_is_not_a_list() -> None:
    assert list(JSONLine(b'{"h": [ ]}').items_at("h")) == []
    with pytest.raises(TypeError):
        list(JSONLine(b'{"h": {}}').items_at("h"))
    with pytest.raises(KeyError):
        list(JSONLine(b'{"h": []}').items_at("g"))
