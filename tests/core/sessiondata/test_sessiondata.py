"""The Session Data writer and strict reader, read back by sdcheck where it is available."""

from __future__ import annotations

import base64
import hashlib
import io
from pathlib import Path

import orjson
import pytest

from asz_core.sessiondata import (
    Dropped,
    Header,
    Part,
    RawJSON,
    Record,
    SessionDataError,
    SessionDataWriter,
    Usage,
    check_file,
    decode_record,
    encode_record,
    open_file,
    parse_instant,
    read_records,
    split_mcp_name,
)
from asz_core.sessiondata.writer import record_line
from asz_core.testing import run_sdcheck


def header(**over: object) -> Header:
    fields: dict[str, object] = {"kind": "transcript", "session": "s-1", "src": "a/b.jsonl",
                                 "dialect": "test/1", "adapter": "test/0.1", "seq": 1,
                                 "at": "2026-01-01T00:00:00Z", "stream": "main"}
    fields.update(over)
    return Header(**fields)  # type: ignore[arg-type]


def write_file(path: Path, records: list[Record], head: Header | None = None) -> None:
    with open(path, "wb") as f:
        writer = SessionDataWriter(f, head or header())
        for r in records:
            writer.write(*record_line(r))
        writer.close()


def sample_records() -> list[Record]:
    return [
        Record(ord=1, off=0, sha="abc123abc123", bytes=10, id="u1", from_="external",
               time="2026-01-01T12:00:00.5Z", flags=["external_input"],
               parts=[Part.text_part("hello <world> & \u2028 you")]),
        Record(ord=2, off=11, sha="def456def456", bytes=20, id="u2", parent="u1", call="msg_1",
               from_="agent", time="2026-01-01T12:00:00Z", model="m",
               usage=Usage(in_=2, out=331, cache_read=20729, cache_write=19709),
               parts=[Part.call("toolu_1", "mcp__github__get_issue", RawJSON(b'{"n":1,"s":"\\u00e9"}')),
                      Part.reasoning(None, state="unavailable"),
                      Part.unknown(b"\xff\xfe not utf8", "block type \"x\" is not one this dialect describes")],
               dropped=[Dropped("reasoning signature", 588, "a provider verifies it; a reader cannot read it")]),
        Record(ord=3, off=32, bytes=5, parts=[Part.result("toolu_1", text="ok", failed=False),
                                              Part.result("toolu_2", data=RawJSON(b"[1,2]"))]),
    ]


def test_written_file_reads_back_equal(tmp_path: Path) -> None:
    path = tmp_path / "f.sd"
    records = sample_records()
    write_file(path, records)
    landed = open_file(path)
    assert landed.header["session"] == "s-1" and landed.header["h"] == 1
    back = list(landed)
    assert [encode_record(r) for r in back] == [encode_record(r) for r in records]
    assert back[1].parts[0].server == "github" and back[1].parts[0].server_tool == "get_issue"
    assert back[1].parts[0].data == b'{"n":1,"s":"\\u00e9"}'  # the source's own escape kept
    assert back[1].parts[2].raw() == b"\xff\xfe not utf8"
    assert back[1].parts[2].encoding == "base64"
    assert back[2].parts[0].failed is False and back[2].parts[1].failed is None
    assert check_file(path)[1] == 3


def test_writer_encoding_rules(tmp_path: Path) -> None:
    line = encode_record(sample_records()[0])
    assert b"hello <world> & \\u2028 you" in line
    closing = (tmp_path / "f.sd")
    write_file(closing, sample_records())
    lines = closing.read_bytes().split(b"\n")
    assert lines[-1] == b""
    end = orjson.loads(lines[-2])
    body = b"".join(line + b"\n" for line in lines[:-2])
    assert end == {"t": "end", "records": 3, "digest": hashlib.sha256(body).hexdigest()}


@pytest.mark.parametrize(("text", "data"), [
    ("caf\u00e9 \u00a8 \u00a9 \u2019", '["\u00e9\u00a8"]'),  # 0xA8 and 0xA9 bytes, no separator
    ("\u2028", None),
    ("\u2029", None),
    ("x", '["\u2028\u2029"]'),  # a source's data keeps what it wrote
])
def test_a_separator_is_escaped_in_our_strings_whatever_else_holds_its_bytes(text: str, data: str | None) -> None:
    # U+2028 and U+2029 end in the bytes 0xA8 and 0xA9, as é, ¨ and © do: only the separators
    # in the record's own strings are escaped, each by itself
    parts = [Part.text_part(text)] + ([Part.data_part(RawJSON(data.encode()))] if data else [])
    line = encode_record(Record(ord=1, parts=parts))
    escaped = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    assert f'"text":"{escaped}"'.encode() in line
    if data:
        assert b'"data":' + data.encode() in line
    assert decode_record(line).parts[0].text == text


