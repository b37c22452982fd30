"""A scenario's tool that changes files: the record the asz Claude Code plugin writes for it, or, for
Claude Code's own editing tools, the patch the runtime records on the result."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
import yaml

from asz_core.scenario.build import parse_at
from asz_core.scenario.changes import PLUGIN_DIR, plugin_files, runtime_record, runtime_result
from asz_core.scenario.check import CheckOptions, check_scenario
from asz_core.scenario.model import ScenarioError, load_scenario
from asz_core.scenario.plan import plan
from asz_core.sessiondata import open_file
from asz_core.testing import run_sdcheck

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
    ("Edit", [{"path": "a.go", "before": "a\n", "after": "b\n"}, {"path": "b.go", "before": "a\n", "after": "b\n"}],
     "one patch per result"),
    ("Write", [{"path": "a.go", "after": "b\n"}, {"path": "b.go", "after": "b\n"}], "one patch per result"),
    ("Edit", [{"path": "a.go", "after": "b\n"}], "use Write to create"),
    ("Edit", [{"path": "a.go", "before": "a\n"}], "use Write to create"),
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


_EDITING = Path(__file__).with_name("editing-tools.yaml")


def test_an_editing_tools_change_is_on_its_result_as_the_runtime_writes_it_and_the_plugin_writes_none() -> None:
    p = plan(load_scenario(_EDITING), at_ms=AT)
    edit, write, bash = (e for e in p.events if e.kind == "result" and e.changes)

    edited, written = runtime_result(p, edit), runtime_result(p, write)

    assert edited == {
        "filePath": "/Users/dev/editing/internal/version.go", "originalFile": edit.changes[0].before,
        "structuredPatch": [{"oldStart": 1, "oldLines": 3, "newStart": 1, "newLines": 3, "lines": [
            " package internal", " ", '-const Version = "0.2.0"', '+const Version = "0.3.0"']}],
        "userModified": False, "oldString": edit.changes[0].before, "newString": edit.changes[0].after,
        "replaceAll": False}
    assert (written["originalFile"], written["type"], written["content"]) == (None, "create", "# notes\n<b> & done")
    # the plugin observes only the tool whose patch the runtime does not record
    [data] = plugin_files(p).values()
    assert [orjson.loads(line)["tool"] for line in data.splitlines()] == [bash.of]
    record = orjson.loads(runtime_record(p, write) or b"")
    assert (record["captured_by"], record["basis"], record["changes"][0]["operation"]) == (
        "claude-code", "runtime_reported", "create")
    # encoded as upstream's adapter encodes it, Go's escapes and all
    assert b'"+\\u003cb\\u003e \\u0026 done"' in (runtime_record(p, write) or b"")


def _derived(root: Path) -> dict[str, bytes]:
    """Each landed change record derived beside a result, by its tool-use id."""
    out = {}
    for path in sorted(root.rglob("streams/main/transcript-*.sd")):
        with open_file(path) as f:
            for record in f:
                for part in record.parts:
                    if part.k == "data" and bytes(part.data).startswith(b'{"schema":"changes/1"'):
                        out[orjson.loads(bytes(part.data))["tool"]] = bytes(part.data)
    return out


@pytest.mark.corpus
def test_both_formats_land_the_editing_tools_changes_byte_for_byte(tmp_path: Path, shared: Path) -> None:
    properties = frozenset({"cross_format", "records_match", "parts_keep_source_bytes", "changes_leave_the_fold"})
    report = check_scenario(_EDITING, CheckOptions(out=tmp_path, properties=properties))

    assert report.status_of("view") == {"pass"}, report.lines()
    for name in properties:
        assert report.status_of(name) == {"pass"}, (name, report.lines())
    roots = sorted({p.parents[3] for p in tmp_path.rglob("streams/main/transcript-*.sd")})
    assert len(roots) == 2
    cc, sd = (_derived(root) for root in roots)
    assert set(cc) == {"toolu-edit-version", "toolu-write-notes"}
    assert cc == sd
    for root in roots:
        verdict = run_sdcheck(root)
        assert verdict is None or verdict["ok"], verdict
