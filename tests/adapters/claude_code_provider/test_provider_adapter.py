"""The claude-code-provider adapter, pass by pass, on bodies of the shared corpus.

What claude-code-local lands before this adapter in a pass (each session's index: call ids,
request ids, the directory slug) is simulated from the corpus's real transcripts by
``provider_support`` (``land_ids``) where a test is about this adapter alone; the same-pass
claim runs the real claude-code-local first.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from asz_adapters.claude_code_provider import adapter as provider_adapter
from asz_adapters.claude_code_provider import names
from asz_core import hookimpl
from asz_core.cli.app import App
from asz_core.cli.main import main
from asz_core.providerbody import BodyTooLarge, CopySeg, PieceSeg, ProviderBodies, provider_body_files
from asz_core.root.index import CALL, SessionIndex
from asz_core.root.storage import landed_files, noted_next_seq
from asz_core.testing import PassRunner
from asz_core.verify import verify_root
from tests.provider_support import (
    ADAPTER,
    MINUTE_NS,
    TranscriptIds,
    bodies_by_session,
    land_ids,
    land_transcript,
    prev_requests,
    provider_config,
    response_files,
    seen_states,
    transcript_ids,
)

pytestmark = pytest.mark.corpus

SMALL = "8f4d493a-14e9-4f80-b905-a5af06d253c2"   # 4 requests, 3 responses its transcript records
CHAIN = "a6357d32-308a-4030-84d4-59744b5438d1"   # 12 requests, 11 responses
T0 = 1_790_000_000 * 10**9


@dataclass
class Bodies:
    """One corpus session's body files, in the order Claude Code wrote them."""

    ids: TranscriptIds
    requests: list[Path]
    responses: list[Path]

    def written(self) -> list[tuple[Path, int]]:
        """Each file with the mtime it was written at: requests in chain order (a request
        re-sends the list before it, so the shorter list is the earlier call), each response
        just before the request that names its request id, the others last."""
        requests = sorted(self.requests, key=lambda p: len(json.loads(p.read_bytes())["messages"]))
        out = [(p, T0 + 10 * n * 10**9) for n, p in enumerate(requests)]
        namer = {}
        for n, path in enumerate(requests):
            for prev in prev_requests([path]):
                namer[prev] = n
        end = T0 + 10 * len(requests) * 10**9
        for path in self.responses:
            n = namer.get(path.name.removesuffix(".response.json"))
            out.append((path, end if n is None else T0 + (10 * n - 5) * 10**9))
        return sorted(out, key=lambda item: item[1])


@pytest.fixture(scope="module")
def ids(corpus: Path) -> dict[str, TranscriptIds]:
    return transcript_ids(corpus / "claude-code" / "projects")


def bodies_of(corpus: Path, ids: dict[str, TranscriptIds], session: str) -> Bodies:
    bodies = corpus / "provider-bodies"
    return Bodies(ids[session], bodies_by_session(bodies)[session], response_files(bodies, ids[session].calls))


def stage(files: list[tuple[Path, int]], src: Path) -> None:
    src.mkdir(parents=True, exist_ok=True)
    for path, mtime in files:
        (src / path.name).write_bytes(path.read_bytes())
        os.utime(src / path.name, ns=(mtime, mtime))


def landed_names(root: Path) -> set[str]:
    return {name for name, state in seen_states(root).items() if state == "landed"}


def rebuilds_exactly(root: Path, src: Path) -> int:
    n = 0
    for session in root.iterdir():
        if not (session / "provider_body").is_dir():
            continue
        reader = ProviderBodies(session)
        for entry in reader.entries():
            assert reader.body(entry.seq, entry.row) == (src / entry.manifest.src).read_bytes(), entry.id
            n += 1
    return n


@pytest.fixture
def small(corpus: Path, ids: dict[str, TranscriptIds]) -> Bodies:
    return bodies_of(corpus, ids, SMALL)


