"""The provider adapter against damaged derived state and odd sources: nothing wedges, nothing is
lost, every body has a named, counted outcome.

Bodies are a small session of the shared corpus (its transcripts' index written as
claude-code-local would, ``provider_support.land_ids``) or built in the test.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from asz_adapters.claude_code_local.discover import default_source_root
from asz_adapters.claude_code_provider.discover import claude_dir
from asz_core.providerbody import ProviderBodies
from asz_core.testing import PassRunner
from tests.provider_support import (
    SMALL,
    land_small_session,
    provider_config,
    seen_states,
)


@pytest.fixture
def small_root(corpus: Path, asz_pass: PassRunner, tmp_path: Path) -> tuple[PassRunner, Path]:
    """One pass landed the small session's bodies into ``asz_pass.root``; the bodies' directory."""
    return asz_pass, land_small_session(corpus, asz_pass, tmp_path)


def _request(session: str, text: bytes = b"hello") -> bytes:
    user_id = json.dumps(json.dumps({"session_id": session}))
    return (b'{"model":"m","metadata":{"user_id":' + user_id.encode() + b'},"messages":[{"role":"user","content":"'
            + text + b'"}]}')


@pytest.mark.corpus
def test_a_seen_state_with_a_byte_that_is_not_utf8_is_rebuilt_with_one_warning(
        small_root: tuple[PassRunner, Path]) -> None:
    runner, _ = small_root
    table = runner.root / "_provider" / "seen.state"
    landed = {n for n, s in seen_states(runner.root).items() if s == "landed"}
    table.write_bytes(table.read_bytes().replace(b"landed", b"land\xffd", 1))
    runner.reporter.warnings.clear()
    second = runner.run()
    assert not second.failed and second.totals.records == 0  # nothing lands twice
    assert [w for w in runner.reporter.warnings if "does not read" in w and "rebuilt" in w]
    table.read_bytes().decode("utf-8")  # written back whole
    assert {n for n, s in seen_states(runner.root).items() if s == "landed"} == landed
    runner.reporter.warnings.clear()
    third = runner.run()
    assert not third.failed and not [w for w in runner.reporter.warnings if "does not read" in w]


@pytest.mark.corpus
def test_a_body_file_with_a_newline_in_its_name_never_splits_a_seen_state_line(
        small_root: tuple[PassRunner, Path]) -> None:
    runner, src = small_root
    (src / "abc\n.request.json").write_bytes(_request(SMALL))
    (src / "req_1\n.response.json").write_bytes(b'{"id":"msg_x"}')
    for _ in range(2):
        summary = runner.run()
        assert summary.totals.gone == 0 and not summary.failed
        assert summary.fields()["bodies_unreadable"] == 2  # file names Claude Code does not write
    lines = (runner.root / "_provider" / "seen.state").read_text("utf-8").splitlines()
    assert all(line.startswith("#") or line.split()[0].endswith(".json") for line in lines)


def test_a_claimed_body_with_a_byte_that_is_not_utf8_lands_whole_in_one_base64_unknown_part(
        asz_pass: PassRunner, tmp_path: Path) -> None:
    session = "0b0e7b5c-5d55-4a3c-9f55-1e4a9b1c2d3e"
    src = tmp_path / "bodies"
    src.mkdir()
    body = _request(session, b"caf\xe9 au lait")
    (src / "11111111-2222-4333-8444-555555555555.request.json").write_bytes(body)
    (asz_pass.root / session / "index").mkdir(parents=True)
    (asz_pass.root / session / "index" / "ids").write_text("directory -home-me-project\n")
    asz_pass.configure(adapters=[provider_config(src, exclude=[])])
    summary = asz_pass.run()
    assert summary.totals.records == 1 and not summary.failed
    (entry,) = ProviderBodies(asz_pass.root / session).entries()
    assert entry.manifest.why == "the body is not valid UTF-8" and entry.manifest.session == session
    assert entry.parts[0].k == "unknown" and entry.parts[0].encoding == "base64"
    reader = ProviderBodies(asz_pass.root / session)
    assert reader.body(entry.seq, entry.row) == body


def test_both_claude_code_adapters_read_the_same_directory_when_xdg_has_no_claude(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "xdg").mkdir()
    assert claude_dir() == default_source_root().parent == tmp_path / "home" / ".claude"
    (tmp_path / "xdg" / "claude").mkdir()
    assert claude_dir() == default_source_root().parent == tmp_path / "xdg" / "claude"


def test_bodies_of_a_session_the_default_exclude_drops_are_excluded_and_counted_not_waiting(
        asz_pass: PassRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """claude-code-local never lands a session under ``/private/tmp``, so nothing landed names its
    directory: its transcript's place in the source says it, and the bodies are excluded."""
    claude = tmp_path / "claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    kept, dropped = "0b0e7b5c-5d55-4a3c-9f55-1e4a9b1c2d3e", "1c1e7b5c-5d55-4a3c-9f55-1e4a9b1c2d3f"
    for slug, session in (("-private-tmp-scratch", dropped), ("-home-me-project", kept)):
        (claude / "projects" / slug).mkdir(parents=True)
        (claude / "projects" / slug / f"{session}.jsonl").write_text("{}\n")
    src = tmp_path / "bodies"
    src.mkdir()
    (src / "11111111-2222-4333-8444-555555555555.request.json").write_bytes(_request(dropped))
    (src / "21111111-2222-4333-8444-555555555555.request.json").write_bytes(_request(kept))
    asz_pass.configure(adapters=[provider_config(src)])  # the default exclude
    for _ in range(2):
        asz_pass.reporter.warnings.clear()
        summary = asz_pass.run()
        assert not summary.failed and summary.totals.records == 0
        fields = summary.fields()
        assert fields["bodies_excluded"] == 1 and fields["bodies_waiting"] == 1  # kept: not landed by local yet
    states = seen_states(asz_pass.root)
    assert states["11111111-2222-4333-8444-555555555555.request.json"] == "excluded"
    assert states["21111111-2222-4333-8444-555555555555.request.json"] == "waiting"
    assert len([w for w in asz_pass.reporter.warnings if "waiting" in w]) == 1


