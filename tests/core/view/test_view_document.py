"""The ``asz.view`` document on small sessions landed with the core writer and parsed: talks as
trees with their records' text, the files and rounds it was built from, verification as content,
the order things happened in, and its YAML rendering."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
import yaml

from asz_core.assembly.chain import Chain
from asz_core.assembly.parse import parse_session
from asz_core.sessiondata import Usage
from asz_core.view import NoRounds, NotABody, Session, UnknownSession, build_view
from asz_core.view.order import Point, earliest, in_order
from asz_core.view.yamlform import render_yaml
from tests.core.view.spec_shape import shape_problems
from tests.core.view.view_helpers import (
    SESSION,
    calls_of,
    change_record,
    land,
    land_changes,
    note,
    prompt,
    reply,
    request,
    response,
    result,
    view_of,
    walk,
)


def test_a_talk_is_a_tree_of_runs_and_steps_with_its_label_its_reply_and_its_counts(tmp_path: Path) -> None:
    land(tmp_path, {"main": [
        prompt("P1", "  build it \n"),
        reply("m1", tools=("t1",), text="Building.", usage=Usage(3, 9, 5, 0)),
        result("t1", "P1", text="built"),
        reply("m2", text="Done: it builds.", time="2026-09-01T10:00:03Z"),
    ]})
    doc = view_of(tmp_path)
    assert shape_problems(doc) == []
    (talk,) = doc["talks"]
    assert talk["label"] == "build it" and talk["reply"] == "Done: it builds."
    assert (talk["runs"], talk["tools"], talk["from"], talk["to"]) == (1, 1, 1788256800000, 1788256803000)
    (run,) = talk["children"]
    assert run["kind"] == "run" and [c["kind"] for c in run["children"]][:2] == ["message.external", "llm.call"]
    m1 = calls_of(doc)["m1"]
    assert m1["usage"] == {"in": 3, "out": 9, "cache_read": 5}  # from usage_at; a zero is left out
    assert "text" not in m1 and "attrs" in m1 and "provider_bodies" not in m1["attrs"]
    (tool,) = [n for n in walk(doc) if n["kind"] == "tool"]
    assert tool["text"] == '{"n":0}' and tool["name"] == "Run" and tool["result"] == "built"
    assert tool["result_state"] == "available" and tool["result_bytes"] == 5
    assert tool["request_to_result_ms"] == 1000 and tool["request_to_result_join"] == "exact_unique"
    assert tool["refs"] == [{"seq": 1, "row": 2, "block": 1}, {"seq": 1, "row": 3, "block": 0}]
    assert talk["steps"] == doc["summary"]["steps"] - 0 and doc["summary"]["talks"] == 1


def test_files_list_every_landed_file_then_every_round_as_on_disk(tmp_path: Path) -> None:
    land(tmp_path, {"main": [prompt("P1"), reply("m1")]}, [request("q1", "P1"), response("req_1", "m1")])
    doc = view_of(tmp_path)
    transcript, bodies, round_file = doc["files"]
    data = (tmp_path / transcript["file"]).read_bytes()
    assert transcript == {"file": transcript["file"], "format": "sd", "kind": "transcript", "seq": 1, "round": None,
                          "stream": "main", "run": None, "lines": data.count(b"\n"), "bytes": len(data),
                          "digest": hashlib.sha256(data).hexdigest(),
                          "from_time": 1788256800000, "through_time": 1788256801000}
    assert bodies["kind"] == "provider_body" and bodies["stream"] is None and bodies["seq"] == 2
    (rf,) = Chain(tmp_path, SESSION).files()
    assert round_file["file"] == rf.path.relative_to(tmp_path).as_posix()
    assert (round_file["format"], round_file["kind"]) == ("sf", "round")
    assert (round_file["round"], round_file["seq"]) == (1, None)
    assert round_file["digest"] == hashlib.sha256(rf.path.read_bytes()).hexdigest()
    (rnd,) = doc["rounds"]
    assert rnd["round"] == 1 and rnd["previous"] is None and rnd["verified"] is True
    assert (rnd["from_seq"], rnd["through_seq"]) == (1, 2) and doc["head"] == {"round": 1, "digest": rnd["digest"]}
    assert doc["summary"]["provider_bodies"] == 2 and doc["summary"]["captured_prompts"] == 1


def test_text_is_clipped_to_the_whole_characters_within_2000_bytes(tmp_path: Path) -> None:
    long = "é" * 1500  # 3,000 bytes
    land(tmp_path, {"main": [prompt("P1", long), reply("m1")]})
    (external,) = [n for n in walk(view_of(tmp_path)) if n["kind"] == "message.external"]
    assert external["text"] == "é" * 1000 and external["bytes"] == 3000


def test_an_injection_a_reader_may_withhold_names_no_talk(tmp_path: Path) -> None:
    """A talk a command opened has no person's input: the first injection that says something
    names it, passing over one that carries what a reader may withhold, in every document."""
    land(tmp_path, {"main": [prompt("P1", "/build", flags=["command"]),
                             note("You are a helpful agent", ["injected", "system_prompt"]),
                             note("skills: 1", ["injected"]), reply("m1")]})
    for hide in ((), ("system_prompt",)):
        (talk,) = view_of(tmp_path, hide=hide)["talks"]
        assert talk["label"] == "skills: 1"


def test_a_lost_landed_file_is_content_not_an_error(tmp_path: Path) -> None:
    land(tmp_path, {"main": [prompt("P1"), reply("m1")]})
    assert parse_session(tmp_path, SESSION).rounds
    land(tmp_path, {"main": [prompt("P2", "again"), reply("m2")]}, ords={"main": [3, 4]})
    doc = view_of(tmp_path)
    assert [r["verified"] for r in doc["rounds"]] == [True, True]
    first = tmp_path / doc["files"][0]["file"]
    os.chmod(first, 0o600)
    first.unlink()
    after = build_view(tmp_path, SESSION)
    assert after["summary"]["state"] == "incomplete" and len(after["summary"]["problems"]) == 1
    assert "seq 1" in after["summary"]["problems"][0]
    assert [r["verified"] for r in after["rounds"]] == [False, True]
    assert after["head"] == doc["head"] and len(after["files"]) == len(doc["files"]) - 1
    assert [n["id"] for n in walk(after)] == [n["id"] for n in walk(doc)]  # the structure is in the rounds
    (gone,) = [n for n in walk(after) if n["kind"] == "message.external" and n["ref"]["seq"] == 1]
    assert "text" not in gone and gone["at"] == 0  # and the evidence is gone
    assert shape_problems(after) == []


def test_a_round_that_does_not_read_stops_the_fold_and_says_mismatch(tmp_path: Path) -> None:
    land(tmp_path, {"main": [prompt("P1"), reply("m1")]})
    assert parse_session(tmp_path, SESSION).rounds
    land(tmp_path, {"main": [prompt("P2"), reply("m2")]}, ords={"main": [3, 4]})
    assert parse_session(tmp_path, SESSION).rounds
    _, second = Chain(tmp_path, SESSION).files()
    os.chmod(second.path, 0o600)
    second.path.write_bytes(second.path.read_bytes().replace(b'"policy":"v1', b'"policy":"v2', 1))
    doc = build_view(tmp_path, SESSION)
    assert doc["summary"]["state"] == "mismatch" and doc["head"]["round"] == 1
    assert [r["verified"] for r in doc["rounds"]] == [True, False] and len(doc["talks"]) == 1


def test_no_round_is_the_one_error_and_it_says_to_parse(tmp_path: Path) -> None:
    land(tmp_path, {"main": [prompt("P1"), reply("m1")]})
    with pytest.raises(NoRounds, match="asz-pipeline parse"):
        Session(tmp_path, SESSION).document()


def test_relations_merge_lanes_by_time_and_keep_each_lane_in_position_order() -> None:
    # a child's file landed before its parent's: position says nothing across lanes, time does
    main_late = Point("main", 1, 5, -1, 30)
    main_early = Point("main", 1, 2, -1, 10)
    child = Point("child", 2, 1, -1, 20)
    untimed = Point("child", 2, 2, -1, 0)
    items = {"a": main_late, "b": child, "c": main_early, "d": untimed, "e": None}
    assert in_order(list(items), items.__getitem__, lambda k: k) == ["c", "b", "a", "d", "e"]
    assert earliest([main_late, child, main_early]) == main_early
    # inside a lane position decides, even against time
    assert in_order(["x", "y"], {"x": Point("m", 1, 2, -1, 5), "y": Point("m", 1, 3, -1, 1)}.__getitem__,
                    lambda k: k) == ["x", "y"]


def test_the_yaml_reads_back_as_the_json(tmp_path: Path) -> None:
    land(tmp_path, {"main": [prompt("P1", "line one\nline two: yes"), reply("m1", text="1.0")]})
    doc = view_of(tmp_path)
    text = render_yaml(doc)
    assert yaml.safe_load(text) == json.loads(json.dumps(doc))
    assert 'version: "1.0"' in text and "text: |-\n" in text and "withheld: {}" in text
    assert list(yaml.safe_load(text)) == list(doc)


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


def test_the_command_says_to_parse_a_session_no_round_reaches_and_prints_a_damaged_one(tmp_path: Path) -> None:
    import io

    from asz_core.cli.app import App
    from asz_core.cli.main import main

    land(tmp_path / "root", {"main": [prompt("P1"), reply("m1")]})
    config = tmp_path / "asz.yaml"
    config.write_text(f"storage: {{root: {tmp_path / 'root'}}}\nadapters: []\n")

    def view(*args: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        return main(["view", "--config", str(config), *args], App(out=out, err=err)), out.getvalue(), err.getvalue()

    code, out, err = view(SESSION)
    assert code == 1 and out == "" and f"asz-pipeline parse {SESSION}" in err
    code, out, err = view()
    assert code == 0 and f"{SESSION}  not parsed" in out and "asz-pipeline parse" in err
    doc = view_of(tmp_path / "root")
    code, out, _ = view(SESSION, "--json")
    assert code == 0 and json.loads(out) == doc
    first = tmp_path / "root" / doc["files"][0]["file"]
    os.chmod(first, 0o600)
    first.unlink()
    code, out, err = view(SESSION)
    assert code == 1 and "incomplete" in out and "problem: round 1 consumed landed seq 1" in out
    assert f"session {SESSION} is incomplete" in err


def test_change_records_join_their_tool_step_by_its_tool_use_id_in_time_order(tmp_path: Path) -> None:
    land(tmp_path, {"main": [prompt("P1"), reply("m1", tools=("t1", "t2")), result("t1", "P1"),
                             result("t2", "P1"), reply("m2")]})
    late = change_record("t1", "asz-plugin", "2026-09-01T10:00:05Z")
    land_changes(tmp_path, [late, change_record("t2", "asz-plugin", "2026-09-01T10:00:03Z"),
                            change_record("gap/x/1", "asz-plugin", "2026-09-01T10:00:04Z"), late])
    doc = view_of(tmp_path)
    changes = doc["workspace_changes"]
    assert [(c["id"], c["step"]) for c in changes] == [("t2", "tool/t2"), ("gap/x/1", ""), ("t1", "tool/t1")]
    assert list(changes[0])[:4] == ["step", "ref", "schema", "id"]  # where it joins, where it was read, the record
    assert changes[0]["ref"] == {"seq": 2, "row": 2, "block": 0} and changes[0]["changes"][0]["path"] == "a.txt"
    steps = {n["id"]: n for n in walk(doc)}
    assert steps["tool/t1"]["changes"] == ["t1"] and steps["tool/t2"]["changes"] == ["t2"]
    assert doc["summary"]["changes"] == 3 and shape_problems(doc) == []


def test_the_runtimes_own_patch_on_a_result_is_listed_before_the_plugins_record_of_the_same_call(
        tmp_path: Path) -> None:
    from asz_core.sessiondata import Part, raw_json_of

    at = "2026-09-01T10:00:02Z"
    patched = result("t1", "P1")
    patched.parts.append(Part.data_part(raw_json_of(change_record("t1", "claude-code", at))))
    land(tmp_path, {"main": [prompt("P1"), reply("m1", tools=("t1",)), patched, reply("m2")]})
    land_changes(tmp_path, [change_record("t1", "asz-plugin", at)])
    doc = view_of(tmp_path)
    assert [(c["captured_by"], c["step"], c["ref"]) for c in doc["workspace_changes"]] == [
        ("claude-code", "tool/t1", {"seq": 1, "row": 3, "block": 1}),
        ("asz-plugin", "tool/t1", {"seq": 2, "row": 1, "block": 0})]
    (tool,) = [n for n in walk(doc) if n["kind"] == "tool"]
    assert tool["changes"] == ["t1", "t1"] and tool["result"] == "done"


def test_execution_records_join_their_tool_step_and_one_landed_twice_is_one(tmp_path: Path) -> None:
    land(tmp_path, {"main": [prompt("P1"), reply("m1", tools=("t1",)), result("t1", "P1"), reply("m2")]})
    ran = {"schema": "execution/1", "id": "obs-1", "tool": "t1", "tool_name": "Run", "time": "2026-09-01T10:00:02Z",
           "outcome": "returned"}
    other = {**ran, "id": "obs-0", "tool": "t9", "time": "2026-09-01T10:00:01Z"}
    land_changes(tmp_path, [ran, other, ran], kind="execution")
    doc = view_of(tmp_path)
    assert [(e["id"], e["step"]) for e in doc["tool_executions"]] == [("obs-0", ""), ("obs-1", "tool/t1")]
    (tool,) = [n for n in walk(doc) if n["kind"] == "tool"]
    assert tool["executions"] == ["obs-1"] and doc["summary"]["changes"] == 0
    assert shape_problems(doc) == []
