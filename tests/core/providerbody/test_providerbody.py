"""asz_core.providerbody: cutting, manifests, landing with its checks, rebuilding, verify.

Bodies here are small Messages-API-shaped JSON built in the test, so each rule can be seen
on its own; the corpus tests (test_provider_corpus.py) hold the same code to real sizes.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path

import pytest

from asz_adapters.claude_code_provider import names
from asz_core.providerbody import (
    CUT,
    REDUCED,
    WHOLE,
    BodyDamaged,
    BodyInfo,
    BodyLander,
    BodyStore,
    BodyTooLarge,
    BodyUnavailable,
    CopySeg,
    CutRules,
    KnownValues,
    LitSeg,
    Manifest,
    ManifestError,
    OtherCopyMismatch,
    PartSeg,
    PieceSeg,
    ProviderBodies,
    common_prefix,
    encode_body,
    find_pieces,
    manifest_of,
    provider_body_files,
)
from asz_core.root.skeletons import land_skeleton
from asz_core.root.storage import StorageRoot
from asz_core.sessiondata import Header, Part, Record, raw_json_of
from asz_core.sessiondata.skeleton import Removal
from asz_core.sessiondata.writer import record_line
from asz_core.testing import run_sdcheck
from asz_core.verify import verify_root

SESSION = "0b0e7b5c-5d55-4a3c-9f55-1e4a9b1c2d3e"
RULES = CutRules(arrays=(("tools",),), first=("messages",), chain=names.chain_of)
TOOLS = [{"name": f"Tool{n}", "description": f"does thing {n} " + "x" * 1500,
          "input_schema": {"type": "object", "properties": {"a": {"type": "string"}}}} for n in range(3)]


def body(messages: list[object], tools: list[object] = TOOLS, **extra: object) -> bytes:
    value = {"model": "m", "messages": messages, "system": [{"type": "text", "text": "S" * 2000}],
             "tools": tools, **extra}
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def user(text: str, newest: bool = False) -> dict[str, object]:
    if newest:
        return {"role": "user", "content": [{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}]}
    return {"role": "user", "content": text}


def header() -> Header:
    return Header(kind="provider_body", session=SESSION, src=".", dialect="test/1", adapter="test/0")


def info(name: str, role: str = "request") -> BodyInfo:
    return BodyInfo(record_id=f"{name}.{role}", role=role, src=f"{name}.{role}.json", session=SESSION)


def land(root: Path, bodies: list[tuple[str, bytes]], max_bytes: int = 2 * 1024 * 1024,
         started: int = 1) -> list[object]:
    """Land ``(name, body)`` in one pass into ``root``; the LandedBody of each."""
    store_root = StorageRoot(root, pass_started_ns=started * 10**9)
    out = []
    with store_root.open_session(SESSION) as session:
        reader = ProviderBodies(session.dir)
        reader.load_all()
        lander = BodyLander(session, reader.store, header, max_bytes, RULES)
        for name, raw in bodies:
            out.append(lander.add(raw, info(name)))
        lander.finish()
    return out


# ---- pieces ------------------------------------------------------------------------------------


def test_pieces_are_tool_definitions_and_long_strings() -> None:
    raw = body([user("short"), user("L" * 1100, newest=True)])
    spans = find_pieces(raw, RULES.arrays)[0]
    texts = [raw[s.start : s.end] for s in spans]
    assert b'"' + b"S" * 2000 + b'"' in texts             # the system prompt: a long string
    assert b'"' + b"L" * 1100 + b'"' in texts             # a long message
    for tool in TOOLS:                                     # each tool whole, not its description
        assert json.dumps(tool, separators=(",", ":")).encode() in texts
    assert not any(t.startswith(b'"does thing') for t in texts)
    assert all(a.end <= b.start for a, b in itertools.pairwise(spans))


def test_a_string_of_1023_bytes_with_quotes_is_not_a_piece_and_1024_is() -> None:
    for size, pieces in ((1021, 0), (1022, 1)):
        raw = json.dumps({"a": "x" * size}).encode()
        assert len(find_pieces(raw, ())[0]) == pieces, size


def test_a_key_named_tools_deeper_down_is_not_the_tool_list() -> None:
    raw = json.dumps({"metadata": {"a": {"tools": [{"n": 1}]}}, "tools": [{"n": 2}]},
                     separators=(",", ":")).encode()
    assert [raw[s.start : s.end] for s in find_pieces(raw, RULES.arrays)[0]] == [b'{"n":2}']


def test_a_tool_definition_with_whitespace_is_a_piece_whole() -> None:
    raw = b'{"tools":[{"n": 1, "d": "' + b"d" * 1200 + b'"}]}'
    assert [raw[s.start : s.end][:8] for s in find_pieces(raw, RULES.arrays)[0]] == [b'{"n": 1,']


def test_a_key_spelled_with_an_escape_names_no_array_as_upstreams_scanner_compares_bytes() -> None:
    raw = b'{"tool\\u0073":[{"n":1}],"messages":[{"a":1},{"b":2}]}'
    spans, first = find_pieces(raw, RULES.arrays, first=("messages",))
    assert spans == [] and first is not None and raw[first.start : first.end] == b'{"a":1}'


def test_a_body_whose_tool_definition_upstreams_writer_would_compact_lands_whole_in_its_words(
        tmp_path: Path) -> None:
    """Upstream's writer compacts a data part, so its rebuild comes out shorter: the body lands
    whole there, with its words; it does here too (the chain it was given stays)."""
    raw = body([user("hi", newest=True)], tools=[{"n": 1}]).replace(b'{"n":1}', b'{"n": 1}')
    (landed,) = land(tmp_path, [("a", raw)])
    assert landed.how == WHOLE  # type: ignore[attr-defined]
    (entry,) = ProviderBodies(tmp_path / SESSION).entries()
    assert entry.manifest.why == ("the record does not rebuild the body after a round trip: providerbody: "
                                  f"a.request rebuilds to {len(raw) - 1} bytes that do not match its digest")
    assert entry.manifest.segments == [PartSeg(0)] and entry.manifest.chain and entry.manifest.depth == 0


def test_known_tool_definitions_are_stepped_over_and_the_pieces_stay_the_same() -> None:
    """What ``known`` holds only saves walking its tokens: a known value that is the element,
    one that only starts like it, one that is longer than the element, one with whitespace, and
    one that is not an element at all leave the pieces exactly as found without them."""
    edited = dict(TOOLS[1], description="does thing 1 " + "y" * 1500)   # same first bytes
    raws = [body([user("hi", newest=True)]), body([user("hi", newest=True)], tools=[TOOLS[0], edited]),
            body([user("hi")], tools=[TOOLS[2], {"n": 1}, [1, 2]]), body([user("x" * 1100)], tools=[])]
    known = KnownValues()
    for value in [*TOOLS, dict(TOOLS[0], extra=1), {"role": "user", "content": "hi"}]:
        known.add(json.dumps(value, separators=(",", ":")).encode())
    known.add(b'{"name": "Tool0"}')   # not compact: never known
    known.add(b'"' + b"S" * 2000 + b'"')  # a string: never an element to step over
    longer = json.dumps(TOOLS[2], separators=(",", ":")).encode()[:-1] + b',"more":true}'
    known.add(longer)
    for raw in raws:
        assert find_pieces(raw, RULES.arrays, known=known)[0] == find_pieces(raw, RULES.arrays)[0]
    assert known.length_at(raws[0], raws[0].index(b'{"name":"Tool1"')) > 0
    assert known.length_at(raws[1], raws[1].index(b'{"name":"Tool1"')) == 0  # the edited one


def test_a_store_knows_each_object_piece_it_registers(tmp_path: Path) -> None:
    raw = body([user("hi", newest=True)])
    land(tmp_path, [("a", raw)])
    reader = ProviderBodies(tmp_path / SESSION)
    reader.load_all()
    for tool in TOOLS:
        element = json.dumps(tool, separators=(",", ":")).encode()
        assert reader.store.known.length_at(raw, raw.index(element)) == len(element)


def test_common_prefix() -> None:
    a = bytes(range(256)) * 100
    assert common_prefix(a, a) == len(a)
    for cut in (0, 1, 4095, 4096, 4097, 20000):
        b = a[:cut] + b"\xff" + a[cut + 1 :] if a[cut] != 0xFF else a[:cut] + b"\x00" + a[cut + 1 :]
        assert common_prefix(a, b) == cut


# ---- manifests ---------------------------------------------------------------------------------


def test_manifest_round_trip_and_strictness() -> None:
    m = Manifest(role="response", src="a.response.json", sha256="0" * 64, bytes=5, depth=1, chain="c",
                 call="msg_1", request="req_1", why="w",
                 segments=[CopySeg("b.request", "1" * 64, 3), LitSeg("x"), PartSeg(0), PieceSeg("2" * 64)])
    assert Manifest.from_json(json.loads(json.dumps(m.to_json()))) == m
    assert list(m.to_json()) == ["schema", "role", "src", "sha256", "bytes", "depth", "chain", "why", "call",
                                 "request", "segments"]  # upstream's order, the empty ones left out
    for bad in ({"schema": "other/1"}, {**m.to_json(), "sha256": "zz"}, {**m.to_json(), "bytes": -1},
                {**m.to_json(), "segments": [{"lit": 1}]}, {**m.to_json(), "segments": [{"copy": {"from": "x"}}]},
                {**m.to_json(), "segments": [{"lit": "a", "part": 0}]}):
        with pytest.raises(ManifestError):
            Manifest.from_json(bad)


# ---- landing and rebuilding ----------------------------------------------------------------------


def newest(message: dict[str, object]) -> dict[str, object]:
    """The spelling of the newest message: a list of blocks, the last with the cache marker."""
    content = message["content"]
    blocks = [dict(b) for b in content] if isinstance(content, list) else [{"type": "text", "text": content}]
    blocks[-1]["cache_control"] = {"type": "ephemeral"}
    return {**message, "content": blocks}


def test_a_chain_lands_as_copies_references_and_literals_and_rebuilds(tmp_path: Path) -> None:
    history: list[dict[str, object]] = [
        {"role": "user", "content": [{"type": "text", "text": "<reminder>" + "r" * 5000},
                                     {"type": "text", "text": "first " + "h" * 1500}]}]
    bodies = []
    for n in range(5):
        bodies.append((f"r{n}", body([*history[:-1], newest(history[-1])])))
        history += [{"role": "assistant", "content": [{"type": "text", "text": f"answer {n}"}]},
                    user(f"next {n} " + "q" * 30)]
    landed = land(tmp_path, bodies)
    assert all(b.how == CUT for b in landed)  # type: ignore[attr-defined]
    reader = ProviderBodies(tmp_path / SESSION)
    entries = list(reader.entries())
    assert [e.manifest.depth for e in entries] == [0, 1, 2, 3, 4]
    first, later = entries[0], entries[1:]
    assert len(first.parts) == len(TOOLS) + 3          # tools, system prompt, the first message's two long texts
    for entry in later:
        segments = entry.manifest.segments
        assert isinstance(segments[0], CopySeg) and segments[0].source == f"r{entry.manifest.depth - 1}.request"
        assert not entry.parts                          # every piece is held already
        assert sum(isinstance(s, PieceSeg) for s in segments) == len(TOOLS) + 1
    for entry, (_, raw) in zip(entries, bodies, strict=True):
        assert reader.body(entry.seq, entry.row) == raw
    verdict = run_sdcheck(tmp_path)
    assert verdict is None or verdict["ok"], verdict


def test_the_copied_front_ends_where_the_bytes_differ_but_never_inside_a_piece(tmp_path: Path) -> None:
    def said(text: str) -> dict[str, object]:
        return {"role": "user", "content": [{"type": "text", "text": text}]}

    intro = [user("intro " * 1000), {"role": "assistant", "content": "ok"}]
    a = body([*intro, said("P" * 2000 + "A")])
    b = body([*intro, said("P" * 2000 + "B"), {"role": "assistant", "content": "ok"}, user("again", newest=True)])
    land(tmp_path, [("a", a), ("b", b)])
    reader = ProviderBodies(tmp_path / SESSION)
    entry = list(reader.entries())[1]
    copy = entry.manifest.segments[0]
    assert isinstance(copy, CopySeg) and common_prefix(a, b) > b.index(b'"PPP')
    assert copy.length == b.index(b'"PPP') and isinstance(entry.manifest.segments[1], PartSeg)
    assert reader.body(entry.seq, entry.row) == b


def test_a_piece_twice_in_one_body_is_one_part(tmp_path: Path) -> None:
    long = "z" * 3000
    raw = body([user(long), {"role": "assistant", "content": "k"}, user(long, newest=True)])
    land(tmp_path, [("a", raw)])
    entry = next(ProviderBodies(tmp_path / SESSION).entries())
    digests = [hashlib.sha256(p.data or b"").hexdigest() for p in entry.parts]
    assert len(digests) == len(set(digests))
    assert sum(s == PartSeg(digests.index(hashlib.sha256(json.dumps(long).encode()).hexdigest()))
               for s in entry.manifest.segments) == 2


def test_files_end_before_max_delta_bytes_and_later_files_refer_to_earlier_ones(tmp_path: Path) -> None:
    bodies = [(f"r{n}", body([user(f"m{n} " + "w" * 2000, newest=True)])) for n in range(6)]
    land(tmp_path, bodies, max_bytes=16 * 1024)
    files = provider_body_files(tmp_path / SESSION)
    assert len(files) > 1
    assert all(path.stat().st_size <= 16 * 1024 for _, path in files)
    reader = ProviderBodies(tmp_path / SESSION)
    last = list(reader.entries())[-1]
    assert last.seq == files[-1][0] and not any(p.data and b"Tool0" in p.data for p in last.parts)
    assert reader.body(last.seq, last.row) == bodies[-1][1]
    assert not [p for r in verify_root(tmp_path) for p in r.problems]


def test_a_body_that_is_not_one_json_object_lands_whole_with_the_reason(tmp_path: Path) -> None:
    raws = [b"[1,2,3]", b'{"a":"\xff"}', b'{"a":1']
    landed = land(tmp_path, [(f"x{n}", raw) for n, raw in enumerate(raws)])
    assert [b.how for b in landed] == [WHOLE] * 3  # type: ignore[attr-defined]
    reader = ProviderBodies(tmp_path / SESSION)
    for entry, raw in zip(reader.entries(), raws, strict=True):
        assert entry.manifest.segments == [PartSeg(0)] and entry.manifest.depth == 0
        assert entry.parts[0].k == "unknown" and entry.parts[0].text == entry.manifest.why
        assert reader.body(entry.seq, entry.row) == raw
    assert reader.entry(1, 2).parts[0].encoding == "base64"
    assert [e.manifest.why for e in reader.entries()] == [  # upstream's words
        "the body is not a JSON object", "the body is not valid UTF-8", "the body is not valid JSON"]


def test_a_screenshot_sized_piece_is_taken_out_and_rebuilds_from_another_copy(tmp_path: Path) -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR" * 100_000}}
    shot = body([{"role": "user", "content": [image, {"type": "text", "text": "see", "cache_control": {}}]}])
    again = body([{"role": "user", "content": [image, {"type": "text", "text": "see"}]},
                  {"role": "assistant", "content": "a cat"}, user("thanks", newest=True)])
    plain = body([user("no picture", newest=True)])
    landed = land(tmp_path, [("shot", shot), ("again", again), ("plain", plain)],
                  max_bytes=64 * 1024)
    assert [b.how for b in landed] == [REDUCED, CUT, CUT]  # type: ignore[attr-defined]
    reader = ProviderBodies(tmp_path / SESSION)
    shot_e, again_e, plain_e = reader.entries()
    taken = [p for p in shot_e.parts if p.state == "too_large"]
    assert len(taken) == 1 and taken[0].sha256 == hashlib.sha256(json.dumps("iVBOR" * 100_000).encode()).hexdigest()
    with open(dict(provider_body_files(tmp_path / SESSION))[shot_e.seq], "rb") as landed_file:
        assert landed_file.read().count(b"\n") == 3  # header, the one record, closing line: alone
    assert not any(isinstance(s, CopySeg) for s in again_e.manifest.segments)  # never copies an incomplete body
    assert PieceSeg(taken[0].sha256 or "") in again_e.manifest.segments
    for entry, raw in ((shot_e, shot), (again_e, again)):
        with pytest.raises(BodyTooLarge):
            reader.body(entry.seq, entry.row)
        assert reader.body_from(entry.seq, entry.row, raw) == raw
        with pytest.raises(OtherCopyMismatch):
            reader.body_from(entry.seq, entry.row, raw.replace(b"iVBOR", b"iVBOX", 1))
    assert reader.body(plain_e.seq, plain_e.row) == plain
    reports = verify_root(tmp_path)
    assert not [p for r in reports for p in r.problems]
    assert reports[0].counts["provider_body_too_large"] == 2 and reports[0].counts["provider_body_ok"] == 1
    assert any("pieces taken out" in n for n in reports[0].notes)
    verdict = run_sdcheck(tmp_path)
    assert verdict is None or (verdict["ok"] and verdict["stats"]["bodies_too_large"] == 2), verdict


def test_a_body_of_short_strings_too_large_even_cut_lands_whole_and_taken_out(tmp_path: Path) -> None:
    raw = body([user(f"s{n}") for n in range(4000)], tools=[])
    (landed,) = land(tmp_path, [("many", raw)], max_bytes=16 * 1024)
    assert landed.how == WHOLE and "too large" in (landed.reason or "")  # type: ignore[attr-defined]
    reader = ProviderBodies(tmp_path / SESSION)
    (entry,) = reader.entries()
    assert entry.parts[0].k == "unknown" and entry.parts[0].state == "too_large"
    assert entry.parts[0].sha256 == hashlib.sha256(raw).hexdigest()
    with pytest.raises(BodyTooLarge):
        reader.body(entry.seq, entry.row)
    assert reader.body_from(entry.seq, entry.row, raw) == raw
    assert not [p for r in verify_root(tmp_path) for p in r.problems]
    verdict = run_sdcheck(tmp_path)  # its one segment names the part taken out: too large, not damage
    assert verdict is None or (verdict["ok"] and verdict["stats"]["bodies_too_large"] == 1), verdict


# ---- damage ------------------------------------------------------------------------------------


def _write_session(root: Path, records: list[Record]) -> None:
    with StorageRoot(root, pass_started_ns=10**9).open_session(SESSION) as session:
        landing = session.begin("provider_body", header())
        for record in records:
            landing.write(*record_line(record))
        session.commit(landing)


def _record(raw: bytes, manifest: Manifest, parts: list[Part], rid: str = "a.request") -> Record:
    return Record(ord=1, off=0, sha=manifest.sha256[:12], bytes=len(raw), id=rid,
                  parts=[*parts, Part.data_part(raw_json_of(manifest.to_json()))])


def test_verify_and_the_reader_report_a_body_that_does_not_rebuild(tmp_path: Path) -> None:
    raw = b'{"a":"hello"}'
    digest = hashlib.sha256(raw).hexdigest()
    wrong = Manifest("request", "a.request.json", digest, len(raw), segments=[LitSeg('{"a":"hellO"}')])
    missing = Manifest("request", "b.request.json", digest, len(raw), segments=[PieceSeg("3" * 64)])
    _write_session(tmp_path, [_record(raw, wrong, []), _record(raw, missing, [], "b.request")])
    problems = [p for r in verify_root(tmp_path) for p in r.problems]
    assert [p.kind for p in problems] == ["damaged", "damaged"]
    assert "held by nothing before it" in problems[1].message
    reader = ProviderBodies(tmp_path / SESSION)
    for row in (1, 2):
        with pytest.raises(BodyDamaged):
            reader.body(1, row)
    verdict = run_sdcheck(tmp_path)
    assert verdict is None or len(verdict["problems"]) == 2


def test_a_record_landed_twice_keeps_its_first_copy(tmp_path: Path) -> None:
    raw = body([user("once", newest=True)])
    land(tmp_path, [("a", raw)], started=1)
    land(tmp_path, [("a", raw)], started=2)  # a crash before seen.state: the same body again
    reader = ProviderBodies(tmp_path / SESSION)
    entries = list(reader.entries())
    assert len(entries) == 2 and reader.store.bodies["a.request"] is entries[0]
    assert all(reader.body(e.seq, e.row) == raw for e in entries)


def test_the_check_before_landing_catches_a_record_that_does_not_come_back(tmp_path: Path) -> None:
    store = BodyStore()
    raw = body([user("x" * 2000, newest=True)])
    record = encode_body(raw, info("a"), store, RULES)
    manifest = manifest_of(record)
    manifest.segments = [s if not isinstance(s, LitSeg) else LitSeg(s.text + " ") for s in manifest.segments]
    record.parts[-1] = Part.data_part(raw_json_of(manifest.to_json()))
    with pytest.raises(BodyDamaged):
        store.build(store.entry(record))


def test_a_body_only_a_skeleton_keeps_is_unavailable_and_later_bodies_do_not_lean_on_it(tmp_path: Path) -> None:
    first = body([user("kept once " + "k" * 2000, newest=True)])
    land(tmp_path, [("a", first)], started=1)
    ((seq, landed),) = provider_body_files(tmp_path / SESSION)
    land_skeleton(landed, Removal(at="2026-10-13T10:00:00Z"))
    landed.chmod(0o600)
    landed.unlink()  # retention removed the landed file
    second = body([user("kept once " + "k" * 2000), {"role": "assistant", "content": "ok"},
                   user("more", newest=True)])
    land(tmp_path, [("b", second)], started=2)
    reader = ProviderBodies(tmp_path / SESSION)
    skeleton_entry, later = reader.entries()
    assert skeleton_entry.seq == seq and skeleton_entry.status == "unavailable"
    with pytest.raises(BodyUnavailable):
        reader.body(skeleton_entry.seq, skeleton_entry.row)
    assert not any(isinstance(s, (CopySeg, PieceSeg)) for s in later.manifest.segments)  # lands with all its pieces
    assert reader.body(later.seq, later.row) == second
    reports = verify_root(tmp_path)
    assert not [p for r in reports for p in r.problems]
    assert reports[0].counts["provider_body_unavailable"] == 1 and reports[0].counts["provider_body_ok"] == 1


# ---- upstream's copy rules, and files landed before them -------------------------------------------


def test_a_copy_names_its_base_by_the_whole_digest_and_is_one_deeper(tmp_path: Path) -> None:
    intro = [user("intro " * 1000), {"role": "assistant", "content": "ok"}]
    a = body([*intro, user("one", newest=True)])
    b = body([*intro, user("one"), {"role": "assistant", "content": "k"}, user("two", newest=True)])
    land(tmp_path, [("a", a), ("b", b)])
    first, second = ProviderBodies(tmp_path / SESSION).entries()
    copy = second.manifest.segments[0]
    assert isinstance(copy, CopySeg) and copy.sha256 == first.manifest.sha256 == hashlib.sha256(a).hexdigest()
    assert copy.length >= 4096 and second.manifest.depth == first.manifest.depth + 1 == 1
    assert first.manifest.chain == second.manifest.chain and len(first.manifest.chain or "") == 16


def test_a_request_of_a_new_chain_copies_from_another_chains_tip(tmp_path: Path) -> None:
    """A compaction starts a new first message, so a new chain, but the system prompt and the
    tools may still follow a long common front: upstream compares the other chains' tips too."""
    common = {"model": "m", "system": [{"type": "text", "text": "s" * 6000}]}
    a = json.dumps({**common, "messages": [user("first chain", newest=True)]}, separators=(",", ":")).encode()
    b = json.dumps({**common, "messages": [user("second chain", newest=True)]}, separators=(",", ":")).encode()
    land(tmp_path, [("a", a), ("b", b)])
    first, second = ProviderBodies(tmp_path / SESSION).entries()
    assert first.manifest.chain != second.manifest.chain
    copy = second.manifest.segments[0]
    assert isinstance(copy, CopySeg) and copy.source == "a.request" and copy.length == common_prefix(a, b)


