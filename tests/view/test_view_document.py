"""The ``asz.view`` document's shape on small sessions: files, streams, calls, steps, and what a
damaged file does to them."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from asz_core.sessiondata import Usage
from asz_core.view import NotABody, Session, UnknownSession, build_document
from tests.view.view_helpers import SESSION, land, note, prompt, reply, request, response, result


def _damage(path: Path) -> None:
    os.chmod(path, 0o600)
    data = path.read_bytes()
    path.write_bytes(data[:-40] + data[-40:].replace(b"1", b"2"))


def test_a_call_is_its_fragments_with_the_last_usage_and_its_tools_answered(tmp_path: Path) -> None:
    land(tmp_path, {"main": [
        prompt("P1"),
        reply("m1", tools=("t1",), finished=False, usage=Usage(1, 1, 0, 0)),
        reply("m1", tools=("t2",), text=None, usage=Usage(1, 9, 5, 0), time="2026-09-01T10:00:03Z"),
        result("t1", "P1", child="agent-b"),
        result("t2", "P1"),
        reply("m2"),
    ], "agent-b": [prompt("P1"), reply("b1")]})
    doc = build_document(tmp_path / SESSION)
    main, child = doc["streams"]
    m1, m2 = main["calls"]
    assert m1["records"] == [{"seq": 1, "row": 2}, {"seq": 1, "row": 3}]
    assert m1["usage"] == {"in": 1, "out": 9, "cache_read": 5}  # a count of zero left out (asz.view)
    assert m1["finished"] is True and m1["time"] == "2026-09-01T10:00:01Z" and m1["run"] == "P1"
    t1, t2 = m1["tool_calls"]
    assert t1["at"] == {"seq": 1, "row": 2, "block": 1} and t1["result"]["at"] == {"seq": 1, "row": 4, "block": 0}
    assert t1["child"] == "agent-b" and "child" not in t2 and t2["result"]["at"]["row"] == 5
    assert m1["children"] == ["agent-b"] and "children" not in m2
    assert child == {**child, "role": "child", "parent": "main", "parent_call": "m1", "records": 2}
    assert main["role"] == "main" and "parent" not in main
    summary = doc["summary"]
    assert (summary["calls"], summary["tool_calls"], summary["tool_results"], summary["streams"]) == (3, 2, 2, 2)
    assert doc["session"]["first_time"] == "2026-09-01T10:00:00Z"
    assert doc["session"]["last_time"] == "2026-09-01T10:00:03Z"


def test_files_are_listed_by_seq_with_their_digest_and_time_range(tmp_path: Path) -> None:
    land(tmp_path, {"main": [prompt("P1"), reply("m1")]}, [request("q1", "P1"), response("req_1", "m1")])
    doc = build_document(tmp_path / SESSION)
    transcript, bodies = doc["files"]
    path = tmp_path / transcript["path"]
    assert transcript["path"].startswith(f"{SESSION}/streams/main/transcript-")
    assert transcript == {**transcript, "kind": "transcript", "seq": 1, "stream": "main", "lines": 2,
                          "bytes": path.stat().st_size, "digest": hashlib.sha256(path.read_bytes()).hexdigest(),
                          "from_time": "2026-09-01T10:00:00Z", "through_time": "2026-09-01T10:00:01Z"}
    assert bodies["kind"] == "provider_body" and "stream" not in bodies and bodies["lines"] == 2


def test_steps_clip_text_and_say_its_full_size(tmp_path: Path) -> None:
    long = "é" * 1000
    land(tmp_path, {"main": [prompt("P1", long), note("t", ["tool_schemas"], label="A title")]})
    doc = build_document(tmp_path / SESSION)
    first, second = doc["streams"][0]["steps"]
    (part,) = first["parts"]
    assert part["text"] == long[:240] and part["clipped"] is True and part["bytes"] == 2000
    assert second["flags"] == ["tool_schemas"] and second["label"] == "A title"
    assert doc["session"]["label"] == doc["streams"][0]["label"] == "A title"
    assert "steps" not in build_document(tmp_path / SESSION, steps=False)["streams"][0]


def test_a_damaged_transcript_is_named_and_its_stream_joins_nothing(tmp_path: Path) -> None:
    session_dir = land(tmp_path, {"main": [prompt("P1"), reply("m1")]},
                       [request("q1", "P1"), response("req_1", "m1")])
    (transcript,) = session_dir.glob("streams/main/*.sd")
    _damage(transcript)
    doc = build_document(session_dir)
    assert "digest" in doc["files"][0]["problem"] and doc["summary"]["problems"] == 1
    assert doc["streams"][0]["gap"] is True
    assert not [c for c in doc["streams"][0]["calls"] if "provider_bodies" in c]


def test_a_damaged_provider_file_lists_no_body(tmp_path: Path) -> None:
    session_dir = land(tmp_path, {"main": [prompt("P1"), reply("m1")]},
                       [request("q1", "P1"), response("req_1", "m1")])
    (bodies,) = session_dir.glob("provider_body/*.sd")
    _damage(bodies)
    doc = build_document(session_dir)
    assert doc["summary"]["provider_bodies"] == 0 and doc["summary"]["problems"] == 1
    assert "provider_bodies" not in doc["streams"][0]["calls"][0]


def test_session_refuses_what_is_not_there(tmp_path: Path) -> None:
    land(tmp_path, {"main": [prompt("P1"), reply("m1")]}, [request("q1", "P1"), response("req_1", "m1")])
    for bad in ("missing-session", "../x", "_provider", ""):
        with pytest.raises(UnknownSession):
            Session(tmp_path, bad)
    session = Session(tmp_path, SESSION)
    for ref in ({"seq": 1, "row": 1}, (2, 9), "2:1:0", "x", {"seq": "2", "row": 1}):
        with pytest.raises(NotABody):
            session.body(ref)  # type: ignore[arg-type]
    assert session.body("2:1") == request("q1", "P1").bytes()
    assert session.body({"seq": 2, "row": 2}) == response("req_1", "m1").bytes()
