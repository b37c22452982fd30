"""Golden bytes: each rule of upstream's Session Data encoding, a record built here and the exact
line it lands as, written out here.

The rules (upstream's writer and its structs): keys in the structs' order; every field after
``bytes`` left out when empty, a part's ``bytes`` 0 and ``text`` "" too, ``failed`` written
whenever set; usage zeros left out and usage ``{}`` when the runtime reported one with nothing in
it; strings the writer owns escaped as Go's encoder does with HTML escaping off; unknown parts and
media built with ``json.Marshal`` (HTML escapes on); source data kept as the source wrote it; a
lone surrogate written as U+FFFD. The last tests hold the writer to a file upstream's released
writer landed, and read a file in this project's earlier encoding.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import pytest

from asz_core.sessiondata import (
    Dropped,
    Header,
    NotEncodable,
    Part,
    RawJSON,
    Record,
    SessionDataWriter,
    Usage,
    decode_record,
    encode_record,
    raw_json_marshal,
    raw_json_of,
    read_records,
)
from asz_core.sessiondata.writer import record_line
from asz_core.testing import run_sdcheck

SHA = "0123456789ab"


def _line(*parts: Part, **fields: object) -> bytes:
    return encode_record(Record(ord=1, off=0, sha=SHA, bytes=9, parts=list(parts), **fields))  # type: ignore[arg-type]


# ---- key order ---------------------------------------------------------------------------


def test_every_record_field_lands_in_upstreams_key_order() -> None:
    record = Record(ord=7, off=120, sha=SHA, bytes=33, id="i", parent="p", call="c", run="r",
                    continues="co", tool="t", child="ch", batch="b", label="l", started_by="s",
                    from_="agent", time="2026-01-01T00:00:00Z", trigger="external", flags=["finished"],
                    usage=Usage(1, 2, 3, 4), model="m", parts=[Part.text_part("x")],
                    dropped=[Dropped("reasoning signature", 5, "why")])
    assert encode_record(record) == (
        b'{"ord":7,"off":120,"sha":"0123456789ab","bytes":33,"id":"i","parent":"p","call":"c","run":"r",'
        b'"continues":"co","tool":"t","child":"ch","batch":"b","label":"l","started_by":"s","from":"agent",'
        b'"time":"2026-01-01T00:00:00Z","trigger":"external","flags":["finished"],'
        b'"usage":{"in":1,"out":2,"cache_read":3,"cache_write":4},"model":"m",'
        b'"parts":[{"k":"text","text":"x","state":"available","bytes":1}],'
        b'"dropped":[{"what":"reasoning signature","bytes":5,"why":"why"}]}')


def test_every_part_field_lands_in_upstreams_key_order() -> None:
    part = Part(k="result", state="truncated", bytes=12, text="t", data=RawJSON(b"[1]"), id="i", name="n",
                server="s", server_tool="st", of="o", failed=True, media="image/png", encoding="base64",
                sha256="ff")
    assert _line(part) == (
        b'{"ord":1,"off":0,"sha":"0123456789ab","bytes":9,"parts":[{"k":"result","text":"t","data":[1],'
        b'"id":"i","of":"o","name":"n","server":"s","server_tool":"st","failed":true,"media":"image/png",'
        b'"encoding":"base64","state":"truncated","bytes":12,"sha256":"ff"}]}')


def test_a_call_lands_data_before_its_id_and_name() -> None:
    call = Part.call("toolu_1", "mcp__github__get_issue", RawJSON(b'{"n":1}'))
    assert _line(call) == (
        b'{"ord":1,"off":0,"sha":"0123456789ab","bytes":9,"parts":[{"k":"call","data":{"n":1},'
        b'"id":"toolu_1","name":"mcp__github__get_issue","server":"github","server_tool":"get_issue",'
        b'"state":"available","bytes":7}]}')


def test_a_result_lands_text_and_data_before_of() -> None:
    result = Part.result("toolu_1", text="ok", data=RawJSON(b'{"a":1}'), failed=False)
    assert _line(result) == (
        b'{"ord":1,"off":0,"sha":"0123456789ab","bytes":9,"parts":[{"k":"result","text":"ok",'
        b'"data":{"a":1},"of":"toolu_1","failed":false,"state":"available","bytes":9}]}')


def test_the_header_lands_in_upstreams_key_order_without_an_empty_stream_or_batch() -> None:
    sink = io.BytesIO()
    SessionDataWriter(sink, Header(kind="transcript", session="s", src="a.jsonl", dialect="d/1",
                                   adapter="x/0.1.0", seq=3, at="2026-01-01T00:00:00Z", stream="", batch=None))
    assert sink.getvalue() == (b'{"h":1,"schema":"sd/1","seq":3,"at":"2026-01-01T00:00:00Z","kind":"transcript",'
                               b'"adapter":"x/0.1.0","dialect":"d/1","src":"a.jsonl","session":"s"}\n')


# ---- what is left out --------------------------------------------------------------------


def test_empty_fields_and_an_empty_parts_list_are_left_out() -> None:
    record = Record(ord=1, off=0, sha=SHA, bytes=0, id="", parent="", label="", from_="", flags=[], parts=[],
                    dropped=[], model="")
    assert encode_record(record) == b'{"ord":1,"off":0,"sha":"0123456789ab","bytes":0}'


def test_a_part_leaves_out_bytes_0_an_empty_text_and_an_unset_failed() -> None:
    assert _line(Part(k="text", text=""), Part(k="reasoning", state="redacted")) == (
        b'{"ord":1,"off":0,"sha":"0123456789ab","bytes":9,"parts":[{"k":"text","state":"available"},'
        b'{"k":"reasoning","state":"redacted"}]}')


def test_failed_false_is_written_because_it_was_said() -> None:
    assert b'"failed":false' in _line(Part.result("t", text="x", failed=False))
    assert b'"failed"' not in _line(Part.result("t", text="x"))


def test_usage_leaves_out_zeros_and_lands_empty_when_everything_is_zero() -> None:
    assert _line(usage=Usage(0, 0, 0, 0)) == b'{"ord":1,"off":0,"sha":"0123456789ab","bytes":9,"usage":{}}'
    assert _line(usage=Usage()) == b'{"ord":1,"off":0,"sha":"0123456789ab","bytes":9,"usage":{}}'
    assert _line(usage=Usage(in_=0, out=5, cache_read=None, cache_write=0)) == (
        b'{"ord":1,"off":0,"sha":"0123456789ab","bytes":9,"usage":{"out":5}}')
    assert _line() == b'{"ord":1,"off":0,"sha":"0123456789ab","bytes":9}'  # no usage reported


def test_a_dropped_entry_keeps_bytes_0_and_leaves_out_an_empty_why() -> None:
    assert _line(dropped=[Dropped("x", 0, "")]) == (
        b'{"ord":1,"off":0,"sha":"0123456789ab","bytes":9,"dropped":[{"what":"x","bytes":0}]}')


def test_ord_off_and_bytes_are_written_when_zero() -> None:
    assert encode_record(Record(sha="")) == b'{"ord":0,"off":0,"sha":"","bytes":0}'


# ---- strings the writer owns: Go's encoder, HTML escaping off ------------------------------


def test_a_text_keeps_lt_gt_amp_literal_and_escapes_as_go_does() -> None:
    text = 'a<b>&c "q" \\ \n\r\t\b\f \x01\x1f\x7f é \u2028\u2029 😀'
    assert _line(Part.text_part(text)) == (
        b'{"ord":1,"off":0,"sha":"0123456789ab","bytes":9,"parts":[{"k":"text",'
        b'"text":"a<b>&c \\"q\\" \\\\ \\n\\r\\t\\b\\f \\u0001\\u001f\x7f \xc3\xa9 \\u2028\\u2029 \xf0\x9f\x98\x80",'
        b'"state":"available","bytes":' + str(len(text.encode())).encode() + b'}]}')


def test_a_lone_surrogate_lands_as_u_fffd_in_every_string_the_writer_owns() -> None:
    line = _line(Part.text_part("x\ud83dy"), id="\udc00", label="l\ud800")
    assert line == (b'{"ord":1,"off":0,"sha":"0123456789ab","bytes":9,"id":"\xef\xbf\xbd","label":"l\xef\xbf\xbd",'
                    b'"parts":[{"k":"text","text":"x\xef\xbf\xbdy","state":"available","bytes":5}]}')
    assert decode_record(line).parts[0].text == "x\ufffdy"


def test_a_line_separator_is_escaped_in_our_strings_and_kept_in_source_data() -> None:
    data = RawJSON('{"s":"\u2028"}'.encode())
    assert _line(Part(k="result", of="t", text="\u2028", data=data, bytes=13)) == (
        b'{"ord":1,"off":0,"sha":"0123456789ab","bytes":9,"parts":[{"k":"result","text":"\\u2028",'
        b'"data":{"s":"\xe2\x80\xa8"},"of":"t","state":"available","bytes":13}]}')


# ---- values built with json.Marshal: HTML escapes on ---------------------------------------


def test_an_unknown_part_escapes_lt_gt_amp_as_json_marshal_does() -> None:
    part = Part.unknown('<a href="x">&amp;</a>\u2028\n'.encode(), 'block type "x" is not one this dialect describes')
    assert _line(part) == (
        b'{"ord":1,"off":0,"sha":"0123456789ab","bytes":9,"parts":[{"k":"unknown",'
        b'"text":"block type \\"x\\" is not one this dialect describes",'
        b'"data":"\\u003ca href=\\"x\\"\\u003e\\u0026amp;\\u003c/a\\u003e\\u2028\\n","state":"available","bytes":25}]}')
    assert decode_record(_line(part)).parts[0].raw() == '<a href="x">&amp;</a>\u2028\n'.encode()


def test_an_unknown_part_of_bytes_that_are_not_utf8_is_their_base64() -> None:
    assert _line(Part.unknown(b"\xff<\xfe", "the record is not valid JSON")) == (
        b'{"ord":1,"off":0,"sha":"0123456789ab","bytes":9,"parts":[{"k":"unknown",'
        b'"text":"the record is not valid JSON","data":"/zz+","encoding":"base64","state":"available","bytes":3}]}')


def test_a_lone_surrogate_encoded_in_utf8_is_not_valid_utf8_so_it_is_base64() -> None:
    # ED A0 80 would be U+D800: Go's utf8.Valid refuses it, as Python's strict decoder does
    assert b'"encoding":"base64"' in _line(Part.unknown(b"a\xed\xa0\x80b", "r"))


def test_a_media_part_is_its_base64_as_json_marshal_writes_it() -> None:
    assert _line(Part.media_part("image/png", "iVBO+/=")) == (
        b'{"ord":1,"off":0,"sha":"0123456789ab","bytes":9,"parts":[{"k":"media","data":"iVBO+/=",'
        b'"media":"image/png","state":"available","bytes":7}]}')
    assert raw_json_marshal({"a": "<&>"}) == b'{"a":"\\u003c\\u0026\\u003e"}'
    assert raw_json_of({"a": "<&>"}) == b'{"a":"<&>"}'


# ---- source data: its bytes ----------------------------------------------------------------


def test_source_data_keeps_its_own_escapes_and_loses_only_whitespace_between_tokens() -> None:
    kept = RawJSON(b'{"q":"\\u003c<\\/ \\u00e9","n":1.50,"e":1e400}')
    assert _line(Part.data_part(kept)) == (
        b'{"ord":1,"off":0,"sha":"0123456789ab","bytes":9,"parts":[{"k":"data",'
        b'"data":{"q":"\\u003c<\\/ \\u00e9","n":1.50,"e":1e400},"state":"available","bytes":43}]}')
    spaced = RawJSON(b'{ "a" :\n [1, "x y"] }')
    assert b'"data":{"a":[1,"x y"]}' in _line(Part.data_part(spaced))


# ---- what cannot be encoded ----------------------------------------------------------------


def test_an_integer_past_64_bits_cannot_be_encoded() -> None:
    with pytest.raises(NotEncodable):
        encode_record(Record(ord=1, usage=Usage(in_=2**64)))
    with pytest.raises(NotEncodable):  # on the slow path too (a lone surrogate sends it there)
        encode_record(Record(ord=1, id="\ud800", usage=Usage(in_=2**70)))


def test_data_too_deep_to_read_inside_a_record_cannot_be_encoded_when_it_may_be_that_deep() -> None:
    deep = RawJSON(b"[" * 254 + b"]" * 254)
    with pytest.raises(NotEncodable):
        encode_record(Record(ord=1, parts=[Part.data_part(deep)]), deep=True)
    fits = RawJSON(b"[" * 253 + b"]" * 253)
    line = encode_record(Record(ord=1, parts=[Part.data_part(fits)]), deep=True)
    assert decode_record(line).parts[0].data == fits


# ---- upstream's released writer, and this project's earlier files ----------------------------

RELEASED = "upstream/tests/chain/testdata/mixed-encoding/released-writer.sd"
SESSION = "add1c7ed-0040-4000-8000-000000000040"


def _released_records() -> list[Record]:
    """The three records upstream's fixture holds, built as its test builds them."""
    records: list[Record] = []
    off = 0
    rows = [dict(id="input-old", run="run-old", from_="external", trigger="external", flags=["external_input"],
                 parts=[Part.text_part("ask <old> & now")]),
            dict(id="call-old", parent="input-old", run="run-old", call="llm-old", from_="agent", flags=["finished"],
                 parts=[Part.call("tool-old", "Search", RawJSON(b'{"query":"old <data> & result"}'))]),
            dict(id="result-old", parent="call-old", run="run-old", from_="external",
                 parts=[Part.result("tool-old", text="found <old> & done")])]
    for n, row in enumerate(rows, start=1):
        source = b'{"id":"%s"}' % str(row["id"]).encode()
        records.append(Record(ord=n, off=off, sha=hashlib.sha256(source).hexdigest(), bytes=len(source),
                              time=f"2026-02-01T09:00:{n:02d}Z", **row))  # type: ignore[arg-type]
        off += len(source) + 1
    return records