def test_a_response_is_claimed_through_a_transcript_the_local_adapter_landed_in_the_same_pass(
        asz_pass: PassRunner, small: Bodies, corpus: Path, tmp_path: Path, assert_root_verifies: object) -> None:
    """claude-code-local runs first and writes the session's index as it lands its transcripts;
    the response no request names finds its session through it in that same pass."""
    src = tmp_path / "bodies"
    stage(small.written(), src)
    only_transcript = [p.name for p in small.responses
                       if p.name.removesuffix(".response.json") not in prev_requests(small.requests)]
    assert len(only_transcript) == 1
    asz_pass.configure(adapters=[provider_config(src)])
    first = asz_pass.run()  # no transcript landed yet: nothing names the session's directory
    assert first.fields()["bodies_waiting"] == len(small.requests) + len(small.responses)
    assert first.totals.landed == 0 and not first.failed
    projects = tmp_path / "projects"
    shutil.copytree(corpus / "claude-code" / "projects" / small.ids.directory, projects / small.ids.directory)
    asz_pass.configure(adapters=[{"name": "claude-code-local", "source_root": str(projects), "exclude": []},
                                 provider_config(src)])
    second = asz_pass.run()
    assert second.fields()["bodies_waiting"] == 0
    assert landed_names(asz_pass.root) == {p.name for p in small.requests + small.responses}
    assert set(only_transcript) <= landed_names(asz_pass.root)
    assert rebuilds_exactly(asz_pass.root, src) == len(small.requests) + len(small.responses)
    assert_root_verifies(asz_pass.root)  # type: ignore[operator]


def test_a_response_waits_until_a_request_of_its_session_arrives(
        asz_pass: PassRunner, small: Bodies, tmp_path: Path) -> None:
    src = tmp_path / "bodies"
    land_ids(asz_pass.root, small.ids)
    written = small.written()
    stage([(p, t) for p, t in written if p in small.responses], src)
    asz_pass.configure(adapters=[provider_config(src)])
    summary = asz_pass.run()
    assert summary.fields()["bodies_waiting"] == len(small.responses) and summary.totals.landed == 0
    assert any("no request names" in w for w in asz_pass.reporter.warnings)
    # A request of the session written more than 24 hours from them does not open the search.
    late = [(p, t + 25 * 60 * MINUTE_NS) for p, t in written if p in small.requests]
    stage(late[:1], src)
    summary = asz_pass.run()
    names = landed_names(asz_pass.root)
    assert late[0][0].name in names and not names & {p.name for p in small.responses}
    stage([(p, t) for p, t in written if p in small.requests], src)
    summary = asz_pass.run()
    assert summary.fields()["bodies_waiting"] == 0
    assert landed_names(asz_pass.root) == {p.name for p in small.requests + small.responses}


def test_a_response_waiting_for_its_call_id_waits_each_pass_until_the_sessions_index_holds_it(
        asz_pass: PassRunner, small: Bodies, tmp_path: Path) -> None:
    """The response no request names is found through the call ids of the sessions with a
    request near it: while none holds its call id it waits, pass after pass, and the pass after
    one does (a transcript holding it landed, and its index says so) it lands."""
    src = tmp_path / "bodies"
    stage(small.written(), src)
    (lone,) = [p for p in small.responses
               if p.name.removesuffix(".response.json") not in prev_requests(small.requests)]
    call = json.loads(lone.read_bytes())["id"]
    assert call in small.ids.calls
    land_ids(asz_pass.root, TranscriptIds(SMALL, small.ids.directory, small.ids.calls - {call}))
    asz_pass.configure(adapters=[provider_config(src)])
    for _ in range(2):
        summary = asz_pass.run()
        assert summary.fields()["bodies_waiting"] == 1 and not summary.failed
        assert seen_states(asz_pass.root)[lone.name] == "waiting"
        assert any("no request names and no session's landed transcripts hold" in w
                   for w in asz_pass.reporter.warnings)
    assert landed_names(asz_pass.root) == {p.name for p in small.requests + small.responses} - {lone.name}
    land_transcript(asz_pass.root, SMALL, small.ids.directory, {call})
    summary = asz_pass.run()
    assert summary.fields()["bodies_waiting"] == 0 and summary.totals.landed == 1
    assert landed_names(asz_pass.root) == {p.name for p in small.requests + small.responses}


