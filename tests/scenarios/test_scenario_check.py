"""``scenario check`` over upstream's shared scenarios and this project's own.

What this project checks must pass, in both formats; what it cannot check yet must fail by
name. The split is asserted exactly. The full sweep
over every shared scenario is slow (``--slow``); by default two run: the fixture (checkpoints, a
child, a reset) and lost-ends (files deleted from the root), in the Claude Code format (the
fixture in both formats with ``--slow``).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from asz_core.cli.app import App
from asz_core.cli.main import main
from asz_core.scenario.check import DEFAULT_AT_MS, CheckOptions, ScenarioReport, check_scenario
from asz_core.scenario.expect import load_expectations
from asz_core.scenario.model import load_scenario
from asz_core.scenario.properties import PROPERTIES
from asz_core.scenario.workspace import Workspace
from asz_core.sessiondata import Header, SessionDataWriter

HERE = Path(__file__).resolve().parent

#: the properties this project checks: each must hold on every scenario
WORKING = frozenset({"reproducible", "recollect_idempotent", "every_line_a_record", "parts_keep_source_bytes",
                     "discovery_ignores_noise", "pruned_sources_gone", "records_well_formed", "cross_format",
                     "provider_bodies_rebuild", "push_follows_the_wire", "records_match", "fold_equals_parse",
                     "immutable_rounds", "bundle", "header_matches_fold", "changes_leave_the_fold",
                     "provider_bodies_leave_the_fold", "repack_keeps_structure", "view_covers_the_session",
                     "metrics_match_the_plan", "executions_leave_the_fold", "removed_after_sent"})


def _scenarios(corpus: Path) -> list[Path]:
    directory = corpus / "upstream" / "tests" / "scenarios"
    return sorted(p for p in directory.glob("*.yaml") if not p.name.endswith(".expect.yaml"))


#: the properties that push to loopback receivers, most of a small scenario's check: this
#: project's own scenario and the command's test hold them by default, the shared scenarios with --slow
PUSHING = frozenset({"push_follows_the_wire", "removed_after_sent"})


def assert_the_split(report: ScenarioReport, pushed: bool = True) -> None:
    """Every key or property passes, is off or does not apply, or fails as not implemented:
    exactly the ones that need assembly and nothing else (``pushed``: the ``PUSHING`` ones were
    checked)."""
    for o in report.outcomes:
        where = o.line(report.name)
        if o.checkpoint != "properties":
            assert o.status == "pass", where
        elif o.key in WORKING:
            assert o.status in ("pass", "n/a", "off"), where
        else:
            assert o.status in ("not implemented", "n/a", "off"), where
            assert o.status != "not implemented" or o.got.startswith("not implemented: needs"), where
    ran = {o.key for o in report.outcomes if o.checkpoint == "properties" and o.status == "pass"}
    assert {"reproducible", "records_well_formed", "fold_equals_parse", "immutable_rounds",
            "metrics_match_the_plan", "executions_leave_the_fold"} <= ran
    assert not pushed or "push_follows_the_wire" in ran  # rounds travel after their files


@pytest.mark.corpus
# the fixture in one format by default: its sd build runs each property through the same checks, and
# this project's own scenario below shows cross_format on both; both formats with --slow. By
# default without the PUSHING properties, which the sweep below checks on both with --slow
@pytest.mark.parametrize(("name", "formats"), [
    ("fixture", ("claude-code",)), pytest.param("fixture", ("claude-code", "sd"), marks=pytest.mark.slow),
    ("lost-ends", ("claude-code",))])
def test_what_this_project_checks_holds_and_the_rest_fails_by_name(corpus: Path, name: str,
                                                                  formats: tuple[str, ...],
                                                                  slow: bool) -> None:
    report = check_scenario(corpus / "upstream" / "tests" / "scenarios" / f"{name}.yaml",
                            CheckOptions(formats=formats,
                                         properties=None if slow else frozenset(PROPERTIES) - PUSHING))
    assert_the_split(report, pushed=slow)
    assert report.ok, report.lines()  # every key and property of both scenarios is checked, and holds


@pytest.mark.corpus
@pytest.mark.slow
def test_every_shared_scenario_splits_the_same_way(corpus: Path, tmp_path: Path) -> None:
    scenarios = _scenarios(corpus)
    assert len(scenarios) >= 14
    for path in scenarios:
        assert_the_split(check_scenario(path, CheckOptions(out=tmp_path)))


@pytest.mark.corpus
def test_the_claude_code_adapter_and_the_sd_writer_land_the_same_records(corpus: Path, tmp_path: Path) -> None:
    report = check_scenario(corpus / "upstream" / "tests" / "scenarios" / "fixture.yaml",
                            CheckOptions(out=tmp_path, properties=frozenset({"records_match"})))
    assert report.status_of("records_match") == {"pass"}, report.lines()


def test_this_projects_own_scenario_holds_every_property_it_checks() -> None:
    # where the command works without --out (scenario.scratch), as a user's check does
    report = check_scenario(HERE / "claude-code-everything.yaml", CheckOptions())
    assert_the_split(report)
    assert report.status_of("provider_bodies_rebuild") == {"pass"}
    assert report.status_of("cross_format") == {"pass"}  # the sd build lands the same bodies too
    assert report.status_of("verify") == {"pass"}


@pytest.mark.corpus
def test_the_command_prints_each_failure_by_scenario_checkpoint_and_key(corpus: Path, tmp_path: Path) -> None:
    shared = corpus / "upstream" / "tests" / "scenarios"
    scenario = tmp_path / "tool-both-sides.yaml"
    scenario.write_bytes((shared / "tool-both-sides.yaml").read_bytes())
    expect = (shared / "tool-both-sides.expect.yaml").read_text("utf-8")
    assert "llm.call: 2}" in expect  # the call count made wrong: a failure to print
    (tmp_path / "tool-both-sides.expect.yaml").write_text(expect.replace("llm.call: 2}", "llm.call: 9}", 1))
    out, err = io.StringIO(), io.StringIO()
    code = main(["scenario", "check", str(scenario), "--format", "sd", "--out", str(tmp_path / "out")],
                App(out=out, err=err))
    assert code == 1
    lines = out.getvalue().splitlines()
    assert any(line.startswith('tool-both-sides / final (sd) / kinds: expected {"llm.call": 9, "tool": 1}, got ')
               for line in lines), lines
    assert "tool-both-sides / final (sd) / nodes: pass" in lines
    assert "tool-both-sides / properties (sd) / metrics_match_the_plan: pass" in lines
    assert "tool-both-sides / properties (sd) / executions_leave_the_fold: pass" in lines
    assert "tool-both-sides / properties (sd) / removed_after_sent: pass" in lines
    assert "tool-both-sides / properties (sd) / view_covers_the_session: pass" in lines
    assert "tool-both-sides / properties (sd) / records_well_formed: pass" in lines
    out = io.StringIO()
    assert main(["scenario", "check", str(scenario), "--format", "sd", "--json"], App(out=out, err=err)) == 1
    verdict = json.loads(out.getvalue())
    assert verdict["ok"] is False
    statuses = {o["key"]: o["status"] for o in verdict["scenarios"][0]["outcomes"]}
    assert statuses["kinds"] == "fail" and statuses["view_covers_the_session"] == "pass"
    assert statuses["metrics_match_the_plan"] == "pass" and statuses["removed_after_sent"] == "pass"


def test_an_expectation_for_a_checkpoint_the_scenario_does_not_name_is_refused(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text("steps: [{input: hi, checkpoint: one}]\n")
    (tmp_path / "s.expect.yaml").write_text("checkpoints: {two: {rounds: 1}}\n")
    err = io.StringIO()
    assert main(["scenario", "check", str(tmp_path / "s.yaml")], App(out=io.StringIO(), err=err)) == 2
    assert "no such checkpoint" in err.getvalue()


def _workspace(tmp_path: Path, fmt: str = "claude-code", path: Path = HERE / "claude-code-everything.yaml",
               drop_last: bool = False) -> Workspace:
    scenario = load_scenario(path)
    if drop_last:
        scenario.steps = scenario.steps[:-1]
    ws = Workspace(scenario, load_expectations(scenario), fmt, tmp_path / f"{fmt}-{drop_last}", DEFAULT_AT_MS)
    ws.build()
    ws.collect()
    return ws


def test_a_source_byte_changed_after_landing_breaks_parts_keep_source_bytes(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    assert PROPERTIES["parts_keep_source_bytes"].check(ws) == []
    transcript = ws.source / ws.plan.project / f"{ws.session}.jsonl"  # type: ignore[union-attr]
    data = transcript.read_bytes()
    transcript.write_bytes(data.replace(b"Reading the README.", b"Reading the READMF.", 1))
    problems = PROPERTIES["parts_keep_source_bytes"].check(ws)
    assert problems and "is not the digest of the source bytes" in problems[0]


def test_a_record_field_with_no_stated_purpose_breaks_records_well_formed(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "sd")
    assert PROPERTIES["records_well_formed"].check(ws) == []
    landed = next(f for f in ws.landed() if f.header["kind"] == "transcript")
    h = landed.header
    header = Header(kind=h["kind"], session=h["session"], src=h["src"], dialect=h["dialect"], adapter=h["adapter"],
                    seq=h["seq"], at=h["at"], stream=h.get("stream"))
    path = ws.out / landed.relpath
    path.chmod(0o600)
    with path.open("wb") as sink:  # a file that reads clean, digest and all, with one field too many
        writer = SessionDataWriter(sink, header)
        for row, (line, record) in enumerate(landed.records):
            changed = line.replace(b'{"ord":1,', b'{"ord":1,"note":"x",', 1) if row == 0 else line
            writer.write(changed, record.ord, record.off, record.bytes, record.time)
        writer.close()
    problems = PROPERTIES["records_well_formed"].check(ws)
    assert problems == [f"records_well_formed: {path.name} record 1 carries note, with no stated purpose"]


def test_the_formats_landing_different_records_breaks_cross_format(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("steps: [{input: hi}, {call: {text: Reading., tool: {name: Read, result: ok}}},"
                    " {call: {agent: {name: helper, prompt: help, steps: [{call: {text: done}}]}}},"
                    " {call: {text: Done.}}]\n")
    cc, sd = _workspace(tmp_path, "claude-code", path), _workspace(tmp_path, "sd", path)
    assert PROPERTIES["cross_format"].check(cc, sd) == []
    shorter = _workspace(tmp_path, "sd", path, drop_last=True)  # the sd side without the last step
    problems = PROPERTIES["cross_format"].check(cc, shorter)
    assert problems and "transcript:main" in problems[0]