def _released_header() -> Header:
    return Header(kind="transcript", session=SESSION, src="mixed-encoding/transcript.jsonl", dialect="mock/1",
                  adapter="mock/0.2.0", seq=1, at="2026-02-01T10:00:00Z", stream="main")


def test_records_built_as_upstreams_fixture_land_its_bytes_with_the_current_escapes(corpus: Path) -> None:
    """Upstream's released writer HTML-escaped every string; its current writer, and this one,
    write ``<``, ``>`` and ``&`` literally in the strings they own. Everything else (key order,
    what is left out, the header) is the fixture's bytes."""
    released = (corpus / RELEASED).read_bytes().split(b"\n")
    sink = io.BytesIO()
    writer = SessionDataWriter(sink, _released_header())
    for record in _released_records():
        writer.write(*record_line(record))
    writer.close()
    ours = sink.getvalue().split(b"\n")
    assert ours[0] == released[0]
    unescaped = [line.replace(b"\\u003c", b"<").replace(b"\\u003e", b">").replace(b"\\u0026", b"&")
                 for line in released[1:4]]
    assert ours[1:4] == unescaped
    assert ours[2] == (b'{"ord":2,"off":19,"sha":"df77f0b5a37ef1f6dd671709a0e6910c9a93f781a4c7ec02279a6078ceb3950b",'
                       b'"bytes":17,"id":"call-old","parent":"input-old","call":"llm-old","run":"run-old",'
                       b'"from":"agent","time":"2026-02-01T09:00:02Z","flags":["finished"],"parts":[{"k":"call",'
                       b'"data":{"query":"old <data> & result"},"id":"tool-old","name":"Search",'
                       b'"state":"available","bytes":31}]}')