def test_a_half_written_body_waits_then_is_unreadable_and_lands_once_whole(
        asz_pass: PassRunner, small: Bodies, tmp_path: Path) -> None:
    src = tmp_path / "bodies"
    land_ids(asz_pass.root, small.ids)
    path = small.requests[0]
    raw = path.read_bytes()
    stage([], src)
    target = src / path.name
    target.write_bytes(raw[: len(raw) // 2])
    os.utime(target, ns=(T0, T0))
    asz_pass.configure(adapters=[provider_config(src)])
    asz_pass.clock = lambda: T0 + MINUTE_NS // 2
    summary = asz_pass.run()
    assert (summary.fields()["bodies_waiting"], summary.fields()["bodies_unreadable"]) == (1, 0)
    asz_pass.clock = lambda: T0 + 10 * MINUTE_NS
    summary = asz_pass.run()
    assert (summary.fields()["bodies_waiting"], summary.fields()["bodies_unreadable"]) == (0, 1)
    assert not summary.failed and summary.totals.landed == 0
    target.write_bytes(raw)  # Claude Code's write completes
    os.utime(target, ns=(T0 + 11 * MINUTE_NS,) * 2)
    asz_pass.clock = lambda: T0 + 12 * MINUTE_NS
    summary = asz_pass.run()
    assert summary.totals.records == 1 and summary.fields()["bodies_unreadable"] == 0
    assert rebuilds_exactly(asz_pass.root, src) == 1


def test_a_body_changed_after_it_landed_is_a_conflict_until_its_bytes_are_back(
        asz_pass: PassRunner, small: Bodies, tmp_path: Path) -> None:
    src = tmp_path / "bodies"
    land_ids(asz_pass.root, small.ids)
    stage(small.written(), src)
    asz_pass.configure(adapters=[provider_config(src)])
    assert not asz_pass.run().failed
    victim = src / small.requests[0].name
    original = victim.read_bytes()
    victim.write_bytes(original.replace(b'"model":"', b'"model":"X', 1))
    for _ in range(2):  # every pass, while it stands
        summary = asz_pass.run()
        assert summary.failed and summary.totals.conflicts == 1 and summary.totals.landed == 0
        assert seen_states(asz_pass.root)[victim.name] == "conflict"
    assert any("conflict" in w and victim.name in w for w in asz_pass.reporter.warnings)
    victim.write_bytes(original)
    summary = asz_pass.run()
    assert not summary.failed and summary.totals.conflicts == 0 and summary.totals.landed == 0
    assert seen_states(asz_pass.root)[victim.name] == "landed"


def test_a_body_with_a_screenshot_is_reduced_to_fit_and_rebuilds_from_the_source(
        asz_pass: PassRunner, small: Bodies, tmp_path: Path, assert_root_verifies: object) -> None:
    src = tmp_path / "bodies"
    land_ids(asz_pass.root, small.ids)
    written = small.written()
    first_request = next(p for p, _ in written if p in small.requests)
    value = json.loads(first_request.read_bytes())
    screenshot = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                              "data": "iVBORw0KGgo" + "QUJD" * 800_000}}
    value["messages"][0]["content"].insert(0, screenshot)
    shot = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    stage(written, src)
    (src / first_request.name).write_bytes(shot)
    os.utime(src / first_request.name, ns=(T0 - 10**9,) * 2)
    asz_pass.configure(adapters=[provider_config(src)])
    summary = asz_pass.run()
    assert not summary.failed and summary.fields()["bodies_waiting"] == 0
    files = provider_body_files(asz_pass.root / SMALL)
    reader = ProviderBodies(asz_pass.root / SMALL)
    entries = list(reader.entries())
    shot_entry = next(e for e in entries if e.manifest.src == first_request.name)
    assert [e.seq for e in entries].count(shot_entry.seq) == 1  # alone in its file
    assert all(p.stat().st_size <= 2 * 1024 * 1024 for _, p in files)
    assert [p.state for p in shot_entry.parts].count("too_large") == 1
    with pytest.raises(BodyTooLarge):
        reader.body(shot_entry.seq, shot_entry.row)
    assert reader.body_from(shot_entry.seq, shot_entry.row, shot) == shot
    assert any("pieces taken out" in n for r in verify_root(asz_pass.root) for n in r.notes)
    for entry in entries:
        if entry is not shot_entry and entry.complete:
            assert reader.body(entry.seq, entry.row) == (src / entry.manifest.src).read_bytes()
    assert_root_verifies(asz_pass.root)  # type: ignore[operator]


