"""``metrics_match_the_plan``: the tokens a receiver gets, the document and the usage count report
are the plan's."""

from __future__ import annotations

from pathlib import Path

import pytest

from asz_core.scenario.properties import PROPERTIES
from asz_core.scenario.props_metrics import plan_tokens
from asz_core.scenario.workspace import Workspace
from asz_core.sessiondata import Header, SessionDataWriter
from tests.scenarios.workspaces import parsed_workspace

#: a main call with its own usage, one at the default, a lost call, a child's call, and a replay
#: of the main stream's last records (the same calls again)
SCENARIO = """\
steps:
  - input: hi
  - call: {text: Reading., usage: {in: 3, out: 50, cache_read: 700, cache_write: 10}}
  - call: {text: Lost., usage: {out: 999}}
    lost: true
  - call:
      text: Asking the helper.
      agent: {name: helper, prompt: help, steps: [{call: {text: Helped., usage: {out: 20}}}]}
  - call: {text: Done.}
  - replay: 3
"""


def _workspace(tmp_path: Path, fmt: str) -> Workspace:
    return parsed_workspace(tmp_path, "metrics.yaml", SCENARIO, fmt)


def test_the_plan_counts_every_call_once_under_its_stream_and_nothing_lost(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "sd")
    assert ws.plan is not None
    # main: 3 calls (the given usage, the agent launch and "Done." at the default 2/40/900/100);
    # the lost call is not there, and the replayed copies are the same calls again
    assert plan_tokens(ws.plan) == {
        "main/calls": 3, "main/in": 3 + 2 + 2, "main/out": 50 + 40 + 40,
        "main/cache_read": 700 + 900 + 900, "main/cache_write": 10 + 100 + 100,
        "subagent/calls": 1, "subagent/in": 2, "subagent/out": 20, "subagent/cache_read": 900,
        "subagent/cache_write": 100}


@pytest.mark.parametrize("fmt", ["claude-code", "sd"])
def test_the_document_and_the_usage_count_say_what_the_plan_spent(tmp_path: Path, fmt: str) -> None:
    assert PROPERTIES["metrics_match_the_plan"].check(_workspace(tmp_path, fmt)) == []


def test_a_landed_usage_that_differs_from_the_plan_breaks_metrics_match_the_plan(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "sd")
    landed = next(f for f in ws.landed() if f.header["kind"] == "transcript" and f.header["stream"] == "main")
    h = landed.header
    path = ws.out / landed.relpath
    path.chmod(0o600)
    with path.open("wb") as sink:  # a file that reads clean, with one call's output counted twice
        writer = SessionDataWriter(sink, Header(kind=h["kind"], session=h["session"], src=h["src"],
                                                dialect=h["dialect"], adapter=h["adapter"], seq=h["seq"],
                                                at=h["at"], stream=h.get("stream")))
        for line, record in landed.records:
            writer.write(line.replace(b'"out":50', b'"out":100'), record.ord, record.off, record.bytes, record.time)
        writer.close()
    problems = PROPERTIES["metrics_match_the_plan"].check(ws)
    assert "the document: main/out is 180, the plan says 130" in problems
    assert "the usage count: main/out is 180, the plan says 130" in problems
    assert "the wire: main/out is 180, the plan says 130" in problems  # derived from the same file


def test_a_spool_request_sent_twice_breaks_metrics_match_the_plan_on_the_wire(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "claude-code")
    spool = sorted((ws.out / "_metrics").glob("metrics-*-local.pb"))  # the build's pass derived them
    assert spool
    twice = spool[0].with_name(f"metrics-{ws.session}-000099-local.pb")
    twice.write_bytes(spool[0].read_bytes())
    problems = PROPERTIES["metrics_match_the_plan"].check(ws)
    assert any(p.startswith("the wire: main/") for p in problems), problems
    assert not any(p.startswith(("the document", "the usage count")) for p in problems), problems


def test_a_call_in_a_file_gone_from_the_root_is_set_aside_only_when_the_scenario_lost_that_file(
        tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "sd")
    child = next(f for f in ws.landed() if f.header["kind"] == "transcript" and f.header["stream"] != "main")
    path = ws.out / child.relpath
    path.chmod(0o600)
    path.unlink()
    problems = PROPERTIES["metrics_match_the_plan"].check(ws)
    assert problems == [f"the usage of helper-s1-call is in seq {child.seq}, which is in no landed file, "
                        f"and the scenario did not lose it"]
    ws.lost.append(child.relpath)  # as the scenario's ``lose`` records it
    assert PROPERTIES["metrics_match_the_plan"].check(ws) == []