def test_a_depth_that_is_not_its_bases_plus_one_is_damage(tmp_path: Path) -> None:
    raw = b'{"a":"' + b"x" * 5000 + b'"}'
    digest = hashlib.sha256(raw).hexdigest()
    base = Manifest("request", "a.request.json", digest, len(raw), segments=[LitSeg(raw.decode())])
    deep = Manifest("request", "b.request.json", digest, len(raw), depth=2,
                    segments=[CopySeg("a.request", digest, len(raw))])
    _write_session(tmp_path, [_record(raw, base, []), _record(raw, deep, [], "b.request")])
    problems = [p for r in verify_root(tmp_path) for p in r.problems]
    assert len(problems) == 1 and "depth 2" in problems[0].message


def test_files_landed_before_upstreams_rules_still_read(tmp_path: Path) -> None:
    """This project's earlier versions: a copy named the digest of the copied front, a whole body named no segment and
    said why in ``reason``: such files rebuild, pass verify and sdcheck."""
    a = body([user("intro " * 1000), user("one", newest=True)])
    b = a.replace(b"one", b"two")
    front = common_prefix(a, b)
    old_copy = Manifest("request", "b.request.json", hashlib.sha256(b).hexdigest(), len(b), depth=1, chain="c" * 32,
                        segments=[CopySeg("a.request", hashlib.sha256(a[:front]).hexdigest(), front),
                                  LitSeg(b[front:].decode())])
    whole = b'{"broken":'
    old_whole = {"schema": "provider_body/1", "role": "request", "src": "c.request.json",
                 "sha256": hashlib.sha256(whole).hexdigest(), "bytes": len(whole), "depth": 0, "segments": [],
                 "reason": "the body is not JSON (cut short)"}
    whole_record_old = Record(ord=1, off=0, sha=old_whole["sha256"][:12], bytes=len(whole), id="c.request",  # type: ignore[index]
                              parts=[Part.unknown(whole, "the body is not JSON (cut short)"),
                                     Part.data_part(raw_json_of(old_whole))])
    base = Manifest("request", "a.request.json", hashlib.sha256(a).hexdigest(), len(a), segments=[LitSeg(a.decode())])
    _write_session(tmp_path, [_record(a, base, []), _record(b, old_copy, [], "b.request"), whole_record_old])
    reader = ProviderBodies(tmp_path / SESSION)
    entries = list(reader.entries())
    assert [reader.body(e.seq, e.row) for e in entries] == [a, b, whole]
    assert entries[2].manifest.why == "the body is not JSON (cut short)"
    assert not [p for r in verify_root(tmp_path) for p in r.problems]
    verdict = run_sdcheck(tmp_path)
    assert verdict is None or verdict["ok"], verdict
    # a session landed before lands on by upstream's rules: an old body is a base like any other
    c = b.replace(b'"two"', b'"two"},{"role":"user","content":"three"')
    land(tmp_path, [("d", c)], started=2)
    later = list(ProviderBodies(tmp_path / SESSION).entries())[-1]
    copy = later.manifest.segments[0]
    assert isinstance(copy, CopySeg) and copy.source == "b.request" and copy.sha256 == hashlib.sha256(b).hexdigest()
    assert later.manifest.depth == 2 and ProviderBodies(tmp_path / SESSION).body(later.seq, later.row) == c
    assert not [p for r in verify_root(tmp_path) for p in r.problems]


def test_a_body_landed_whole_is_the_line_upstream_writes(tmp_path: Path) -> None:
    from tests import provider_upstream as upstream

    bodies = [("a", b'{"cut short": "<b> & '), ("b", b'{"x":"caf\xe9"}'), ("c", b"[1,2]")]
    land(tmp_path, bodies)
    theirs = upstream.Session()
    ((_, path),) = provider_body_files(tmp_path / SESSION)
    for line, (name, raw) in zip(path.read_bytes().splitlines()[1:-1], bodies, strict=True):
        record, manifest = theirs.encode(f"{name}.request.json", raw)
        manifest["session"] = SESSION  # what the test's BodyInfo names, in its place
        order = ["schema", "role", "src", "sha256", "bytes", "depth", "chain", "why", "model", "session", "run",
                 "call", "request", "previous_request", "segments"]
        assert line == upstream.record_line(record, {k: manifest[k] for k in order if k in manifest})