def test_a_record_is_always_one_line() -> None:
    record = Record(ord=1, parts=[Part.data_part(RawJSON(b'{\n  "a": "x\\ny",\r\n  "b": [1, 2]\n}'))])
    line = encode_record(record)
    assert b"\n" not in line and b"\r" not in line
    assert decode_record(line).parts[0].data == b'{"a":"x\\ny","b":[1,2]}'


def test_writer_refuses_a_bad_header() -> None:
    for bad in ({"kind": ""}, {"session": ""}, {"src": ""}, {"dialect": ""}):
        with pytest.raises(SessionDataError):
            SessionDataWriter(io.BytesIO(), header(**bad))


def test_summary_counts_what_was_written(tmp_path: Path) -> None:
    buf = io.BytesIO()
    writer = SessionDataWriter(buf, header())
    for r in sample_records():
        writer.write(*record_line(r))
    summary = writer.close()
    data = buf.getvalue()
    assert summary.bytes == len(data) and summary.lines == 5 and summary.records == 3
    assert summary.sha256 == hashlib.sha256(data).hexdigest()
    # times compare as instants: 12:00:00Z is earlier than 12:00:00.5Z
    assert summary.from_time == "2026-01-01T12:00:00Z"
    assert summary.through_time == "2026-01-01T12:00:00.5Z"


@pytest.mark.parametrize("field,value", [("ord", 1.0), ("ord", "1"), ("off", -1), ("bytes", True),
                                         ("bytes", 2**63), ("sha", 12), ("flags", "x"),
                                         ("flags", [1]), ("usage", {"in": 1.5}), ("parts", {}),
                                         ("time", 5), ("dropped", [{"bytes": "9"}])])
def test_a_field_of_another_type_is_not_a_record(field: str, value: object) -> None:
    obj = {"ord": 1, "off": 0, "bytes": 1, "parts": []}
    obj[field] = value
    with pytest.raises(SessionDataError):
        decode_record(_dumps(obj))


def _dumps(obj: object) -> bytes:
    import json
    return json.dumps(obj, separators=(",", ":")).encode()


def test_integers_are_whole_and_64_bit() -> None:
    for text in (b'{"ord":1.0}', b'{"ord":1e3}', b'{"ord":true}', b'{"off":9223372036854775808}'):
        with pytest.raises(SessionDataError):
            decode_record(text)
    assert decode_record(b'{"bytes":-9223372036854775808}').bytes == -(2**63)


@pytest.mark.parametrize("part,problem", [({"k": "text", "state": "lost"}, "state"),
                                          ({"k": "text", "failed": "no"}, "failed"),
                                          ({"k": "text", "encoding": "base64"}, "encoding"),
                                          ({"k": "unknown", "encoding": "hex"}, "encoding"),
                                          ({"k": 1}, "k"), ({"k": "text", "bytes": 1.5}, "bytes")])
def test_parts_are_typed(part: dict[str, object], problem: str) -> None:
    with pytest.raises(SessionDataError, match=problem):
        decode_record(_dumps({"ord": 1, "parts": [part]}))


def test_null_is_absent_and_unknown_fields_are_ignored() -> None:
    record = decode_record(b'{"ord":1,"off":0,"id":null,"parts":[{"k":"text","text":null,"zz":1}],"later":{"x":1}}')
    assert record.id is None and record.parts[0].text is None


def test_more_than_256_levels_does_not_decode() -> None:
    deep = b'{"ord":1,"parts":[{"k":"data","data":' + b"[" * 254 + b"]" * 254 + b"}]}"
    with pytest.raises(SessionDataError):
        decode_record(deep)
    ok = b'{"ord":1,"parts":[{"k":"data","data":' + b"[" * 253 + b"]" * 253 + b"}]}"
    assert decode_record(ok).parts[0].data is not None


def _landed(tmp_path: Path) -> tuple[Path, bytes]:
    path = tmp_path / "f.sd"
    write_file(path, sample_records())
    return path, path.read_bytes()


