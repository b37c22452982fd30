"""The provider-body join rules (asz-view, "Provider bodies"), each on a small session landed with
the core writer, parsed, and read back from its ``asz.view`` document: exact joins, and every way a
join is refused. The join is made when a round is parsed; the document lists what the round says."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from asz_core.providerbody import BodyStore, CutRules
from asz_core.providerbody.encode import encode_body
from asz_core.providerbody.landing import SUBDIR
from asz_core.root.storage import StorageRoot
from asz_core.sessiondata import Header, Record, open_file
from asz_core.sessiondata.writer import record_line
from asz_core.view import Session
from tests.core.view.view_helpers import (
    CLOCK_NS,
    SESSION,
    Body,
    calls_of,
    land,
    note,
    prompt,
    reply,
    request,
    response,
    result,
    view_of,
    walk,
)


def _bodies(root: Path) -> dict[str, list[tuple[str, str]]]:
    """Each call id → its listed bodies as ``(role, record id)``, read back through Session."""
    session = Session(root, SESSION)
    return {call_id: [(b["role"], session.entry(b["ref"]).id) for b in call.get("provider_bodies", [])]
            for call_id, call in calls_of(view_of(root)).items()}


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
    assert _bodies(tmp_path)["m3"] == [("request", "q3.request"), ("response", "req_3.response")]


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
    synthetic = calls_of(view_of(tmp_path))["s1"]
    assert [c["kind"] for c in synthetic["children"]] == ["message.synthetic"]
    assert "provider_bodies" not in synthetic
    assert _bodies(tmp_path)["m2"] == [("request", "q2.request"), ("response", "req_2.response")]


def test_a_stream_with_a_gap_joins_no_request_that_names_no_call(tmp_path: Path) -> None:
    """Line 3 of the stream never landed: a call may be missing between two that look
    consecutive, so no request that names no call joins there; responses still join, and the
    other stream joins as ever."""
    land(tmp_path, {"main": [prompt("P1"), reply("m1"), reply("m2")], "agent-b": [prompt("P2"), reply("b1")]},
         [request("q1", "P1"), response("req_1", "m1"), request("q2", "P1", "req_1"), response("req_2", "m2"),
          request("qb", "P2"), response("req_b", "b1")],
         ords={"main": [1, 2, 4]})
    assert _bodies(tmp_path) == {"m1": [("response", "req_1.response")], "m2": [("response", "req_2.response")],
                                 "b1": [("request", "qb.request"), ("response", "req_b.response")]}


def test_a_repeated_record_is_not_a_gap(tmp_path: Path) -> None:
    """A record landed twice (a crash before the cursor moved) is kept once and breaks nothing."""
    records = [prompt("P1"), reply("m1"), reply("m2")]
    land(tmp_path, {"main": records}, [request("q1", "P1"), response("req_1", "m1"),
                                       request("q2", "P1", "req_1"), response("req_2", "m2")])
    again = land(tmp_path / "again", {"main": [*records, reply("m2")]}, [],
                 ords={"main": [1, 2, 3, 3]})
    doc = view_of(tmp_path / "again")
    assert again.is_dir() and doc["summary"]["state"] == "verified"
    assert sorted(calls_of(doc)) == ["m1", "m2"]


def test_two_responses_with_one_message_id_join_neither(tmp_path: Path) -> None:
    land(tmp_path, {"main": [prompt("P1"), reply("m1")]},
         [request("q1", "P1"), response("req_1", "m1"), response("req_x", "m1")])
    assert _bodies(tmp_path) == {"m1": [("request", "q1.request")]}


def test_a_message_id_two_streams_carry_is_one_call_and_a_body_naming_it_joins_it(tmp_path: Path) -> None:
    """Upstream's rule (session-flow, "Ids": ``call/<provider call id>``): a call is grouped by its
    message id across the session, so two streams' records with one id are one call, whose prompt
    is the run of its first fragment. A response naming the id joins it; a request naming the other
    stream's prompt is not its request."""
    land(tmp_path, {"main": [prompt("P1"), reply("m1")], "agent-b": [prompt("P2"), reply("m1")]},
         [response("req_1", "m1"), request("qb", "P2")])
    (call,) = [n for n in walk(view_of(tmp_path)) if n["kind"] == "llm.call"]
    assert call["id"] == "call/m1" and call["refs"] == [{"seq": 1, "row": 2}, {"seq": 2, "row": 2}]
    assert call["provider_bodies"] == [{"role": "response", "ref": {"seq": 3, "row": 1}}]


def _land_records(root: Path, bodies: list[Body], edit: Callable[[Body, Record], None]) -> None:
    """Land ``bodies`` in one ``provider_body`` file as a lander that writes its own records
    would: each cut by the core rules, then ``edit``-ed before it is written."""
    store = StorageRoot(root, pass_started_ns=CLOCK_NS)
    with store.open_session(SESSION) as handle:
        landing = handle.begin(SUBDIR, Header(kind="provider_body", session=SESSION, src=".",
                                              dialect="test-provider/1", adapter="test/0"))
        for body in bodies:
            record = encode_body(body.bytes(), body.info(), BodyStore(), CutRules())
            edit(body, record)
            landing.write(*record_line(record))
        handle.commit(landing)


