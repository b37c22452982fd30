"""Provider bodies are joined to their calls at parse time and named in the round, never copied."""

from __future__ import annotations

from pathlib import Path

from asz_core.assembly.chain import Chain
from asz_core.assembly.evidence import load_session
from asz_core.assembly.parse import parse_session

from .conftest import build_sd

HERE = Path(__file__).resolve().parent.parent / "scenarios"


def test_a_call_lists_its_request_and_response_and_a_synthetic_one_or_one_outside_a_run_no_request(
        tmp_path: Path) -> None:
    session = build_sd(HERE / "claude-code-everything.yaml", tmp_path)
    assert parse_session(tmp_path, session).rounds
    fold = Chain(tmp_path, session).fold()
    files, _ = load_session(tmp_path / session, fold.through_seq)
    bodies = {(e.seq, e.row): e for f in files for e in f.entries if e.kind == "provider_body"}
    calls = [n for n in fold.nodes.values() if n["kind"] == "llm.call"]
    listed = [(n, b) for n in calls for b in n.get("attrs", {}).get("provider_bodies", [])]
    responses = [(n, b) for n, b in listed if b["role"] == "response"]
    synthetic = {n["parent"] for n in fold.nodes.values() if n["kind"] == "message.synthetic"}
    assert len(responses) == len([n for n in calls if n["id"] not in synthetic]) > 0
    for node, b in listed:
        body = bodies[(b["ref"]["seq"], b["ref"]["row"])]
        assert body.body_role == b["role"]
        if b["role"] == "response":
            assert node["id"] == f"call/{body.call}"
    for node in calls:  # a request before its response: the first of a stream by its prompt, the
        # rest by the request id the call before it got back. A call whose parents reach no run (it
        # follows a result that was lost) has no prompt, so its request is not joined, not guessed.
        if node["id"] not in synthetic:
            roles = [b["role"] for b in node["attrs"]["provider_bodies"]]
            in_run = fold.nodes[node["parent"]]["kind"] == "run"
            assert roles == (["request", "response"] if in_run else ["response"]), node["id"]
    assert sum(fold.nodes[n["parent"]]["kind"] != "run" for n in calls) == 1
    assert not any(b for n in calls if n["id"] in synthetic for b in n.get("attrs", {}).get("provider_bodies", []))
    session_attrs = fold.nodes[f"session/{session}"]["attrs"]
    assert session_attrs["provider_bodies_landed"] == len(bodies)