@pytest.mark.corpus
def test_a_changed_file_put_back_after_a_rebuilt_table_is_landed_again_not_twice(
        small_root: tuple[PassRunner, Path]) -> None:
    runner, src = small_root
    shutil.rmtree(runner.root / "_provider")
    for path in src.iterdir():
        os.utime(path, ns=(1, 1))
    summary = runner.run()
    assert summary.totals.records == 0 and not summary.failed
    assert set(seen_states(runner.root).values()) == {"landed"}


# ---- a root upstream's asz wrote -----------------------------------------------------------------


def _upstream_table(root: Path, src: Path) -> str:
    """``seen.state`` as upstream writes it, for what this root holds: ``schema<TAB>1``, then per
    file name, size, mtime (ns), 12 hex of the digest, state, session, request, call, previous
    request and the session the body names, tab-separated, ``-`` for none."""
    landed = {}
    for session in root.iterdir():
        for entry in (ProviderBodies(session).entries() if (session / "provider_body").is_dir() else ()):
            landed[entry.manifest.src] = (session.name, entry.manifest)
    lines = ["schema\t1"]
    for path in sorted(src.iterdir()):
        st = path.stat()
        if path.name in landed:
            session, m = landed[path.name]
            fields = [path.name, str(st.st_size), str(st.st_mtime_ns), m.sha256[:12], "landed", session,
                      m.request or "-", m.call or "-", m.previous_request or "-", m.session or "-"]
        else:
            fields = [path.name, str(st.st_size), str(st.st_mtime_ns), "-", "waiting", "-", "-", "-", "-", "-"]
        lines.append("\t".join(fields))
    return "\n".join(lines) + "\n"