def test_two_passes_land_a_chain_in_two_files_the_second_referring_into_the_first(
        asz_pass: PassRunner, corpus: Path, ids: dict[str, TranscriptIds], tmp_path: Path,
        assert_root_verifies: object) -> None:
    chain = bodies_of(corpus, ids, CHAIN)
    src = tmp_path / "bodies"
    land_ids(asz_pass.root, chain.ids)
    written = chain.written()
    half = len(written) // 2
    stage(written[:half], src)
    asz_pass.configure(adapters=[provider_config(src)])
    first = asz_pass.run()
    stage(written[half:], src)
    second = asz_pass.run()
    assert first.totals.landed == 1 and second.totals.landed == 1
    assert first.totals.records + second.totals.records == len(written)
    (first_seq, _), (second_seq, _) = provider_body_files(asz_pass.root / CHAIN)
    reader = ProviderBodies(asz_pass.root / CHAIN)
    entries = list(reader.entries())
    earlier_ids = {e.id for e in entries if e.seq == first_seq}
    earlier_pieces = {d for e in entries if e.seq == first_seq for d in e.own_pieces}
    later = [e for e in entries if e.seq == second_seq]
    copies = [s for e in later for s in e.manifest.segments if isinstance(s, CopySeg)]
    pieces = [s for e in later for s in e.manifest.segments if isinstance(s, PieceSeg)]
    assert any(c.source in earlier_ids for c in copies)
    assert any(p.sha256 in earlier_pieces for p in pieces)
    assert not any(e.parts and b'"name":"Bash"' in (e.parts[0].data or b"") for e in later)  # tools once
    assert rebuilds_exactly(asz_pass.root, src) == len(written)
    assert_root_verifies(asz_pass.root)  # type: ignore[operator]


def test_a_request_naming_a_session_id_not_in_claude_codes_form_is_refused(
        asz_pass: PassRunner, small: Bodies, tmp_path: Path) -> None:
    src = tmp_path / "bodies"
    stage([], src)
    value = json.loads(small.requests[0].read_bytes())
    inner = json.loads(value["metadata"]["user_id"])
    inner["session_id"] = "../../escape"
    value["metadata"]["user_id"] = json.dumps(inner)
    (src / small.requests[0].name).write_bytes(json.dumps(value).encode())
    asz_pass.configure(adapters=[provider_config(src)])
    summary = asz_pass.run()
    assert summary.fields()["bodies_unreadable"] == 1 and not summary.failed
    assert any("not in Claude Code's form" in w for w in asz_pass.reporter.warnings)
    assert sorted(p.name for p in asz_pass.root.iterdir() if not p.name.startswith(".")) == ["_provider"]


def test_a_second_pass_lands_nothing_and_seen_state_is_rebuilt_from_the_manifests(
        asz_pass: PassRunner, small: Bodies, tmp_path: Path) -> None:
    src = tmp_path / "bodies"
    land_ids(asz_pass.root, small.ids)
    stage(small.written(), src)
    asz_pass.configure(adapters=[provider_config(src)])
    assert asz_pass.run().totals.records == len(small.requests) + len(small.responses)
    state = asz_pass.root / "_provider" / "seen.state"
    before = seen_states(asz_pass.root)
    again = asz_pass.run()
    assert again.totals.landed == 0 and not again.failed
    state.unlink()
    rebuilt = asz_pass.run()
    assert rebuilt.totals.landed == 0 and not rebuilt.failed
    assert seen_states(asz_pass.root) == before
    assert before and set(before.values()) == {"landed"}


def test_a_missing_directory_does_nothing(asz_pass: PassRunner, tmp_path: Path) -> None:
    asz_pass.configure(adapters=[provider_config(tmp_path / "no-such-directory")])
    summary = asz_pass.run()
    assert summary.totals.found == 0 and not summary.failed
    assert not (asz_pass.root / "_provider").exists()


