"""Discovery and layout on constructed trees: what is a source, where it lands, what is refused.

These trees are built in the test (the corpus has no workflow runs, sidecars or refused names);
the lines in them are the demo's, which are written in Claude Code's shapes.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from asz_adapters.claude_code_local.dialect import SCRIPT_REASON
from asz_adapters.claude_code_local.discover import default_source_root, scan
from asz_adapters.claude_code_local.ids import RefusedId, agent_id, run_id, script_run_id, session_id
from asz_core.context import PassSummary
from asz_core.root.index import CALL, DIRECTORY, SessionIndex, session_ids
from asz_core.root.storage import landed_files
from asz_core.sessiondata import open_file
from asz_core.testing import PassRunner
from tests.helpers import REPO

DEMO = REPO / "examples" / "demo" / "claude-code" / "projects"
NOTES = "-home-dev-notes"
WF_SESSION = "c3b5d7e9-1a2b-4c3d-8e4f-5a6b7c8d9e0f"
RUN = "wf_5e8a1c3f-7b2"
FORECAST = "-home-dev-projects-forecast"
AGENT_SESSION = "9d2e7b14-3c5a-4f80-b6e1-7a8c9d0e1f23"
PLAIN_SESSION = "4f1c8a2e-9b3d-4e6f-8a1b-2c3d4e5f6a7b"


@pytest.fixture
def projects(tmp_path: Path) -> Path:
    target = tmp_path / "projects"
    shutil.copytree(DEMO, target)
    return target


def _files(root: Path, session: str) -> dict[str, list[dict[str, object]]]:
    """``<subdir>/<kind>`` → the headers of its landed files, and their records under ``records``."""
    out: dict[str, list[dict[str, object]]] = {}
    for _, path in sorted(landed_files(root / session)):
        with open_file(path) as reader:
            header = dict(reader.header)
            header["records"] = list(reader)
        key = f"{path.parent.parent.name}/{path.parent.name}/{header['kind']}"
        out.setdefault(key, []).append(header)
    return out


@pytest.mark.parametrize("name", ["4f1c8a2e-9b3d-4e6f-8a1b-2c3d4e5f6a7b", "41090DAB-113C-4C5A-9E2B-0123456789AB"])
def test_session_ids_are_uuids_in_either_case_and_kept_as_written(name: str) -> None:
    assert session_id(name) == name


@pytest.mark.parametrize("name", ["sessionId-0004", "../4f1c8a2e-9b3d-4e6f-8a1b-2c3d4e5f6a7b", "",
                                  "4f1c8a2e9b3d4e6f8a1b2c3d4e5f6a7b", "4f1c8a2e-9b3d-4e6f-8a1b-2c3d4e5f6a7b/x"])
def test_anything_else_is_not_a_session_id(name: str) -> None:
    with pytest.raises(RefusedId):
        session_id(name)


@pytest.mark.parametrize("name", ["a881341", "a0ecfa598b8d3e4cb", "acompact-946d2b"])
def test_agent_ids_in_claude_codes_shapes(name: str) -> None:
    assert agent_id(name) == name


@pytest.mark.parametrize("name", ["A881341", "a88134", "a0ecfa598b8d3e4cbb", "acompact-", "acompact-xyz",
                                  "..", "a881341/../x", "main", "ab1c2d3e4f5a6b7c8."])
def test_other_agent_ids_are_refused(name: str) -> None:
    with pytest.raises(RefusedId):
        agent_id(name)


def test_a_script_names_its_run_after_the_last_dash_wf() -> None:
    assert script_run_id("tidy-notes-wf_5e8a1c3f-7b2.js") == "wf_5e8a1c3f-7b2"
    assert script_run_id("make-wf_tools-wf_afa31e47-f6c.js") == "wf_afa31e47-f6c"
    for bad in ("tidy-notes.js", "-wf_5e8a1c3f-7b2.js", "x-wf_ZZ.js"):
        with pytest.raises(RefusedId):
            script_run_id(bad)
    with pytest.raises(RefusedId):
        run_id("wf_../../etc")


def test_every_source_kind_lands_in_its_place(projects: Path, run_local: Callable[..., PassSummary],
                                              asz_pass: PassRunner,
                                              assert_root_verifies: Callable[[Path], None]) -> None:
    summary = run_local(projects)
    assert not summary.failed
    assert (summary.totals.sessions, summary.totals.sources, summary.totals.landed) == (3, 10, 10)
    files = _files(asz_pass.root, WF_SESSION)
    assert sorted(files) == ["runs/wf_5e8a1c3f-7b2/journal", "runs/wf_5e8a1c3f-7b2/workflow_manifest",
                             "runs/wf_5e8a1c3f-7b2/workflow_script", "streams/ab1c2d3e4f5a6b7c8/agent_meta",
                             "streams/ab1c2d3e4f5a6b7c8/transcript", "streams/main/transcript"]
    base = f"{NOTES}/{WF_SESSION}"
    (child,) = files["streams/ab1c2d3e4f5a6b7c8/transcript"]
    # filed under the run, yet not the run's (as upstream files it): its journal joins them
    assert (child["src"], child["stream"], child.get("batch")) == (
        f"{base}/subagents/workflows/{RUN}/agent-ab1c2d3e4f5a6b7c8.jsonl", "ab1c2d3e4f5a6b7c8", None)
    (journal,) = files[f"runs/{RUN}/journal"]
    assert (journal["src"], journal.get("stream"), journal["batch"]) == (
        f"{base}/subagents/workflows/{RUN}/journal.jsonl", None, RUN)
    started, result = journal["records"]  # type: ignore[misc]
    assert started.child == result.child == "ab1c2d3e4f5a6b7c8" and started.batch == RUN
    assert (started.flags, result.flags, result.from_) == ([], ["child_result"], "runtime")
    (manifest,) = files[f"runs/{RUN}/workflow_manifest"]
    (record,) = manifest["records"]  # type: ignore[misc]
    assert manifest["src"] == f"{base}/workflows/{RUN}.json"
    assert (record.ord, record.off, record.label, record.batch, record.time) == (1, 0, "tidy-notes", RUN, None)
    assert record.parts[0].k == "data" and record.parts[0].value()["workflowName"] == "tidy-notes"
    source = (projects / NOTES / WF_SESSION / "workflows" / f"{RUN}.json").read_bytes()
    # the whole document, its indentation included, without its trailing newline (upstream trims it)
    assert record.bytes == len(source.rstrip(b"\r\n")) == len(source) - 1
    (script,) = files[f"runs/{RUN}/workflow_script"]
    (record,) = script["records"]  # type: ignore[misc]
    assert script["src"] == f"{base}/workflows/scripts/tidy-notes-{RUN}.js"
    assert [(p.k, p.text) for p in record.parts] == [("unknown", SCRIPT_REASON)]
    assert record.parts[0].raw() == (projects / NOTES / WF_SESSION / "workflows" / "scripts" /
                                     f"tidy-notes-{RUN}.js").read_bytes().rstrip(b"\r\n")
    assert (record.from_, record.batch) == ("runtime", None)  # nothing but its bytes
    (meta,) = _files(asz_pass.root, AGENT_SESSION)["streams/a4c7e9f1b2d3a5c68/agent_meta"]
    (record,) = meta["records"]  # type: ignore[misc]
    assert (meta["stream"], record.child, record.label, record.from_) == (
        "a4c7e9f1b2d3a5c68", "a4c7e9f1b2d3a5c68", "Find local-midnight computations", "runtime")
    assert asz_pass.run().totals.landed == 0
    assert_root_verifies(asz_pass.root)


def test_a_changed_sidecar_lands_again_as_a_new_version(projects: Path, run_local: Callable[..., PassSummary],
                                                         asz_pass: PassRunner) -> None:
    run_local(projects)
    sidecar = projects / FORECAST / AGENT_SESSION / "subagents" / "agent-a4c7e9f1b2d3a5c68.meta.json"
    sidecar.write_text(sidecar.read_text().replace("Find local", "Find all local"))
    summary = asz_pass.run()
    assert (summary.totals.landed, summary.totals.records, summary.failed) == (1, 1, False)
    versions = _files(asz_pass.root, AGENT_SESSION)["streams/a4c7e9f1b2d3a5c68/agent_meta"]
    assert [v["records"][0].label for v in versions] == [  # type: ignore[index]
        "Find local-midnight computations", "Find all local-midnight computations"]


def test_what_is_not_a_session_is_not_read(projects: Path, run_local: Callable[..., PassSummary],
                                           asz_pass: PassRunner) -> None:
    project = projects / FORECAST
    (project / "memory").mkdir()
    (project / "memory" / "MEMORY.md").write_text("# notes\n")
    (project / "sessions-index.json").write_text("{}")
    (project / AGENT_SESSION / "tool-results").mkdir()
    (project / AGENT_SESSION / "tool-results" / "toolu_01.txt").write_text("big output")
    (projects.parent / "history.jsonl").write_text('{"display":"hi"}\n')
    (project / AGENT_SESSION / "subagents" / "notes.jsonl").write_text("{}\n")  # not agent-<id>
    summary = run_local(projects)
    assert (summary.totals.sessions, summary.totals.sources, summary.totals.unreadable) == (3, 10, 0)
    assert sorted(p.name for p in asz_pass.root.iterdir() if p.is_dir() and not p.name.startswith("_")) == sorted(
        [PLAIN_SESSION, AGENT_SESSION, WF_SESSION])


def test_names_out_of_shape_are_refused_counted_unreadable_and_named(
        projects: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner,
        assert_root_verifies: Callable[[Path], None]) -> None:
    line = (projects / FORECAST / f"{PLAIN_SESSION}.jsonl").read_bytes()
    subagents = projects / FORECAST / AGENT_SESSION / "subagents"
    bad = [projects / FORECAST / "sessionId-0004.jsonl",            # a sanitised copy's name
           subagents / "agent-A4C7E9F1.jsonl",                       # not an agent id shape
           subagents / "agent-..jsonl",
           projects / NOTES / WF_SESSION / "workflows" / "wf_NOPE.json",
           projects / NOTES / WF_SESSION / "workflows" / "scripts" / "tidy.js"]
    for path in bad:
        path.write_bytes(line)
    (projects / NOTES / WF_SESSION / "subagents" / "workflows" / "not-a-run").mkdir()
    summary = run_local(projects)
    assert summary.totals.unreadable == len(bad) + 1 and not summary.failed
    warned = "\n".join(asz_pass.reporter.warnings)
    for path in [*bad, projects / NOTES / WF_SESSION / "subagents" / "workflows" / "not-a-run"]:
        assert str(path) in warned
    assert summary.totals.sources == 10  # the real ones still land
    assert sorted(p.name for p in asz_pass.root.iterdir() if p.is_dir() and not p.name.startswith("_")) == sorted(
        [PLAIN_SESSION, AGENT_SESSION, WF_SESSION])
    assert_root_verifies(asz_pass.root)


def test_a_session_with_nothing_readable_is_no_session_but_its_refusals_count(
        projects: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner) -> None:
    session = "0b6f3c1d-2a4e-4f5a-9c7b-8d9e0f1a2b3c"
    lone = projects / FORECAST / session / "subagents" / "agent-NOT-AN-AGENT.jsonl"
    lone.parent.mkdir(parents=True)
    lone.write_bytes(b'{"type":"user"}\n')
    summary = run_local(projects)
    assert (summary.totals.sessions, summary.totals.unreadable) == (3, 1)
    assert any(str(lone) in w for w in asz_pass.reporter.warnings)
    assert not (asz_pass.root / session).exists()


def test_an_upper_case_session_id_is_its_own_session(projects: Path, run_local: Callable[..., PassSummary],
                                                     asz_pass: PassRunner) -> None:
    upper = PLAIN_SESSION.upper()
    shutil.copy(projects / FORECAST / f"{PLAIN_SESSION}.jsonl", projects / FORECAST / f"{upper}.jsonl")
    summary = run_local(projects)
    assert summary.totals.sessions == 4
    assert {PLAIN_SESSION, upper} <= {p.name for p in asz_pass.root.iterdir()}


def test_two_files_for_one_stream_are_a_conflict_not_a_mix(projects: Path, run_local: Callable[..., PassSummary],
                                                          asz_pass: PassRunner) -> None:
    agent = "ab1c2d3e4f5a6b7c8"
    run_dir = projects / NOTES / WF_SESSION / "subagents" / "workflows" / RUN
    shutil.copy(run_dir / f"agent-{agent}.jsonl", projects / NOTES / WF_SESSION / "subagents" / f"agent-{agent}.jsonl")
    summary = run_local(projects)
    assert summary.failed and summary.totals.conflicts == 1
    assert any(str(run_dir / f"agent-{agent}.jsonl") in w for w in asz_pass.reporter.warnings)
    (child,) = _files(asz_pass.root, WF_SESSION)[f"streams/{agent}/transcript"]
    assert child["src"] == f"{NOTES}/{WF_SESSION}/subagents/agent-{agent}.jsonl"  # the first by name


def test_a_session_without_its_main_transcript_lands_its_children(
        projects: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner) -> None:
    (projects / FORECAST / f"{AGENT_SESSION}.jsonl").unlink()
    summary = run_local(projects)
    assert not summary.failed and summary.totals.sessions == 3
    files = _files(asz_pass.root, AGENT_SESSION)
    assert sorted(files) == ["streams/a4c7e9f1b2d3a5c68/agent_meta", "streams/a4c7e9f1b2d3a5c68/transcript"]
    (child,) = files["streams/a4c7e9f1b2d3a5c68/transcript"]
    assert str(child["src"]).startswith(f"{FORECAST}/{AGENT_SESSION}/")  # the directory its reader finds


def test_a_script_filed_under_another_directory_joins_its_session(
        projects: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner) -> None:
    scripts = projects / NOTES / WF_SESSION / "workflows" / "scripts"
    elsewhere = projects / "-home-dev-notes-garden" / WF_SESSION / "workflows" / "scripts"
    elsewhere.mkdir(parents=True)
    (scripts / f"tidy-notes-{RUN}.js").rename(elsewhere / f"tidy-notes-{RUN}.js")
    summary = run_local(projects, exclude=["/home/dev/notes/garden/**"])
    assert not summary.failed and summary.totals.sessions == 3  # judged by its main transcript
    (script,) = _files(asz_pass.root, WF_SESSION)[f"runs/{RUN}/workflow_script"]
    assert script["src"] == f"-home-dev-notes-garden/{WF_SESSION}/workflows/scripts/tidy-notes-{RUN}.js"


def test_include_and_exclude_judge_the_main_transcripts_directory(
        projects: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner) -> None:
    summary = run_local(projects, include=["/home/dev/notes"])
    sessions = [p.name for p in asz_pass.root.iterdir() if p.is_dir() and not p.name.startswith("_")]
    assert summary.totals.sessions == 1 and sessions == [WF_SESSION]
    summary = run_local(projects, exclude=["-home-dev-projects-*"])
    assert summary.totals.sessions == 1 and summary.totals.landed == 0


def test_a_dry_run_lands_nothing_and_writes_no_index(projects: Path, run_local: Callable[..., PassSummary],
                                                    asz_pass: PassRunner) -> None:
    asz_pass.configure(adapters=[{"name": "claude-code-local", "source_root": str(projects)}])
    summary = asz_pass.run(dry_run=True)
    lines = sum(p.read_bytes().count(b"\n") for p in projects.rglob("*.jsonl")) + 4  # + 4 documents
    assert (summary.totals.records, summary.totals.landed) == (lines, 10)
    assert not asz_pass.root.exists()  # no file, no cursor, no index


def test_a_session_is_given_no_index_by_its_landing(projects: Path, run_local: Callable[..., PassSummary],
                                                    asz_pass: PassRunner) -> None:
    run_local(projects)
    assert SessionIndex(asz_pass.root / AGENT_SESSION).load() is None
    assert not (asz_pass.root / AGENT_SESSION / "index").exists()  # nothing made for it either


def test_the_index_its_reader_keeps_takes_the_calls_of_each_file_landed_since(
        projects: Path, run_local: Callable[..., PassSummary], asz_pass: PassRunner) -> None:
    run_local(projects)
    session_dir = asz_pass.root / AGENT_SESSION
    first = session_ids(session_dir)
    assert first[DIRECTORY] == {FORECAST} and "msg_01Jv3Qs7Ae5Xn9Lb2Wc6Tr8K" in first[CALL]  # the child's own
    begun = (session_dir / "index" / "ids").read_text().splitlines()
    (child,) = (projects / FORECAST / AGENT_SESSION / "subagents").glob("agent-*.jsonl")
    last = json.loads(child.read_bytes().splitlines()[-1])
    assert last["type"] == "assistant"
    later = {**last, "uuid": "5b0d4c1e-2f3a-4b5c-8d6e-7f8091a2b3c4", "parentUuid": last["uuid"],
             "message": {**last["message"], "id": "msg_01LaterCall"}}
    with open(child, "ab") as f:
        f.write(json.dumps(later).encode() + b"\n")
    asz_pass.run()
    highest = max(seq for seq, _ in landed_files(session_dir))
    assert session_ids(session_dir)[CALL] == first[CALL] | {"msg_01LaterCall"}
    lines = (session_dir / "index" / "ids").read_text().splitlines()
    assert lines == [*begun, "call msg_01LaterCall", f"seq {highest}"]  # its directory is not named again
    with open(projects / FORECAST / f"{AGENT_SESSION}.jsonl", "ab") as f:
        f.write(b'{"type":"mode","mode":"normal"}\n')
    asz_pass.run()
    assert session_ids(session_dir)[CALL] == first[CALL] | {"msg_01LaterCall"}
    assert (session_dir / "index" / "ids").read_text().splitlines() == [*lines, f"seq {highest + 1}"]


def test_the_default_source_root_is_where_claude_code_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cc"))
    assert default_source_root() == tmp_path / "cc" / "projects"
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_source_root() == tmp_path / "home" / ".claude" / "projects"  # no xdg/claude yet
    (tmp_path / "xdg" / "claude").mkdir(parents=True)
    assert default_source_root() == tmp_path / "xdg" / "claude" / "projects"


def test_scan_groups_a_session_across_directories(projects: Path) -> None:
    elsewhere = projects / "-home-dev-elsewhere" / WF_SESSION / "workflows" / "scripts"
    elsewhere.mkdir(parents=True)
    (elsewhere / "other-wf_0123abcd-999.js").write_text("export default 1\n")
    result = scan(projects)
    sources = result.sessions[WF_SESSION]
    assert sources.directory == NOTES and sources.runs == 2 and sources.streams == 2
    assert {f.directory for f in sources.files} == {NOTES, "-home-dev-elsewhere"}