@pytest.mark.corpus
def test_a_root_upstream_wrote_resumes_from_its_seen_state_with_nothing_read_or_landed_twice(
        small_root: tuple[PassRunner, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    runner, src = small_root
    before = seen_states(runner.root)
    (runner.root / "_provider" / "seen.state").write_text(_upstream_table(runner.root, src), "utf-8")
    read: list[Path] = []
    real = Path.read_bytes

    def counting(self: Path) -> bytes:
        if self.parent == src:
            read.append(self)
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", counting)
    summary = runner.run()
    assert not summary.failed and summary.totals.records == 0 and summary.totals.conflicts == 0
    assert read == []  # its landed lines are trusted as this adapter's own: no body is read again
    assert seen_states(runner.root) == before
    text = (runner.root / "_provider" / "seen.state").read_text("utf-8")
    assert text.startswith("# asz provider seen.state") and "schema" not in text


@pytest.mark.corpus
def test_a_body_upstream_saw_change_after_it_landed_stays_a_conflict(small_root: tuple[PassRunner, Path]) -> None:
    runner, src = small_root
    table = _upstream_table(runner.root, src).splitlines()
    victim = table[1].split("\t")
    victim[4] = "changed"
    table[1] = "\t".join(victim)
    (runner.root / "_provider" / "seen.state").write_text("\n".join(table) + "\n", "utf-8")
    summary = runner.run()
    assert summary.failed and summary.totals.conflicts == 1 and summary.totals.records == 0
    assert seen_states(runner.root)[victim[0]] == "conflict"


def test_a_body_larger_than_any_reader_takes_is_unreadable_not_landed(
        asz_pass: PassRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from asz_adapters.claude_code_provider import discover
    from asz_core.providerbody import store

    assert discover.MAX_BYTES == store.MAX_BYTES == 256 * 1024 * 1024
    session = "0b0e7b5c-5d55-4a3c-9f55-1e4a9b1c2d3e"
    src = tmp_path / "bodies"
    src.mkdir()
    body = _request(session, b"x" * 300)
    (src / "11111111-2222-4333-8444-555555555555.request.json").write_bytes(body)
    (asz_pass.root / session / "index").mkdir(parents=True)
    (asz_pass.root / session / "index" / "ids").write_text("directory -home-me-project\n")
    monkeypatch.setattr(discover, "MAX_BYTES", len(body) - 1)
    asz_pass.configure(adapters=[provider_config(src, exclude=[])])
    summary = asz_pass.run()
    assert summary.totals.records == 0 and not summary.failed and summary.fields()["bodies_unreadable"] == 1
    assert seen_states(asz_pass.root) == {"11111111-2222-4333-8444-555555555555.request.json": "unreadable"}


def test_a_record_claiming_more_than_a_body_may_is_damage_and_a_rebuild_stops_past_its_claim(
        tmp_path: Path) -> None:
    from asz_core.providerbody import BodyDamaged, BodyStore, LitSeg, Manifest, PieceSeg
    from asz_core.sessiondata import Part, RawJSON, Record, raw_json_of

    piece = b'"' + b"p" * 2000 + b'"'
    digest = hashlib.sha256(piece).hexdigest()
    holder = Manifest("request", "a.request.json", digest, len(piece), segments=[LitSeg(piece.decode())])
    greedy = Manifest("request", "b.request.json", "0" * 64, 10, segments=[PieceSeg(digest)] * 1000)
    huge = Manifest("request", "c.request.json", "0" * 64, 2**30, segments=[LitSeg("x")])
    store = BodyStore()
    for rid, m, parts in (("a.request", holder, [Part.data_part(RawJSON(piece))]), ("b.request", greedy, []),
                          ("c.request", huge, [])):
        store.add(Record(ord=1, off=0, id=rid, parts=[*parts, Part.data_part(raw_json_of(m.to_json()))]))
    with pytest.raises(BodyDamaged, match="past the 10 bytes"):
        store.body("b.request")
    assert store.bodies["c.request"].status == "damaged" and "more than a body may" in store.bodies["c.request"].problem


@pytest.mark.corpus
def test_a_seen_log_with_a_byte_that_is_not_utf8_is_not_applied_with_one_warning(
        small_root: tuple[PassRunner, Path]) -> None:
    runner, _ = small_root
    table = (runner.root / "_provider" / "seen.state").read_text("utf-8")
    generation = next(line.split()[-1] for line in table.splitlines() if line.startswith("# generation"))
    name = next(n for n, s in seen_states(runner.root).items() if s == "landed")
    log = runner.root / "_provider" / "seen.log"
    log.write_bytes(f"# asz provider seen.log v1 generation {generation}\n{name} state=landed why=\xff\n"
                    .encode("latin-1"))
    runner.reporter.warnings.clear()
    summary = runner.run()
    assert not summary.failed and summary.totals.records == 0 and summary.totals.gone == 0
    assert len([w for w in runner.reporter.warnings if "seen.log does not read" in w]) == 1
    assert not log.exists() and set(seen_states(runner.root).values()) == {"landed"}
