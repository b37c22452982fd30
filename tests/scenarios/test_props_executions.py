"""``executions_leave_the_fold``: records beside the steps join them and change no node."""

from __future__ import annotations

from pathlib import Path

import pytest

import asz_core.assembly.assemble as assemble
import asz_core.view.sidecars as sidecars
from asz_core.assembly import evidence
from asz_core.scenario.properties import PROPERTIES
from asz_core.scenario.props_executions import STRAY_TOOL, execution_records
from asz_core.scenario.workspace import Workspace
from tests.scenarios.workspaces import parsed_workspace

#: two tool calls on main, one of them failed, and a child with a tool call of its own
SCENARIO = """\
steps:
  - input: look around
  - call: {text: Listing., tool: {id: t-ls, name: Bash, input: {command: ls}, result: README.md}}
  - call:
      text: Reading.
      tool: {id: t-gone, name: Read, input: {path: GONE.md}, result: {text: no such file, failed: true}}
  - call:
      text: Asking the helper.
      agent:
        name: helper
        prompt: check
        steps:
          - call: {text: Checking., tool: {id: t-kid, name: Bash, input: {command: pwd}, result: /}}
          - call: {text: Fine.}
  - call: {text: Done.}
"""


def _workspace(tmp_path: Path, fmt: str) -> Workspace:
    return parsed_workspace(tmp_path, "executions.yaml", SCENARIO, fmt)


def test_the_hook_writes_one_record_a_tool_call_one_twice_and_one_no_step_carries(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "sd")
    assert ws.plan is not None
    records = execution_records(ws.plan)
    main = [(r["tool"], r["outcome"]) for r in records["main"]]
    agent_tool = next(tool for tool, _ in main if tool.endswith("-tool"))  # the helper's launch
    assert main == [("t-ls", "returned"), ("t-ls", "returned"), ("t-gone", "failed"), (agent_tool, "returned"),
                    (STRAY_TOOL, "returned")]
    (child,) = set(records) - {"main"}
    assert [r["tool"] for r in records[child]] == ["t-kid"]
    assert all("result" not in r for r in records["main"] if r["outcome"] == "failed")


@pytest.mark.parametrize("fmt", ["claude-code", "sd"])
def test_execution_records_join_their_steps_and_leave_the_fold(tmp_path: Path, fmt: str) -> None:
    ws = _workspace(tmp_path, fmt)
    assert PROPERTIES["executions_leave_the_fold"].check(ws) == []
    assert not (tmp_path / f"{fmt}-executions").exists()  # the copy is gone


def test_an_assembler_that_reads_execution_records_as_steps_breaks_the_property(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _workspace(tmp_path, "sd")
    monkeypatch.setattr(assemble, "_IGNORED_KINDS", frozenset({evidence.CHANGES, evidence.PROVIDER_BODY}))
    problems = PROPERTIES["executions_leave_the_fold"].check(ws)
    assert any(p.startswith("stream/main differs") for p in problems), problems


def test_a_document_that_joins_no_record_to_its_step_breaks_the_property(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _workspace(tmp_path, "sd")
    monkeypatch.setattr(sidecars, "_steps_by_tool_use", lambda nodes, landed: {})
    problems = PROPERTIES["executions_leave_the_fold"].check(ws)
    assert len(problems) == 1 and problems[0].startswith("tool_executions joins {"), problems
    assert "'t-ls/client_hook': ''," in problems[0] and "'t-ls/client_hook': 'tool/t-ls'" in problems[0]
