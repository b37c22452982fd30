"""``scenario build``: the files a Claude Code session leaves, or mock/1 Session Data, reproducibly."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from asz_core.cli.main import main
from asz_core.scenario.build import BuildOptions, build, parse_at
from asz_core.scenario.model import ScenarioError, load_scenario
from asz_core.testing import run_sdcheck
from asz_core.verify import verify_root

HERE = Path(__file__).resolve().parent
OWN = HERE / "claude-code-everything.yaml"
AT = parse_at("2026-01-01T00:00:00Z")


def _tree(root: Path) -> dict[str, str]:
    out = {}
    for directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "index"]  # derived and disposable: it names file times
        for name in files:
            path = Path(directory) / name
            data = path.read_bytes()
            if name == "asz.yaml":  # it names its directory by absolute path
                data = data.replace(str(root.resolve()).encode(), b"DIR")
            out[str(path.relative_to(root))] = hashlib.sha256(data).hexdigest()
    return out


def _build(tmp: Path, fmt: str, scenario: Path = OWN, **kwargs: object) -> Path:
    out = tmp / fmt
    code = main(["scenario", "build", str(scenario), "--format", fmt, "--out", str(out),
                 "--at", "2026-01-01T00:00:00Z", *[str(a) for kv in kwargs.items() for a in kv]])
    assert code == 0
    return out


@pytest.mark.parametrize("fmt", ["claude-code", "sd"])
def test_a_build_with_a_fixed_at_writes_the_same_bytes_twice(tmp_path: Path, fmt: str) -> None:
    first = _tree(_build(tmp_path / "a", fmt))
    second = _tree(_build(tmp_path / "b", fmt))
    landed = [name for name in first if name.endswith((".jsonl", ".sd"))]
    assert landed, "the build wrote no transcript"
    # an sd build's lock and state note are the session's, not the build's output
    assert {k: v for k, v in first.items() if not k.endswith(".lock")} == \
        {k: v for k, v in second.items() if not k.endswith(".lock")}


def test_the_built_files_look_like_claude_codes_own(tmp_path: Path) -> None:
    out = _build(tmp_path, "claude-code")
    project = out / "_source" / "-Users-dev-scenario"
    (main_file,) = [p for p in project.glob("*.jsonl") if p.name != "not-a-uuid.jsonl"]
    lines = [json.loads(line) for line in main_file.read_text("utf-8").split("\n")[:-1]]  # not splitlines: U+2028
    first = lines[1]
    assert list(first)[:2] == ["parentUuid", "isSidechain"]
    assert first["promptId"] == "s1-cycle" and first["origin"] == {"kind": "human"}
    assert first["sessionId"] == main_file.stem and first["timestamp"] == "2026-01-01T00:00:00.000Z"
    by_id = {line.get("uuid"): line for line in lines}
    # every parent is a record of the file, but the lost result's: the record after it still names it
    assert {line["parentUuid"] for line in lines[2:] if line.get("parentUuid")} - set(by_id) == {"s5-result"}
    calls = [line for line in lines if line.get("type") == "assistant"]
    assert all(line["requestId"] and line["message"]["id"] for line in calls)
    # source JSON keeps <, >, & and U+2028/U+2029 as the characters, as a JavaScript runtime writes them
    raw = main_file.read_text("utf-8")
    assert "<all> & report\u2028then stop\u2029" in raw and "\\u2028" not in raw
    session = project / main_file.stem
    children = sorted(p.name for p in (session / "subagents").glob("agent-*"))
    assert any(name.endswith(".meta.json") for name in children)
    run = session / "subagents" / "workflows" / "wf_6ce8adcf-32f"
    assert (run / "journal.jsonl").is_file() and (session / "workflows" / "wf_6ce8adcf-32f.json").is_file()
    assert (project / "memory" / "notes.md").is_file()  # the noise discovery must pass over
    bodies = sorted((out / "_source" / "provider-bodies").iterdir())
    assert len([b for b in bodies if b.name.endswith(".request.json")]) == \
        len([b for b in bodies if b.name.endswith(".response.json")]) > 0
    request = json.loads(next(b for b in bodies if b.name.endswith(".request.json")).read_bytes())
    assert json.loads(request["metadata"]["user_id"])["session_id"] == main_file.stem
    assert "cc_prompt_id=" in request["system"][0]["text"]


def test_the_built_files_land_through_both_adapters_and_verify(tmp_path: Path) -> None:
    out = _build(tmp_path, "claude-code")
    assert main(["run", "--config", str(out / "asz.yaml"), "--full"]) == 0
    assert main(["verify", "--config", str(out / "asz.yaml")]) == 0
    reports = verify_root(out)
    assert [r.session for r in reports] and not [p for r in reports for p in r.problems]
    kinds = {f.parent.name for r in reports for f in (out / r.session).rglob("*.sd")}
    assert "provider_body" in kinds  # the provider adapter landed the bodies
    verdict = run_sdcheck(out)
    if verdict is not None:
        assert verdict["ok"], verdict["problems"]


def test_an_sd_build_lands_mock_session_data_that_verifies(tmp_path: Path) -> None:
    out = _build(tmp_path, "sd")
    reports = verify_root(out)
    assert reports and not [p for r in reports for p in r.problems]
    header = json.loads(next(out.rglob("transcript-*.sd")).read_text("utf-8").splitlines()[0])
    assert header["dialect"] == "mock/1"
    verdict = run_sdcheck(out)
    if verdict is not None:
        assert verdict["ok"], verdict["problems"]


def test_a_later_checkpoint_only_extends_what_an_earlier_one_wrote(tmp_path: Path) -> None:
    scenario = load_scenario(OWN)
    early = build(scenario, tmp_path, BuildOptions(at_ms=AT, through="read"))
    before = {p: p.read_bytes() for p in early.files if p.suffix == ".jsonl"}
    build(scenario, tmp_path, BuildOptions(at_ms=AT))
    for path, data in before.items():
        assert path.read_bytes().startswith(data), path


def test_repeat_builds_sessions_end_to_end_with_ids_counted_up(tmp_path: Path) -> None:
    scenario = load_scenario(OWN)
    built = build(scenario, tmp_path, BuildOptions(at_ms=AT, repeat=3, format="sd"))
    first, second, third = built.plans
    assert int(second.session[-12:], 16) == int(first.session[-12:], 16) + 1
    assert third.at >= second.at + second.span_ms() > first.at + first.span_ms()


def test_a_configuration_the_build_did_not_write_is_refused_and_appended_lines_are_kept(tmp_path: Path) -> None:
    scenario = load_scenario(OWN)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "asz.yaml").write_text("storage: {root: .}\n")
    with pytest.raises(ScenarioError, match="not written by a scenario build"):
        build(scenario, tmp_path / "mine", BuildOptions(at_ms=AT))
    build(scenario, tmp_path / "ours", BuildOptions(at_ms=AT))
    config = tmp_path / "ours" / "asz.yaml"
    config.write_text(config.read_text() + "export: {otlp: {endpoint: 127.0.0.1:1}}\n")
    build(scenario, tmp_path / "ours", BuildOptions(at_ms=AT))
    assert config.read_text().endswith("export: {otlp: {endpoint: 127.0.0.1:1}}\n")


@pytest.mark.parametrize(("text", "message"), [
    ("steps: [{input: hi, call: {text: x}}]", "exactly one of"),
    ("steps: [{call: {text: x, tool: {name: Bash, reslt: ok}}}]", "unknown key 'reslt'"),
    ("steps: [{input: hi, after: soon}]", "not a duration"),
    ("steps: [{input: a, checkpoint: c}, {input: b, checkpoint: c}]", "named twice"),
    ("system_prompt: x\nsteps: [{input: hi}]", "come together"),
    ("system_prompt: x\ntools: [{name: Read}]\nsteps: [{call: {tool: {name: Bash}}}]", "do not advertise"),
])
def test_a_scenario_that_cannot_be_used_is_refused_with_its_place(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ScenarioError, match=message):
        load_scenario(path)
    assert main(["scenario", "build", str(path), "--out", str(tmp_path / "out")]) == 2