def test_upstreams_released_file_re_encodes_to_its_own_bytes_but_for_the_escapes_of_our_strings(
        corpus: Path) -> None:
    """Read back, each record lands again as the fixture's line, with the strings the writer
    owns unescaped and the call's data, a source slice, kept with the escapes it was read with."""
    path = corpus / RELEASED
    lines = path.read_bytes().split(b"\n")[1:4]
    again = [encode_record(record) for record in read_records(path)]
    assert again[0] == lines[0].replace(b"\\u003c", b"<").replace(b"\\u003e", b">").replace(b"\\u0026", b"&")
    assert again[1] == lines[1]  # only its data held the escapes, and data is kept as read
    assert again[2] == lines[2].replace(b"\\u003c", b"<").replace(b"\\u003e", b">").replace(b"\\u0026", b"&")


def _old_file() -> bytes:
    """A file as this project's writer landed it before: parts keyed k, id, name, ..., text,
    data, state, bytes; ``"bytes":0``, usage zeros and ``"parts":[]`` written; a lone surrogate
    escaped; no ``usage`` when every count was absent."""
    head = (b'{"h":1,"schema":"sd/1","seq":1,"at":"2026-01-01T00:00:00Z","kind":"transcript",'
            b'"adapter":"claude-code-local/0.1.0","dialect":"claude-code/1","src":"p/s.jsonl","session":"s",'
            b'"stream":"main"}\n')
    body = (b'{"ord":1,"off":0,"sha":"aaaaaaaaaaaa","bytes":10,"id":"u1","from":"agent","usage":{"in":0,"out":7},'
            b'"parts":[{"k":"call","id":"t1","name":"Bash","text":"\\ud800","data":{"c":"ls"},"state":"available",'
            b'"bytes":0}]}\n'
            b'{"ord":2,"off":11,"sha":"bbbbbbbbbbbb","bytes":3,"parts":[]}\n')
    digest = hashlib.sha256(head + body).hexdigest().encode()
    return head + body + b'{"t":"end","records":2,"digest":"' + digest + b'"}\n'