def test_a_file_read_to_its_end_gives_the_digest_of_its_bytes_and_only_then(tmp_path: Path) -> None:
    """What a caller would read the file again for: the SHA-256 of its bytes, as they were read."""
    path, data = _landed(tmp_path)
    with open_file(path) as landed:
        assert landed.sha256 is None  # nothing past the header is read yet
        assert len(list(landed)) == 3
    assert landed.sha256 == hashlib.sha256(data).hexdigest()
    cut = tmp_path / "cut.sd"
    cut.write_bytes(data.replace(b'"records":3', b'"records":2'))
    refused = open_file(cut)
    with pytest.raises(SessionDataError):
        list(refused)
    assert refused.sha256 is None  # bytes that do not check have no digest to give


def test_a_file_read_from_the_bytes_a_caller_holds_reads_as_it_does_from_disk(tmp_path: Path) -> None:
    path, data = _landed(tmp_path)
    from_disk = open_file(path)
    from_bytes = open_file(path, data=data)
    assert from_bytes.header == from_disk.header
    assert [encode_record(r) for r in from_bytes] == [encode_record(r) for r in from_disk]
    assert from_bytes.sha256 == from_disk.sha256 == hashlib.sha256(data).hexdigest()
    with pytest.raises(SessionDataError):
        list(open_file(path, data=data.replace(b'"u1"', b'"u9"')))


def test_reader_refuses_cut_or_recounted_files(tmp_path: Path) -> None:
    _path, data = _landed(tmp_path)
    lines = data.split(b"\n")
    cases = {
        "no closing line": b"\n".join(lines[:-2]) + b"\n",
        "count": data.replace(b'"records":3', b'"records":2'),
        "digest": data.replace(lines[1], lines[1].replace(b'"u1"', b'"u9"')),
        "no newline": data[:-1],
        "after": data + b'{"ord":9}\n',
    }
    for name, blob in cases.items():
        bad = tmp_path / f"{name}.sd"
        bad.write_bytes(blob)
        with pytest.raises(SessionDataError):
            check_file(bad)


def test_reader_stops_at_the_first_bad_line(tmp_path: Path) -> None:
    _path, data = _landed(tmp_path)
    lines = data.split(b"\n")
    lines[2] = b'{"ord":"two"}'
    bad = tmp_path / "bad.sd"
    bad.write_bytes(b"\n".join(lines))
    seen = []
    with pytest.raises(SessionDataError) as info:
        for record in read_records(bad):
            seen.append(record.ord)
    assert seen == [1] and info.value.line == 3


