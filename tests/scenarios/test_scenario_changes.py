"""A scenario's tool that changes files: the record the asz Claude Code plugin writes for it."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
import yaml

from asz_core.scenario.build import parse_at
from asz_core.scenario.changes import PLUGIN_DIR, plugin_files
from asz_core.scenario.model import ScenarioError, load_scenario
from asz_core.scenario.plan import plan

AT = parse_at("2026-01-01T00:00:00Z")


@pytest.mark.corpus
def test_the_fixtures_change_is_the_record_upstreams_view_example_shows(shared: Path) -> None:
    scenario = load_scenario(shared / "corpus" / "upstream" / "tests" / "scenarios" / "fixture.yaml")
    example = yaml.safe_load((shared / "spec" / "upstream" / "formats" / "asz-view-example.yaml").read_text("utf-8"))
    [entry] = example["workspace_changes"]
    p = plan(scenario, at_ms=AT)

    files = plugin_files(p)

    assert list(files) == [f"{PLUGIN_DIR}/output/{p.session}/main.jsonl"]
    [line] = files[f"{PLUGIN_DIR}/output/{p.session}/main.jsonl"].splitlines()
    record = orjson.loads(line)
    assert record == {k: v for k, v in entry.items() if k not in ("step", "ref")}
    assert list(record) == [k for k in entry if k not in ("step", "ref")]  # upstream's key order


def _scenario(tmp_path: Path, tool: str, changes: object) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({"steps": [{"input": "go"}, {"call": {"tool": {
        "name": tool, "input": {}, "result": "done", "changes": changes}}}]}), "utf-8")
    return path


@pytest.mark.parametrize(("tool", "changes", "why"), [
    ("Edit", [{"path": "a.go", "before": "a\n", "after": "b\n"}], "records its own patch"),
    ("Bash", [{"path": "/abs/a.go", "after": "b\n"}], "relative to the workspace"),
    ("Bash", [{"path": "a.go"}], "neither a before nor an after"),
    ("Bash", [{"path": "a.go", "after": "b\n", "mode": "0644"}], "mode"),
    ("Bash", {"path": "a.go"}, "a list"),
])
def test_a_change_neither_producer_could_write_is_refused_by_name(tmp_path: Path, tool: str, changes: object,
                                                                  why: str) -> None:
    with pytest.raises(ScenarioError, match=why):
        load_scenario(_scenario(tmp_path, tool, changes))


def test_a_created_and_a_deleted_file_have_no_side_there_and_a_failed_call_says_so(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({"steps": [{"input": "go"}, {"call": {"tool": {
        "name": "Bash", "input": {}, "result": {"text": "boom", "failed": True},
        "changes": [{"path": "new.txt", "after": "x"}, {"path": "old.txt", "before": "y\n"}]}}}]}), "utf-8")
    p = plan(load_scenario(path), at_ms=AT)

    [data] = plugin_files(p).values()
    record = orjson.loads(data)

    assert record["outcome"] == {"state": "failed", "exit_code": 1}
    created, deleted = record["changes"]
    assert (created["operation"], created["before"], created["after"]["no_newline_at_end"]) == (
        "create", {"present": False, "bytes": None}, True)
    assert (deleted["operation"], deleted["after"], deleted["additions"], deleted["deletions"]) == (
        "delete", {"present": False, "bytes": None}, 0, 1)
