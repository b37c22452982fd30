"""The join rules of ``spec/provider-bodies-internals.txt`` ("In the view"), each on a small
session landed with the core writer: exact joins, and every way a join is refused."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from asz_core.view import Session
from tests.core.view.view_helpers import SESSION, land, note, prompt, reply, request, response, result


def _bodies(root: Path) -> dict[str, list[tuple[str, str]]]:
    """Each call id → its listed bodies as ``(role, record id)``, read back through Session."""
    session = Session(root, SESSION)
    out = {}
    for stream in session.document()["streams"]:
        for call in stream["calls"]:
            listed = []
            for body in call.get("provider_bodies", []):
                entry = session.entry(body["ref"])
                listed.append((body["role"], entry.id))
            out[call["id"]] = listed
    return out


def test_a_chain_joins_call_by_call(tmp_path: Path, assert_root_verifies: Callable[[Path], None]) -> None:
    """First call: the request naming no previous request under its prompt; each next call: the
    request naming its previous call's response's request id. Responses by message id."""
    land(tmp_path, {"main": [prompt("P1"), reply("m1", tools=("t1",)), result("t1", "P1"), reply("m2"),
                             prompt("P2"), reply("m3")]},
         [request("q1", "P1"), response("req_1", "m1"), request("q2", "P1", "req_1"), response("req_2", "m2"),
          request("q3", "P2", "req_2"), response("req_3", "m3")])
    assert _bodies(tmp_path) == {
        "m1": [("request", "q1.request"), ("response", "req_1.response")],
        "m2": [("request", "q2.request"), ("response", "req_2.response")],
        "m3": [("request", "q3.request"), ("response", "req_3.response")],
    }
    assert_root_verifies(tmp_path)


def test_two_requests_with_the_same_two_ids_join_neither(tmp_path: Path) -> None:
    """A second request naming no previous request under the first prompt (as a request that names
    the session can) makes the first call's request ambiguous; the responses still join."""
    land(tmp_path, {"main": [prompt("P1"), reply("m1"), reply("m2")]},
         [request("title", "P1"), request("q1", "P1"), response("req_1", "m1"),
          request("q2", "P1", "req_1"), response("req_2", "m2")])
    assert _bodies(tmp_path) == {
        "m1": [("response", "req_1.response")],
        "m2": [("request", "q2.request"), ("response", "req_2.response")],
    }


def test_two_calls_with_the_same_two_ids_join_no_request(tmp_path: Path) -> None:
    """The first calls of two streams under one prompt carry the same two ids: one request
    cannot say which it was, so neither call gets it."""
    land(tmp_path, {"main": [prompt("P1"), reply("m1")], "agent-b": [prompt("P1"), reply("b1")]},
         [request("q1", "P1"), response("req_1", "m1"), response("req_b", "b1")])
    assert _bodies(tmp_path) == {"m1": [("response", "req_1.response")], "b1": [("response", "req_b.response")]}


def test_a_request_that_names_no_prompt_never_joins(tmp_path: Path) -> None:
    land(tmp_path, {"main": [prompt("P1"), reply("m1"), reply("m2")]},
         [request("q1", "P1"), response("req_1", "m1"), request("compact", None, "req_1"),
          response("req_2", "m2")])
    assert _bodies(tmp_path)["m2"] == [("response", "req_2.response")]


def test_a_call_with_no_prompt_joins_no_request(tmp_path: Path) -> None:
    """Nothing in the stream names a run: the call's prompt is unknown, so no request can be
    proved its own, even the only one there is."""
    land(tmp_path, {"main": [prompt(None), reply("m1")]}, [request("q1", "P1"), response("req_1", "m1")])
    assert _bodies(tmp_path) == {"m1": [("response", "req_1.response")]}


def test_the_prompt_is_the_latest_run_named_before_the_call(tmp_path: Path) -> None:
    land(tmp_path, {"main": [prompt("P1"), reply("m1", tools=("t1",)), result("t1", None), reply("m2"),
                             prompt("P2"), reply("m3")]},
         [request("q1", "P1"), response("req_1", "m1"), request("q2", "P1", "req_1"),
          response("req_2", "m2"), request("q3", "P2", "req_2"), response("req_3", "m3")])
    doc = Session(tmp_path, SESSION).document()
    assert [c["run"] for c in doc["streams"][0]["calls"]] == ["P1", "P1", "P2"]


def test_no_request_joins_after_a_call_whose_response_did_not_land(tmp_path: Path) -> None:
    land(tmp_path, {"main": [prompt("P1"), reply("m1"), reply("m2")]},
         [request("q1", "P1"), request("q2", "P1", "req_1"), response("req_2", "m2")])
    assert _bodies(tmp_path) == {"m1": [("request", "q1.request")], "m2": [("response", "req_2.response")]}


def test_a_synthetic_call_joins_nothing_and_is_not_the_previous_call(tmp_path: Path) -> None:
    """The runtime's own message (model in angle brackets) sits between two calls: even a
    response carrying its id does not join it, and the next call's previous call is the one
    before it."""
    land(tmp_path, {"main": [prompt("P1"), reply("m1"), reply("s1", model="<synthetic>"), reply("m2")]},
         [request("q1", "P1"), response("req_1", "m1"), response("req_s", "s1"),
          request("q2", "P1", "req_1"), response("req_2", "m2")])
    doc = Session(tmp_path, SESSION).document()
    synthetic = [c for c in doc["streams"][0]["calls"] if c["id"] == "s1"]
    assert synthetic == [{**synthetic[0], "synthetic": True}] and "provider_bodies" not in synthetic[0]
    assert _bodies(tmp_path)["m2"] == [("request", "q2.request"), ("response", "req_2.response")]
    assert doc["summary"]["synthetic_calls"] == 1