def test_sources_shows_the_directory_the_counts_and_the_sessions_named(
        asz_pass: PassRunner, small: Bodies, tmp_path: Path) -> None:
    src = tmp_path / "bodies"
    stage(small.written(), src)
    asz_pass.configure(adapters=[provider_config(src)])
    out = io.StringIO()
    app = App(config_path=str(asz_pass.config_path), host=asz_pass.host, out=out, err=io.StringIO())
    assert main(["sources", "--json", "--config", str(asz_pass.config_path)], app) == 0
    (report,) = json.loads(out.getvalue())["adapters"]
    assert report["adapter"] == ADAPTER and report["source_dirs"] == [str(src)]
    assert report["found"] == {"request": len(small.requests), "response": len(small.responses), "session": 1}
    assert next(u for u in report["units"] if u["kind"] == "session")["session"] == SMALL
    assert not (asz_pass.root / "_provider").exists()  # sources lands nothing, writes no state


def test_without_an_index_calls_and_directory_come_from_the_landed_transcripts(
        asz_pass: PassRunner, small: Bodies, tmp_path: Path) -> None:
    """A session with landed transcript files but no index (deleted, or a pruned session): its
    call ids are read from the files, its directory from their headers' ``src``."""
    src = tmp_path / "bodies"
    stage(small.written(), src)
    land_transcript(asz_pass.root, SMALL, small.ids.directory, small.ids.calls)
    assert not (asz_pass.root / SMALL / "index").exists()
    asz_pass.configure(adapters=[provider_config(src)])
    summary = asz_pass.run()
    assert summary.fields()["bodies_waiting"] == 0
    assert landed_names(asz_pass.root) == {p.name for p in small.requests + small.responses}
    fresh = tmp_path / "excluded-root"  # the same, with the session's directory excluded
    land_transcript(fresh, SMALL, small.ids.directory, small.ids.calls)
    asz_pass.root = fresh
    asz_pass.configure(adapters=[provider_config(src, exclude=[f"{small.ids.directory}*"])])
    assert asz_pass.run().totals.landed == 0
    assert set(seen_states(fresh).values()) == {"excluded"}


def test_the_bodies_a_pass_lands_are_covered_by_the_session_s_index_so_its_next_reader_lists_nothing(
        asz_pass: PassRunner, small: Bodies, tmp_path: Path) -> None:
    """The pass begins the session's index from its transcript, then lands bodies above it: the
    index then covers them (no id, their seq), as ``session.state`` notes the session's highest."""
    src = tmp_path / "bodies"
    stage(small.written(), src)
    land_transcript(asz_pass.root, SMALL, small.ids.directory, small.ids.calls)
    asz_pass.configure(adapters=[provider_config(src)])
    assert asz_pass.run().fields()["bodies_waiting"] == 0
    loaded = SessionIndex(asz_pass.root / SMALL).load()
    assert loaded is not None
    ids, covered = loaded
    assert covered == max(seq for seq, _ in landed_files(asz_pass.root / SMALL)) > 1
    assert covered == noted_next_seq(asz_pass.root / SMALL) - 1  # trusted as it is, nothing listed
    assert ids[CALL] == set(small.ids.calls)


class _ChangesAfterClaim:
    """The real adapter, with one body file rewritten between its claim and its landing."""

    def __init__(self, victim: Path) -> None:
        self.victim = victim

    @hookimpl
    def asz_adapter_info(self) -> object:
        return provider_adapter.asz_adapter_info()

    @hookimpl
    def asz_discover(self, ctx: object) -> object:
        return provider_adapter.asz_discover(ctx)

    @hookimpl
    def asz_claim(self, ctx: object, found: object) -> object:
        claims = provider_adapter.asz_claim(ctx, found)
        self.victim.write_bytes(self.victim.read_bytes() + b" ")
        return claims

    @hookimpl
    def asz_land(self, ctx: object, claim: object, session: object) -> None:
        provider_adapter.asz_land(ctx, claim, session)


