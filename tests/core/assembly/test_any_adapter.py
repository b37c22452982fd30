"""Assembly reads Session Data's roles only: a third-party dialect's records and Kiro's sessions
assemble by the same rules as Claude Code's."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from asz_core.assembly.chain import Chain
from asz_core.assembly.chaincheck import check_chain
from asz_core.assembly.parse import parse_root, parse_session
from asz_core.root.landing import LandingFile
from asz_core.sessiondata.model import Header, Part, Record
from asz_core.sessiondata.rawjson import RawJSON
from asz_core.sessiondata.writer import record_line
from asz_core.testing import PassRunner, run_sdcheck
from asz_core.verify import verify_root

SESSION = "third-party-0001"


def _land(root: Path, seq: int, rows: list[dict[str, Any]], source: dict[str, int]) -> None:
    """One transcript of an invented runtime (dialect ``acme/1``), landed as an adapter would."""
    header = Header(kind="transcript", session=SESSION, src="acme/session.log", dialect="acme/1",
                    adapter="acme-local/0.1.0", seq=seq, at="2026-03-01T10:00:00Z", stream="main")
    landing = LandingFile(root, SESSION, "streams/main", header, f"20260301T10000{seq}.000000000Z")
    for fields in rows:  # the source's lines run on from file to file, as an append cursor reads them
        source["ord"] += 1
        line = f"acme line {source['ord']}".encode()
        record = Record(ord=source["ord"], off=source["off"], sha=hashlib.sha256(line).hexdigest()[:12],
                        bytes=len(line), **fields)
        landing.write(*record_line(record))
        source["off"] += len(line) + 1
    landing.commit()


def _first_file() -> list[dict[str, Any]]:
    t = "2026-03-01T10:00:0{}Z".format
    return [
        {"id": "u1", "run": "r1", "from_": "external", "trigger": "external", "flags": ["external_input"],
         "time": t(1), "parts": [Part.text_part("please tidy the repo")]},
        {"id": "i1", "parent": "u1", "from_": "runtime", "flags": ["injected"], "time": t(1),
         "parts": [Part.text_part("a reminder")]},
        {"id": "a1", "parent": "u1", "call": "c1", "from_": "agent", "time": t(2),
         "parts": [Part.text_part("On it."), Part.call("k1", "Shell", RawJSON(b'{"cmd":"ls"}'))]},
        {"id": "a2", "parent": "a1", "call": "c1", "from_": "agent", "flags": ["finished"], "time": t(2),
         "parts": [Part.call("k2", "Shell", RawJSON(b'{"cmd":"pwd"}'))]},
        {"id": "res1", "parent": "a2", "from_": "external", "time": t(3), "parts": [Part.result("k1", text="a b")]},
    ]


def _second_file() -> list[dict[str, Any]]:
    t = "2026-03-01T10:30:0{}Z".format
    return [
        {"id": "res2", "parent": "res1", "from_": "external", "time": t(1), "parts": [Part.result("k2", text="/")]},
        {"id": "b1", "from_": "runtime", "flags": ["context_reset"], "continues": "res2", "time": t(2), "parts": []},
        {"id": "s1", "parent": "b1", "run": "r2", "from_": "external", "flags": ["reset_summary"], "time": t(1),
         "parts": [Part.text_part("Summary: tidied.")]},
        {"id": "a3", "parent": "s1", "call": "c2", "from_": "agent", "flags": ["synthetic"], "time": t(3),
         "parts": [Part.text_part("Connection lost.")]},
    ]


def test_a_third_party_dialect_assembles_by_the_format_s_roles_and_flags_alone(tmp_path: Path) -> None:
    source = {"ord": 0, "off": 0}
    _land(tmp_path, 1, _first_file(), source)
    first = parse_session(tmp_path, SESSION)
    fold = Chain(tmp_path, SESSION).fold()
    kinds = sorted(n["kind"] for n in fold.nodes.values())
    assert kinds.count("talk") == 1 and kinds.count("run") == 1 and kinds.count("llm.call") == 1
    assert {"message.external", "context.injection", "message.assistant"} <= set(kinds)
    assert fold.nodes["tool/k1"]["attrs"]["result"] == "available"
    assert fold.nodes["tool/k2"]["attrs"]["result"] == "unavailable"
    assert {u["kind"] for u in fold.unresolved.values()} == {"tool_result"}
    assert fold.nodes["call/c1"]["attrs"]["usage_at"] == {"seq": 1, "row": 4}
    assert len(first.rounds) == 1

    _land(tmp_path, 2, _second_file(), source)
    second = parse_session(tmp_path, SESSION)
    fold = Chain(tmp_path, SESSION).fold()
    assert len(second.rounds) == 1 and fold.rounds == 2
    assert fold.nodes["tool/k2"]["attrs"]["result"] == "available" and fold.revisions["tool/k2"] == 2
    assert [u["state"] for u in fold.unresolved.values()] == ["resolved"]
    epochs = [n for n in fold.nodes.values() if n["kind"] == "epoch"]
    assert sorted(e["id"] for e in epochs) == ["epoch/main/0", "epoch/main/b1"]
    assert {r["type"] for r in fold.relations.values()} >= {"follows", "summarizes", "in_segment"}
    # the summary's run states no trigger, so it opens a talk of its own; the synthetic call is no output
    assert sum(n["kind"] == "talk" for n in fold.nodes.values()) == 2
    assert sum(n["kind"] == "message.synthetic" for n in fold.nodes.values()) == 1
    assert not check_chain(tmp_path, SESSION)
    assert not [p for r in verify_root(tmp_path) for p in r.problems]
    verdict = run_sdcheck(tmp_path)
    assert verdict is None or verdict.get("ok", True), verdict


@pytest.mark.corpus
def test_every_kiro_session_of_the_corpus_parses_into_a_chain_that_verifies(corpus: Path, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "no-home"))
    for name in ("KIRO_HOME", "KIRO_CLI_DB_PATH", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    runner = PassRunner(tmp_path, tmp_path / "root")
    runner.configure(adapters=[{"name": "kiro", "source_root": str(corpus / "kiro" / ".kiro"),
                                "cli_database": "../.local/share/kiro-cli/data.sqlite3"}])
    assert not runner.run().failed
    results = parse_root(tmp_path / "root")
    assert len(results) == 4 and all(len(r.rounds) == 1 and not r.outcome for r in results)
    for r in results:  # what Kiro's records say by role: who spoke, and the tools with their results
        kinds = [n["kind"] for n in Chain(tmp_path / "root", r.session).fold().nodes.values()]
        assert kinds.count("session") == kinds.count("stream") == 1 and "message.external" in kinds, r.session
    talks = sum(n["kind"] == "talk" for r in results for n in Chain(tmp_path / "root", r.session).fold().nodes.values())
    assert talks >= 2  # only the records that carry a run make talks
    assert not [p for r in verify_root(tmp_path / "root") for p in r.problems]