def test_a_file_in_this_projects_earlier_encoding_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "transcript-20260101T000000Z-000001.sd"
    path.write_bytes(_old_file())
    first, second = read_records(path)
    assert first.usage == Usage(in_=0, out=7) and first.parts[0].bytes == 0
    assert (first.parts[0].id, first.parts[0].text, first.parts[0].value()) == ("t1", "\ud800", {"c": "ls"})
    assert second.parts == []
    # landed again it takes the current encoding
    assert encode_record(first) == (
        b'{"ord":1,"off":0,"sha":"aaaaaaaaaaaa","bytes":10,"id":"u1","from":"agent","usage":{"out":7},'
        b'"parts":[{"k":"call","text":"\xef\xbf\xbd","data":{"c":"ls"},"id":"t1","name":"Bash","state":"available"}]}')
    assert encode_record(second) == b'{"ord":2,"off":11,"sha":"bbbbbbbbbbbb","bytes":3}'
    verdict = run_sdcheck(path)
    if verdict is not None:
        assert verdict["ok"], verdict["problems"]


def test_sdcheck_reads_every_golden_rule_landed_in_one_file(tmp_path: Path) -> None:
    path = tmp_path / "golden.sd"
    with open(path, "wb") as f:
        writer = SessionDataWriter(f, _released_header())
        writer.write(*record_line(Record(ord=1, off=0, sha=SHA, bytes=3, usage=Usage(0, 0), id="\ud800",
                            parts=[Part.unknown(b"<\xff>", "r"), Part.unknown(b"<&>", "r"), Part(k="text", text=""),
                                   Part.text_part("\u2028<\x01>")])))
        writer.write(*record_line(Record(ord=2, off=4, sha=SHA, bytes=1)))
        writer.close()
    assert [len(r.parts) for r in read_records(path)] == [4, 0]
    verdict = run_sdcheck(path)
    if verdict is None:
        pytest.skip("sdcheck is not available")
    assert verdict["ok"], verdict["problems"]