def test_a_body_changed_while_the_pass_reads_it_waits_and_lands_next_pass(
        asz_pass: PassRunner, small: Bodies, tmp_path: Path) -> None:
    src = tmp_path / "bodies"
    land_ids(asz_pass.root, small.ids)
    stage(small.written(), src)
    victim = src / small.requests[0].name
    asz_pass.register("meddled-provider", _ChangesAfterClaim(victim))
    asz_pass.configure(adapters=[{"name": "meddled-provider", "source_root": str(src)}])
    summary = asz_pass.run()
    assert summary.fields()["bodies_waiting"] == 1 and not summary.failed
    assert seen_states(asz_pass.root)[victim.name] == "changed"
    assert any("changed while the pass read it" in w for w in asz_pass.reporter.warnings)
    asz_pass.configure(adapters=[provider_config(src)])
    summary = asz_pass.run()
    assert summary.totals.records == 1 and seen_states(asz_pass.root)[victim.name] == "landed"
    assert rebuilds_exactly(asz_pass.root, src) == len(small.requests) + len(small.responses)


def test_bodies_landed_before_seen_state_caught_up_are_not_landed_again(
        asz_pass: PassRunner, small: Bodies, tmp_path: Path) -> None:
    """A crash after a file landed and before seen.state was written: the next pass finds the
    bodies in the session's manifests and marks them landed; one whose bytes differ from the
    landed body is a conflict."""
    src = tmp_path / "bodies"
    land_ids(asz_pass.root, small.ids)
    stage(small.written(), src)
    asz_pass.configure(adapters=[provider_config(src)])
    landed = asz_pass.run().totals.records
    state = asz_pass.root / "_provider" / "seen.state"
    state.write_text(state.read_text().replace("state=landed", "state=waiting"))
    victim = src / small.responses[0].name
    victim.write_bytes(victim.read_bytes().replace(b'"type":"message"', b'"type":"massage"'))
    summary = asz_pass.run()
    assert summary.totals.landed == 0 and summary.totals.conflicts == 1 and summary.failed
    states = seen_states(asz_pass.root)
    assert states.pop(victim.name) == "conflict" and set(states.values()) == {"landed"}
    assert len(list(ProviderBodies(asz_pass.root / SMALL).entries())) == landed


def _chain_text(text: bytes) -> str:
    return hashlib.sha256(text).hexdigest()[:16]


def test_a_chain_is_upstreams_digest_of_the_first_message_with_both_spellings_as_one() -> None:
    plain = b'{"role":"user","content":"a<b & 1.50"}'
    listed = (b'{"role":"user","content":[{"type":"text","text":"a<b & 1.50",'
              b'"cache_control":{"type":"ephemeral"}}]}')
    # Go's json.Marshal of the decoded map: keys sorted, <>& escaped
    expected = _chain_text(b'{"content":"a\\u003cb \\u0026 1.50","role":"user"}')
    assert names.chain_of(plain) == names.chain_of(listed) == expected
    assert names.chain_of(b'{"role":"user","content":"hello!"}') != names.chain_of(b'{"role":"user","content":"hello"}')
    numbers = b'{"n":1.50,"big":1e21,"small":0.0000001,"i":100000000000000000000,"neg":-0.0}'
    assert names.chain_of(numbers) == _chain_text(b'{"big":1e+21,"i":100000000000000000000,"n":1.5,"neg":-0,'
                                                  b'"small":1e-7}')
    two_keys = b'{"content":[{"type":"text","text":"t","extra":1}]}'  # not exactly type and text: stays a list
    assert names.chain_of(two_keys) == _chain_text(b'{"content":[{"extra":1,"text":"t","type":"text"}]}')
    assert names.chain_of(b'"just text"') == _chain_text(b'"just text"')  # not an object: its bytes
    assert names.chain_of(b'{"n":1e400}') == _chain_text(b'{"n":1e400}')  # no float64 holds it: its bytes
    assert names.chain_of(b'{"s":"\\ud83d"}') == _chain_text('{"s":"\ufffd"}'.encode())  # a lone surrogate