def test_a_request_whose_call_only_its_manifest_names_joins_by_no_call(tmp_path: Path) -> None:
    """Upstream's lander writes a request's ``call`` in its manifest and not on its record, and
    its assembly joins a request by the call its record names: so such a request is not joined
    by it (nor by its chain, having no prompt)."""
    land(tmp_path, {"main": [prompt(None), reply("m1"), reply("m2")]},
         [request("q2", None, call="m2"), response("req_2", "m2")])
    (landed,) = (tmp_path / SESSION / SUBDIR).glob("*.sd")
    q2 = next(iter(open_file(landed)))
    assert q2.call is None and q2.parts[-1].value()["call"] == "m2"
    assert _bodies(tmp_path) == {"m1": [], "m2": [("response", "req_2.response")]}


def test_a_request_whose_record_names_its_call_joins_by_it(
        tmp_path: Path, assert_root_verifies: Callable[[Path], None]) -> None:
    """A runtime whose request knows its call, landed with the call on the record, needs no chain."""
    land(tmp_path, {"main": [prompt(None), reply("m1"), reply("m2")]})

    def name_the_call(body: Body, record: Record) -> None:
        record.call = body.call

    _land_records(tmp_path, [request("q2", None, call="m2"), response("req_2", "m2")], name_the_call)
    assert _bodies(tmp_path) == {"m1": [], "m2": [("request", "q2.request"), ("response", "req_2.response")]}
    assert_root_verifies(tmp_path)


def test_a_request_whose_run_only_its_manifest_names_joins_by_no_prompt(tmp_path: Path) -> None:
    """The prompt a request joins by is the run its record names, as upstream's index reads it; a
    manifest naming one beside a record naming none does not stand in for it."""
    land(tmp_path, {"main": [prompt("P1"), reply("m1")]})

    def drop_the_run(body: Body, record: Record) -> None:
        record.run = None

    _land_records(tmp_path, [request("q1", "P1"), response("req_1", "m1")], drop_the_run)
    assert _bodies(tmp_path) == {"m1": [("response", "req_1.response")]}
    # the same bodies with the run on the record, as the core lander writes it, join
    land(tmp_path / "kept", {"main": [prompt("P1"), reply("m1")]}, [request("q1", "P1"), response("req_1", "m1")])
    assert _bodies(tmp_path / "kept") == {"m1": [("request", "q1.request"), ("response", "req_1.response")]}


def test_a_landed_body_listed_twice_is_one_body(tmp_path: Path) -> None:
    """A provider file landed again after a crash repeats its records; the first copy is listed."""
    land(tmp_path, {"main": [prompt("P1"), reply("m1")]}, [request("q1", "P1"), response("req_1", "m1")])
    land(tmp_path, {}, [request("q1", "P1"), response("req_1", "m1")])
    doc = view_of(tmp_path)
    (call,) = calls_of(doc).values()
    assert [b["ref"]["seq"] for b in call["provider_bodies"]] == [2, 2]
    assert doc["summary"]["provider_bodies"] == 2


def test_hide_withholds_the_step_and_every_body(tmp_path: Path) -> None:
    land(tmp_path, {"main": [prompt("P1"), note("the servers' instructions", ["injected", "system_prompt"]),
                             reply("m1")]},
         [request("q1", "P1"), response("req_1", "m1")])
    shown, hidden = view_of(tmp_path), view_of(tmp_path, hide=["system_prompt"])
    assert calls_of(shown)["m1"]["provider_bodies"] and shown["summary"]["captured_prompts"] == 1
    assert "provider_bodies" not in calls_of(hidden)["m1"] and hidden["summary"]["captured_prompts"] == 0
    assert hidden["summary"]["withheld"] == {"provider_bodies": 2, "system_prompt": 1}
    assert shown["summary"]["withheld"] == {}
    (step,) = [n for n in walk(hidden) if "system_prompt" in n.get("flags", [])]
    (was,) = [n for n in walk(shown) if n["id"] == step["id"]]
    assert was["text"] == "the servers' instructions" and was["state"] == "available"
    assert "text" not in step and step["state"] == "omitted" and step["bytes"] == 25
    assert step == {k: v for k, v in was.items() if k != "text"} | {"state": "omitted"}
    # everything else is the same document, counts and chain included
    assert [n["id"] for n in walk(hidden)] == [n["id"] for n in walk(shown)]
    assert {k: v for k, v in hidden["summary"].items() if k not in ("withheld", "captured_prompts")} == \
        {k: v for k, v in shown["summary"].items() if k not in ("withheld", "captured_prompts")}