def test_data_too_large_to_hand_the_encoder_lands_the_same_bytes_in_its_place() -> None:
    """A part's data of 1 MiB or more, in a record of a source that large, is put into the line
    after encoding, not copied into the encoder: its bytes, and every other part's, land where
    they would have."""
    big = RawJSON(b'{"data":null,"s":"' + b"x" * (1 << 20) + b'"}')
    parts = [Part.data_part(RawJSON(b"null")), Part.result("t", text="<", data=big),
             Part.call("c", "n", RawJSON(b'{"data":1}')), Part.data_part(big)]
    spliced = encode_record(Record(ord=1, sha=SHA, bytes=3 << 20, parts=parts))
    through_the_encoder = encode_record(Record(ord=1, sha=SHA, bytes=1, parts=parts))  # a small source
    assert spliced == through_the_encoder.replace(b'"bytes":1,', b'"bytes":3145728,', 1)
    head = (b'{"ord":1,"off":0,"sha":"0123456789ab","bytes":3145728,"parts":'
            b'[{"k":"data","data":null,"state":"available","bytes":4},')
    assert spliced == head + (
        b'{"k":"result","text":"<","data":' + big + b',"of":"t","state":"available","bytes":'
        + str(len(big) + 1).encode() + b'},{"k":"call","data":{"data":1},"id":"c","name":"n","state":"available",'
        b'"bytes":10},'
        b'{"k":"data","data":' + big + b',"state":"available","bytes":' + str(len(big)).encode() + b'}]}')
    # (a field written null reads as one left out)
    assert [p.data for p in decode_record(spliced).parts] == [None, big, b'{"data":1}', big]