def test_the_keys_a_body_lands_with_are_read_as_upstreams_decoder_reads_them() -> None:
    request = {"model": "m", "metadata": {"user_id": json.dumps({"Session_ID": "anything"})},
               "system": [{"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.260.abc; "
                                                   "cc_entrypoint=cli; cc_prompt_id=p-1\tcc_prev_req=req_9"}]}
    keys = names.lift("u.request.json", request)
    assert (keys.model, keys.session, keys.run, keys.previous_request) == ("m", "anything", "p-1", "req_9")
    assert names.lift("u.request.json", {**request, "system": "cc_prompt_id=one-string"}).run == "one-string"
    bad_block = {**request, "system": [{"text": "cc_prompt_id=a"}, {"text": 5}]}  # a type error anywhere: none
    assert names.lift("u.request.json", bad_block).run == ""
    response = names.lift("req_011CabkMbeYtyr4b97LjKPXK.response.json", {"id": "msg_1", "model": "m"})
    assert (response.call, response.request, response.session) == ("msg_1", "req_011CabkMbeYtyr4b97LjKPXK", "")
    assert names.lift(f"{SMALL.upper()}.response.json", {"id": "msg_1"}).request == ""  # any UUID: no request id
    assert names.lift("x.response.json", names.parse_lenient(b'{"id":"m\xff\xe2\x82"}')).call == "m\ufffd\ufffd\ufffd"


def test_only_a_session_id_in_claude_codes_form_places_a_request() -> None:
    request = {"metadata": {"user_id": json.dumps({"session_id": SMALL})},
               "system": [{"type": "text", "text": "cc_prompt_id=p-1; cc_prev_req=req_9;"}]}
    ids = names.request_names(names.lift("u.request.json", request))
    assert (ids.session, ids.prompt, ids.previous_request) == (SMALL, "p-1", "req_9")
    for bad in (SMALL.upper(), "../x", SMALL + "\n"):
        refused = names.request_names(names.lift("u.request.json", {
            **request, "metadata": {"user_id": json.dumps({"session_id": bad})}}))
        assert refused.session is None and refused.refused, bad
    for none in ("", 5):
        unnamed = names.request_names(names.lift("u.request.json", {
            **request, "metadata": {"user_id": json.dumps({"session_id": none})}}))
        assert unnamed.session is None and not unnamed.refused
    assert names.request_id_of("req_011CabkMbeYtyr4b97LjKPXK") == "req_011CabkMbeYtyr4b97LjKPXK"
    assert names.request_id_of(SMALL) is None  # a random UUID: there was no request id
    assert names.request_id_of("req_1\n") is None and not names.is_file_id("req_1\n")  # anchored at the very end
    assert names.is_file_id("_req-1") and not names.is_file_id("a.b")  # the names upstream takes


def test_a_pass_that_finds_nothing_new_only_stats(asz_pass: PassRunner, small: Bodies, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    src = tmp_path / "bodies"
    land_ids(asz_pass.root, small.ids)
    stage(small.written(), src)
    asz_pass.configure(adapters=[provider_config(src)])
    asz_pass.run()
    state = asz_pass.root / "_provider" / "seen.state"
    before = state.stat()
    real_read = Path.read_bytes

    def no_body_reads(path: Path) -> bytes:
        assert path.parent != src, f"{path} was read"
        return real_read(path)

    monkeypatch.setattr(Path, "read_bytes", no_body_reads)
    summary = asz_pass.run()
    assert not summary.errors and not summary.failed and summary.totals.landed == 0
    assert (state.stat().st_ino, state.stat().st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_a_symlink_and_a_name_claude_code_does_not_write_are_unreadable(
        asz_pass: PassRunner, small: Bodies, tmp_path: Path) -> None:
    src = tmp_path / "bodies"
    land_ids(asz_pass.root, small.ids)
    stage(small.written(), src)
    (src / "linked.request.json").symlink_to(small.requests[0])
    (src / "odd name.response.json").write_bytes(small.responses[0].read_bytes())
    (src / "notes.txt").write_text("not a body")
    asz_pass.configure(adapters=[provider_config(src)])
    summary = asz_pass.run()
    assert summary.fields()["bodies_unreadable"] == 2 and not summary.failed
    assert landed_names(asz_pass.root) == {p.name for p in small.requests + small.responses}
    states = seen_states(asz_pass.root)
    assert states["linked.request.json"] == "unreadable" and "odd name.response.json" not in str(states)