def test_a_stream_with_a_gap_joins_nothing(tmp_path: Path) -> None:
    """Line 3 of the stream never landed: a call may be missing between two that look
    consecutive, so the stream joins no body at all; the other stream still joins."""
    land(tmp_path, {"main": [prompt("P1"), reply("m1"), reply("m2")], "agent-b": [prompt("P2"), reply("b1")]},
         [request("q1", "P1"), response("req_1", "m1"), request("q2", "P1", "req_1"), response("req_2", "m2"),
          request("qb", "P2"), response("req_b", "b1")],
         ords={"main": [1, 2, 4]})
    doc = Session(tmp_path, SESSION).document()
    main, child = doc["streams"]
    assert main["gap"] is True and "gap" not in child
    assert _bodies(tmp_path) == {"m1": [], "m2": [], "b1": [("request", "qb.request"), ("response", "req_b.response")]}


def test_a_repeated_record_is_not_a_gap(tmp_path: Path) -> None:
    """A record landed twice (a crash before the cursor moved) is kept once and breaks nothing."""
    records = [prompt("P1"), reply("m1"), reply("m2")]
    land(tmp_path, {"main": records}, [request("q1", "P1"), response("req_1", "m1"),
                                       request("q2", "P1", "req_1"), response("req_2", "m2")])
    again = land(tmp_path / "again", {"main": [*records, reply("m2")]}, [],
                 ords={"main": [1, 2, 3, 3]})
    doc = Session(tmp_path / "again", SESSION).document()
    assert again.is_dir() and doc["streams"][0]["repeats"] == 1 and "gap" not in doc["streams"][0]
    assert doc["streams"][0]["records"] == 3 and len(doc["streams"][0]["calls"]) == 2


def test_two_responses_with_one_message_id_join_neither(tmp_path: Path) -> None:
    land(tmp_path, {"main": [prompt("P1"), reply("m1")]},
         [request("q1", "P1"), response("req_1", "m1"), response("req_x", "m1")])
    assert _bodies(tmp_path) == {"m1": [("request", "q1.request")]}


def test_a_message_id_two_calls_carry_joins_neither(tmp_path: Path) -> None:
    """Two streams record a call with one message id: a body naming it cannot say which."""
    land(tmp_path, {"main": [prompt("P1"), reply("m1")], "agent-b": [prompt("P2"), reply("m1")]},
         [response("req_1", "m1"), request("qb", "P2")])
    doc = Session(tmp_path, SESSION).document()
    assert [c.get("provider_bodies") for s in doc["streams"] for c in s["calls"]] == [
        None, [{"role": "request", "ref": {"seq": 3, "row": 2}}]]


def test_a_request_that_names_its_call_joins_by_it(tmp_path: Path) -> None:
    """A runtime that names the call on the request (the record's ``call``) needs no chain."""
    land(tmp_path, {"main": [prompt(None), reply("m1"), reply("m2")]},
         [request("q2", None, call="m2"), response("req_2", "m2")])
    assert _bodies(tmp_path) == {"m1": [], "m2": [("request", "q2.request"), ("response", "req_2.response")]}


def test_a_landed_body_listed_twice_is_one_body(tmp_path: Path) -> None:
    """A provider file landed again after a crash repeats its records; the first copy is listed."""
    land(tmp_path, {"main": [prompt("P1"), reply("m1")]}, [request("q1", "P1"), response("req_1", "m1")])
    land(tmp_path, {}, [request("q1", "P1"), response("req_1", "m1")])
    doc: dict[str, Any] = Session(tmp_path, SESSION).document()
    (call,) = doc["streams"][0]["calls"]
    assert [b["ref"]["seq"] for b in call["provider_bodies"]] == [2, 2]
    assert doc["summary"]["provider_bodies"] == 2


def test_hide_withholds_the_step_and_every_body(tmp_path: Path) -> None:
    land(tmp_path, {"main": [prompt("P1"), note("the servers' instructions", ["system_prompt"]), reply("m1")]},
         [request("q1", "P1"), response("req_1", "m1")])
    shown = Session(tmp_path, SESSION).document()
    hidden = Session(tmp_path, SESSION, hide=["system_prompt"]).document()
    assert shown["streams"][0]["calls"][0]["provider_bodies"]
    assert "provider_bodies" not in hidden["streams"][0]["calls"][0]
    assert hidden["summary"]["captured_prompts"] == hidden["summary"]["captured_responses"] == 0
    assert hidden["session"]["hide"] == ["system_prompt"] and "hide" not in shown["session"]
    step = hidden["streams"][0]["steps"][1]
    assert step == {"at": step["at"], "from": "runtime", "flags": ["system_prompt"], "bytes": step["bytes"],
                    "state": "omitted", "parts": [{"block": 0, "k": "text", "bytes": 25, "state": "omitted"}]}
    assert shown["streams"][0]["steps"][1]["parts"][0]["text"] == "the servers' instructions"
    assert hidden["streams"][0]["steps"][0] == shown["streams"][0]["steps"][0]