def test_every_single_byte_mutation_is_refused(tmp_path: Path) -> None:
    """Flip, cut or re-type any one byte of a landed file: the reader refuses it."""
    _path, data = _landed(tmp_path)
    bad = tmp_path / "m.sd"
    step = max(1, len(data) // 300)
    for i in range(0, len(data), step):
        for blob in (data[:i] + bytes([data[i] ^ 0x01]) + data[i + 1:], data[:i] + data[i + 1:]):
            bad.write_bytes(blob)
            with pytest.raises(SessionDataError):
                check_file(bad)


def test_upstream_released_writer_file_reads_and_verifies(corpus: Path) -> None:
    path = corpus / "upstream/tests/chain/testdata/mixed-encoding/released-writer.sd"
    records = list(read_records(path))
    assert [r.ord for r in records] == [1, 2, 3]
    assert records[0].parts[0].text == "ask <old> & now"
    assert records[1].parts[0].data == b'{"query":"old \\u003cdata\\u003e \\u0026 result"}'
    assert len(records[0].sha or "") == 64


def test_sdcheck_accepts_what_the_writer_writes(tmp_path: Path) -> None:
    path, _ = _landed(tmp_path)
    verdict = run_sdcheck(path)
    if verdict is None:
        pytest.skip("sdcheck is not available")
    assert verdict["ok"], verdict["problems"]


@pytest.mark.parametrize(
    ("earlier", "later"),
    [("2026-01-01T12:00:00.1Z", "2026-01-01T12:00:00.11Z"),
     ("2026-01-01T12:00:00Z", "2026-01-01T12:00:00.5Z"),
     ("2026-01-01T20:00:00+08:00", "2026-01-01T12:00:01Z")],
)
def test_times_compare_as_instants(earlier: str, later: str) -> None:
    a, b = parse_instant(earlier), parse_instant(later)
    assert a is not None and b is not None and a < b


@pytest.mark.parametrize("text", ["2026-01-01", "2026-01-01T12:00Z", "2026-02-30T00:00:00Z",
                                  "2026-01-01T12:00:00.1234567890Z", "yesterday", ""])
def test_a_value_that_is_not_a_time_means_no_time(text: str) -> None:
    assert parse_instant(text) is None


def test_nine_fraction_digits_are_kept() -> None:
    assert parse_instant("1970-01-01T00:00:00.000000001Z") == 1


@pytest.mark.parametrize(("name", "split"), [
    ("mcp__a__b", ("a", "b")),
    ("mcp__a__b__c", (None, None)),
    ("mcp__foo___bar", (None, None)),
    ("mcp__claude_ai_Claude_Docs__search", ("claude_ai_Claude_Docs", "search")),
    ("Bash", (None, None)),
    ("mcp____x", (None, None)),
])
def test_mcp_split_is_exact(name: str, split: tuple[str | None, str | None]) -> None:
    assert split_mcp_name(name) == split


def test_unknown_part_raw_whatever_the_landed_escapes() -> None:
    assert Part(k="unknown", data=RawJSON(b'"a\\u003cb\\/"')).raw() == b"a<b/"
    b64 = base64.b64encode(b"\x00\xff").decode()
    assert Part(k="unknown", encoding="base64", data=RawJSON(f'"{b64}"'.encode())).raw() == b"\x00\xff"
    with pytest.raises(ValueError):
        Part.text_part("x").raw()


def test_usage_lands_the_counts_it_has_in_the_spec_order() -> None:
    assert list(Usage(cache_write=5, in_=2).to_json().items()) == [("in", 2), ("cache_write", 5)]
    assert Usage(out=0).to_json() == {}  # a zero is left out, as upstream leaves it out
    assert Usage().to_json() == {}


class _Chunks:
    """A sink that keeps each chunk it is handed."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []

    def write(self, data: bytes) -> int:
        self.chunks.append(data)
        return len(data)


def test_records_handed_on_in_batches_land_every_byte_and_digest_as_written_one_by_one() -> None:
    sink = _Chunks()
    writer = SessionDataWriter(sink, header())
    records = [Record(ord=n, off=n, bytes=1, parts=[Part.text_part("x" * size)])
               for n, size in enumerate([10, 40_000, 30_000, 5, 70_000, 3, 200_000, 1, 65_520], start=1)]
    lines = [encode_record(r) for r in records]
    expected = orjson.dumps(header().to_json()) + b"\n"
    for record, line in zip(records, lines, strict=True):
        writer.write(line, record.ord, record.off, record.bytes, record.time)
        expected += line + b"\n"
        assert writer.size == len(expected)  # counted as written, whether handed on yet or not
    summary = writer.close()
    landed = b"".join(sink.chunks)
    body = landed[:landed.rindex(b'{"t":"end"')]
    assert body == expected
    assert summary.digest == hashlib.sha256(expected).hexdigest()
    assert summary.sha256 == hashlib.sha256(landed).hexdigest()
    # a line of a batch's size or more is handed on by itself, not copied into a batch
    assert any(chunk is lines[4] for chunk in sink.chunks)
    assert any(chunk is lines[6] for chunk in sink.chunks)
    assert len(sink.chunks) < 2 + 2 * len(lines)


def test_each_part_of_a_record_that_is_not_its_own_encoding_reads_its_own_data_bytes() -> None:
    # escapes orjson would not write make the line non-canonical, so the reader slices every
    # part's data from the line's bytes: each part gets its own, whatever the parts around it
    datas = [b'{"q":"\\u003c]}\\"","n":[1,{"d":[]}]}', b'"\\u00e9 [ {"', b"[]", b'{"data":{"data":1}}', b"7"]
    parts = b",".join(b'{"k":"call","id":"c%d","name":"t","data":%s}' % (n, data) for n, data in enumerate(datas))
    line = b'{"ord":1,"off":0,"bytes":9,"usage":{"in":1},"parts":[%s,{"k":"text","text":"x"}]}' % parts
    record = decode_record(line)
    assert [bytes(part.data or b"") for part in record.parts] == [*datas, b""]
    assert [part.id for part in record.parts] == ["c0", "c1", "c2", "c3", "c4", None]


def test_of_two_fields_that_are_not_strings_the_reader_names_the_first_in_the_specs_order() -> None:
    with pytest.raises(SessionDataError, match=r"^id is not a string"):
        decode_record(b'{"ord":1,"off":0,"bytes":1,"time":5,"id":[3]}')
    with pytest.raises(SessionDataError, match=r"^part 0: text is not a string"):
        decode_record(b'{"ord":1,"off":0,"bytes":1,"parts":[{"k":"text","sha256":1,"text":false}]}')
    record = decode_record(b'{"ord":1,"off":0,"bytes":1,"from":"x","id":null,"parts":[{"k":"text","text":null}]}')
    assert record.from_ == "x" and record.id is None and record.parts[0].text is None
