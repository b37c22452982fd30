"""The ``fixture`` scenario's tool changes a file: a ``claude-code`` build lands the plugin's record
through ``changes``, an ``sd`` build writes it as upstream's writer does, and the view lists it
joined to the tool step in both."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from asz_core.scenario.build import BuildOptions, build, parse_at
from asz_core.scenario.check import CheckOptions, check_scenario
from asz_core.scenario.model import load_scenario
from asz_core.testing import run_sdcheck

_PROPERTIES = frozenset({"every_line_a_record", "parts_keep_source_bytes", "cross_format", "records_match",
                         "changes_leave_the_fold"})


@pytest.mark.corpus
def test_the_fixtures_change_is_listed_joined_to_its_step_in_both_formats(corpus: Path, tmp_path: Path) -> None:
    report = check_scenario(corpus / "upstream" / "tests" / "scenarios" / "fixture.yaml",
                            CheckOptions(out=tmp_path, properties=_PROPERTIES))

    assert report.status_of("view") == {"pass"}, report.lines()
    for name in _PROPERTIES:
        assert report.status_of(name) == {"pass"}, (name, report.lines())
    roots = [p.parent for p in tmp_path.rglob("streams/main/changes-*.sd")]
    assert len(roots) >= 2  # a change file in each format's root
    for root in {r.parents[2] for r in roots}:
        verdict = run_sdcheck(root)
        assert verdict is None or verdict["ok"], verdict


def _example(shared: Path) -> dict[str, Any]:
    return dict(yaml.safe_load((shared / "spec" / "upstream" / "formats" / "asz-view-example.yaml").read_text("utf-8")))


def _landed_changes(out: Path) -> dict[str, bytes]:
    """The fixture's landed change file in each format's root, by format."""
    return {path.parents[3].name: path.read_bytes() for path in out.rglob("streams/main/changes-*.sd")}


@pytest.mark.corpus
def test_the_fixtures_change_file_holds_the_record_and_header_upstreams_example_lists(
        corpus: Path, shared: Path, tmp_path: Path) -> None:
    check_scenario(corpus / "upstream" / "tests" / "scenarios" / "fixture.yaml",
                   CheckOptions(out=tmp_path, properties=frozenset()))
    [entry] = [f for f in _example(shared)["files"] if f["kind"] == "changes"]
    [example] = _example(shared)["workspace_changes"]
    landed = _landed_changes(tmp_path)

    assert sorted(landed) == ["claude-code", "sd"]
    # the changes adapter lands the plugin's file of a claude-code build; an sd build writes it
    # itself, under the mock's header, as upstream's writer does
    expected_header = {
        "claude-code": ("changes/0.1.0", "asz-changes/1",
                        "file-changes-skywalking-ai-sessionizer/output/00000001-0000-4000-8000-000000000001/main.jsonl"),
        "sd": ("mock/0.2.0", "mock/1", "-Users-dev-01-full-conversation/00000001-0000-4000-8000-000000000001"
                                       "/streams/main.changes")}
    for format_, data in landed.items():
        header, record, end = data.splitlines()
        assert len(data.splitlines()) == entry["lines"]
        head = orjson.loads(header)
        assert (head["kind"], head["stream"]) == ("changes", "main")
        assert (head["adapter"], head["dialect"], head["src"]) == expected_header[format_]
        [part] = orjson.loads(record)["parts"]
        assert part["data"] == {k: v for k, v in example.items() if k not in ("step", "ref")}
        assert orjson.loads(end)["records"] == 1


@pytest.mark.corpus
def test_an_sd_build_of_the_fixture_lands_upstreams_example_files_byte_for_byte(
        corpus: Path, shared: Path, tmp_path: Path) -> None:
    # as upstream's example is made: one sd build of the whole scenario at its base time
    scenario = load_scenario(corpus / "upstream" / "tests" / "scenarios" / "fixture.yaml")
    build(scenario, tmp_path, BuildOptions(format="sd", at_ms=parse_at("2026-01-01T00:00:00Z")))

    session = tmp_path / "00000001-0000-4000-8000-000000000001"
    landed = {str(path.relative_to(tmp_path)): path.read_bytes() for path in session.rglob("*.sd")}
    want = {f["file"]: (f["seq"], f["bytes"], f["digest"]) for f in _example(shared)["files"] if f["format"] == "sd"}

    assert sorted(landed) == sorted(want)
    for name, data in landed.items():
        assert (orjson.loads(data.split(b"\n", 1)[0])["seq"], len(data), hashlib.sha256(data).hexdigest()) == \
            want[name], name


@pytest.mark.corpus
def test_a_claude_code_build_lands_the_change_file_after_the_transcripts_as_one_pass_lands_adapters(
        corpus: Path, tmp_path: Path) -> None:
    check_scenario(corpus / "upstream" / "tests" / "scenarios" / "fixture.yaml",
                   CheckOptions(out=tmp_path, formats=("claude-code",), properties=frozenset()))

    [session] = [p for p in tmp_path.rglob("00000001-0000-4000-8000-000000000001") if p.parent.name == "claude-code"]
    by_seq = sorted((int(p.stem.rsplit("-", 1)[1]), p.name.split("-", 1)[0], p.parent.name)
                    for p in session.rglob("*.sd"))

    # the delegated checkpoint's pass: claude-code-local's files of every stream, then the plugin's
    assert by_seq[:4] == [(1, "transcript", "main"), (2, "transcript", "a0a10ef0666c4dc7e"),
                          (3, "meta", "a0a10ef0666c4dc7e"), (4, "changes", "main")]
