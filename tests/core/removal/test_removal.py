"""A scenario root's marked sessions go once all of each is sent, and only those, only then.

Two sessions of one small scenario (a child agent, so the build writes directories named for the
session) are built in ``claude-code`` format, collected and parsed by ordinary passes, and pushed
to a loopback receiver. The kill tests stop a pass at each point a removal reaches
(``asz_core.removal.remove.POINTS``), then run passes as after a restart.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from asz_core.cli.app import App
from asz_core.cli.main import main
from asz_core.removal.marker import MARKER_DIR, REMOVING, marker_path
from asz_core.removal.remove import POINTS
from asz_core.removal.scenario_root import REMOVED_DIR, SCENARIO_DIR, move_to_removed
from asz_core.scenario.build import BuildOptions, build
from asz_core.scenario.check import DEFAULT_AT_MS
from asz_core.scenario.model import ScenarioError, load_scenario
from asz_core.scenario.receiver import GrpcReceiver, make_receiver

SCENARIO = ("session: 7d3c1e2a-0b4f-4c55-9a6e-1f2e3d4c5b6a\n"
            "steps:\n"
            "  - input: run the build\n"
            "  - call: {text: Building., tool: {id: t1, name: Bash, input: {command: make}, result: built}}\n"
            "  - call: {agent: {name: checker, prompt: check it, steps: [{call: {text: Checked.}}]}}\n"
            "  - call: {text: Done.}\n")
#: the kill points the default lane stops at; ``--slow`` stops at every one
QUICK_POINTS = ("remove-marked", "remove-source-file", "remove-session-moved")


class Built:
    def __init__(self, root: Path, sessions: list[str]) -> None:
        self.root = root
        self.sessions = sessions
        self.config = root / "asz.yaml"
        self.source = root / "_source"
        #: session → the files its marker listed when it was built
        self.built_files = {s: self.listed(s) for s in sessions}

    def marker(self, session: str) -> Path:
        return marker_path(self.source, session)

    def listed(self, session: str) -> list[Path]:
        return [self.source / f["path"] for f in json.loads(self.marker(session).read_bytes())["files"]]

    def send_to(self, rx: GrpcReceiver) -> None:
        with self.config.open("a", encoding="utf-8") as f:
            f.write(f"export:\n  otlp:\n    protocol: grpc\n    endpoint: {rx.endpoint}\n    timeout: 10s\n")

    def run(self) -> tuple[int, str]:
        err = io.StringIO()
        code = main(["run", "--config", str(self.config)], App(out=io.StringIO(), err=err))
        return code, err.getvalue()

    def gone(self, session: str) -> bool:
        return not any(p.exists() for p in [self.root / session, self.root / "_conversations" / session,
                                            self.marker(session), *self.built_files[session]])

    def whole(self, session: str) -> bool:
        return all(p.exists() for p in [self.root / session, self.root / "_conversations" / session,
                                        self.marker(session), *self.built_files[session]])



@pytest.fixture
def built(tmp_path: Path) -> Built:
    (tmp_path / "s.yaml").write_text(SCENARIO, encoding="utf-8")
    root = tmp_path / "root"
    done = build(load_scenario(tmp_path / "s.yaml"), root, BuildOptions(at_ms=DEFAULT_AT_MS, repeat=2))
    b = Built(root, done.sessions)
    code, said = b.run()  # lands and parses both: no receiver yet, so nothing goes
    assert code == 0, said
    return b


def _records_by_file(rx: GrpcReceiver) -> dict[str, int]:
    counts: dict[str, int] = {}
    for r in rx.records:
        counts[r.file] = counts.get(r.file, 0) + 1
    return counts


def test_a_session_goes_whole_once_sent_and_an_unmarked_one_stays(
        built: Built, assert_root_verifies: Callable[[Path], None]) -> None:
    first, second = built.sessions
    built.marker(second).unlink()  # as a real session: no build vouches for it
    with make_receiver("grpc") as rx:
        assert isinstance(rx, GrpcReceiver)
        built.send_to(rx)
        code, said = built.run()
        assert code == 0, said
        assert built.gone(first), said
        assert (built.root / second).is_dir() and (built.root / "_conversations" / second).is_dir()
        assert all(p.exists() for p in built.built_files[second])
        assert not any((built.root / REMOVED_DIR).iterdir())
        assert first not in (built.root / "push.state").read_text("utf-8")
        assert second in (built.root / "push.state").read_text("utf-8")
        noise = built.source / "-Users-dev-scenario" / "not-a-uuid.jsonl"
        assert noise.is_file()  # beside the session, owned by none: never removed
        sent = len(rx.requests)
        code, said = built.run()  # a restart: nothing is landed, parsed or sent again
        assert code == 0, said
        assert len(rx.requests) == sent
        assert not (built.root / first).exists() and not (built.root / "_conversations" / first).exists()
        assert max(_records_by_file(rx).values()) == 1
    assert_root_verifies(built.root)


def test_nothing_is_removed_without_a_receiver_and_the_pipeline_says_why(built: Built) -> None:
    _code, first = built.run()
    built.run()  # a second pass: still nothing sent, still nothing removed
    reason = "no export endpoint; nothing is sent, so nothing is removed"
    assert f"scenario : no session is removed: {reason}" in first.splitlines()
    assert all(built.whole(s) for s in built.sessions)
    with make_receiver("grpc") as rx:
        assert isinstance(rx, GrpcReceiver)
        built.send_to(rx)
        _code, said = built.run()
    assert "scenario : a session a build marked is removed by its policy once all of it is sent" in said
    assert all(built.gone(s) for s in built.sessions)


def test_a_source_file_changed_after_the_build_keeps_its_session_for_a_person(
        built: Built, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = built.sessions
    transcript = built.listed(first)[-1]
    transcript.write_bytes(transcript.read_bytes() + b"\n")
    with make_receiver("grpc") as rx:
        assert isinstance(rx, GrpcReceiver)
        built.send_to(rx)
        built.run()
    err = capsys.readouterr().err
    assert built.gone(second)
    assert (built.root / first).is_dir() and built.marker(first).exists()
    assert f"kept: {first}: " in err


def test_a_file_of_the_session_the_build_did_not_write_keeps_it_and_stays(
        built: Built, capsys: pytest.CaptureFixture[str]) -> None:
    first = built.sessions[0]
    child = next(p for p in built.listed(first) if p.name.startswith("agent-") and p.suffix == ".jsonl")
    stranger = child.with_name("agent-a0000000000000000.jsonl")
    stranger.write_bytes(child.read_bytes().replace(child.stem.removeprefix("agent-").encode(), b"a0000000000000000"))
    with make_receiver("grpc") as rx:
        assert isinstance(rx, GrpcReceiver)
        built.send_to(rx)
        built.run()
    assert "names a source the build did not write" in capsys.readouterr().err
    assert built.whole(first) and stranger.exists()


def test_a_removal_that_meets_a_changed_source_file_stops_and_names_it(built: Built) -> None:
    first = built.sessions[0]
    data = json.loads(built.marker(first).read_bytes())
    data["state"] = REMOVING  # a pass decided, then stopped; since then a file changed
    built.marker(first).write_text(json.dumps(data), encoding="utf-8")
    changed = built.listed(first)[0]
    changed.write_bytes(changed.read_bytes() + b"\n")
    with make_receiver("grpc") as rx:
        assert isinstance(rx, GrpcReceiver)
        built.send_to(rx)
        code, said = built.run()
    assert code == 1
    assert f"the removal stopped: {changed} changed after the build wrote it" in said
    assert changed.exists() and (built.root / first).is_dir() and built.marker(first).exists()


def test_a_link_at_removed_keeps_every_marked_session_and_nothing_goes_through_it(
        built: Built, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious").write_text("keep me", encoding="utf-8")
    (built.root / REMOVED_DIR).symlink_to(outside)
    with make_receiver("grpc") as rx:
        assert isinstance(rx, GrpcReceiver)
        built.send_to(rx)
        built.run()
    assert "is a symbolic link or not a directory" in capsys.readouterr().err
    assert (outside / "precious").read_text("utf-8") == "keep me"
    assert all(built.whole(s) for s in built.sessions)


def test_a_marker_naming_a_path_outside_the_source_is_refused_and_nothing_outside_is_touched(
        built: Built, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = built.sessions[0]
    victim = tmp_path / "victim.txt"
    victim.write_text("x", encoding="utf-8")
    data = json.loads(built.marker(first).read_bytes())
    data["files"].append({"path": "../../victim.txt", "size": 1,
                          "sha256": "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"})
    built.marker(first).write_text(json.dumps(data), encoding="utf-8")
    with make_receiver("grpc") as rx:
        assert isinstance(rx, GrpcReceiver)
        built.send_to(rx)
        built.run()
    assert "is not inside the source directory" in capsys.readouterr().err
    assert victim.exists() and built.whole(first)


def test_a_push_state_naming_another_receiver_keeps_every_marked_session(
        built: Built, capsys: pytest.CaptureFixture[str]) -> None:
    (built.root / "push.state").write_text("schema 1\nupdated_at 2026-01-01T00:00:00Z\nendpoint grpc://10.0.0.1:11800\n",
                                           encoding="utf-8")
    with make_receiver("grpc") as rx:
        assert isinstance(rx, GrpcReceiver)
        built.send_to(rx)
        built.run()
    assert "push.state records sending to grpc://10.0.0.1:11800" in capsys.readouterr().err
    assert all(built.whole(s) for s in built.sessions)


def test_a_build_refuses_a_session_a_pipeline_is_removing(built: Built, tmp_path: Path) -> None:
    first = built.sessions[0]
    data = json.loads(built.marker(first).read_bytes())
    data["state"] = REMOVING
    built.marker(first).write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ScenarioError, match="is being removed by a pipeline"):
        build(load_scenario(tmp_path / "s.yaml"), built.root, BuildOptions(at_ms=DEFAULT_AT_MS))


@pytest.mark.parametrize("remove", ["0", "-1h", "soon"])
def test_a_removal_policy_of_nothing_or_of_no_duration_is_refused(tmp_path: Path, remove: str) -> None:
    (tmp_path / "s.yaml").write_text(SCENARIO, encoding="utf-8")
    with pytest.raises(ScenarioError, match="--remove"):
        build(load_scenario(tmp_path / "s.yaml"), tmp_path / "root", BuildOptions(remove=remove))
    assert not (tmp_path / "root" / "_source").exists()


def test_an_sd_build_is_never_marked_and_refuses_a_removal_policy(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(SCENARIO, encoding="utf-8")
    scenario = load_scenario(tmp_path / "s.yaml")
    with pytest.raises(ScenarioError, match="claude-code builds only"):
        build(scenario, tmp_path / "sd", BuildOptions(format="sd", remove="24h"))
    build(scenario, tmp_path / "sd", BuildOptions(format="sd", at_ms=DEFAULT_AT_MS))
    assert not (tmp_path / "sd" / SCENARIO_DIR).exists()
    assert not (tmp_path / "sd" / "_source" / MARKER_DIR).exists()


def test_a_retained_session_stays_until_its_last_record_is_that_old(built: Built) -> None:
    first = built.sessions[0]
    data = json.loads(built.marker(first).read_bytes())
    data.update(policy="retain", retain="876000h")  # a century: the pass is long before it
    built.marker(first).write_text(json.dumps(data), encoding="utf-8")
    with make_receiver("grpc") as rx:
        assert isinstance(rx, GrpcReceiver)
        built.send_to(rx)
        built.run()
    assert built.whole(first) and built.gone(built.sessions[1])


@pytest.mark.parametrize("point", [pytest.param(p, marks=() if p in QUICK_POINTS else pytest.mark.slow)
                                   for p in POINTS])
def test_a_pass_killed_at_each_point_of_a_removal_is_finished_by_the_next(
        built: Built, point: str, assert_root_verifies: Callable[[Path], None]) -> None:
    # slow past the first three: each costs two pipeline processes
    first, second = built.sessions
    built.marker(second).unlink()
    cli = [sys.executable, "-m", "asz_core.cli", "run", "--config", str(built.config)]
    with make_receiver("grpc") as rx:
        assert isinstance(rx, GrpcReceiver)
        built.send_to(rx)
        killed = subprocess.run(cli, env={**os.environ, "ASZ_FAULT": f"kill:{point}:1"}, capture_output=True,
                                text=True, check=False, timeout=120)
        assert killed.returncode == -9, killed.stderr
        if point != "remove-unmarked":
            assert built.marker(first).exists()
            assert json.loads(built.marker(first).read_bytes())["state"] == REMOVING
        sent = _records_by_file(rx)
        again = subprocess.run(cli, capture_output=True, text=True, check=False, timeout=120)
        assert again.returncode == 0, again.stderr
        assert built.gone(first), again.stderr
        assert not (built.root / REMOVED_DIR).exists() or not any((built.root / REMOVED_DIR).iterdir())
        assert _records_by_file(rx) == sent  # nothing sent again
        assert max(sent.values()) == 1
        assert first not in (built.root / "push.state").read_text("utf-8")
    assert (built.root / second).is_dir()
    assert_root_verifies(built.root)


def test_the_build_command_says_the_policy_and_refuses_one_it_cannot_apply(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(SCENARIO, encoding="utf-8")
    out = io.StringIO()
    code = main(["scenario", "build", str(tmp_path / "s.yaml"), "--format", "claude-code", "--out",
                 str(tmp_path / "cc"), "--remove", "24h"], App(out=out, err=io.StringIO()))
    assert code == 0
    assert "remove   : 24h after its last record, once sent" in out.getvalue().splitlines()
    marker = json.loads(marker_path(tmp_path / "cc" / "_source", "7d3c1e2a-0b4f-4c55-9a6e-1f2e3d4c5b6a").read_bytes())
    assert (marker["schema"], marker["policy"], marker["retain"], marker["state"]) == (1, "retain", "24h", "written")
    for bad in (["--format", "sd", "--remove", "24h"], ["--format", "claude-code", "--remove", "0"]):
        err = io.StringIO()
        code = main(["scenario", "build", str(tmp_path / "s.yaml"), "--out", str(tmp_path / "bad"), *bad],
                    App(out=io.StringIO(), err=err))
        assert code == 2 and "--remove" in err.getvalue()
        assert not (tmp_path / "bad").exists()


def test_a_chain_no_parse_ever_made_is_nothing_to_move(tmp_path: Path) -> None:
    """A root where no parse ran has no ``_conversations/``: step 4 finds nothing and goes on."""
    (tmp_path / "s1").mkdir()
    assert move_to_removed(tmp_path, "_conversations/s1", "s1.chain") is False
    assert move_to_removed(tmp_path, "s1", "s1") is True
    assert not (tmp_path / "s1").exists() and (tmp_path / "_removed" / "s1").is_dir()


def test_a_pass_over_a_root_that_is_no_scenario_root_does_not_load_the_removal_step(tmp_path: Path) -> None:
    """Every pass asks whether its root is a scenario root; only one that is loads the step."""
    (tmp_path / "projects").mkdir()
    config = tmp_path / "asz.yaml"
    config.write_text(f"storage:\n  root: {tmp_path / 'root'}\nadapters:\n  - name: claude-code-local\n"
                      f"    source_root: {tmp_path / 'projects'}\n", encoding="utf-8")
    loaded = tmp_path / "loaded.json"
    code = ("import json, sys\n"
            "from asz_core.cli.main import main\n"
            f"main(['run', '--config', {str(config)!r}])\n"
            f"open({str(loaded)!r}, 'w').write(json.dumps(sorted(m for m in sys.modules "
            "if m.startswith('asz_core.removal.'))))\n")
    subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(loaded.read_text()) == ["asz_core.removal.scenario_root"]
    assert (tmp_path / "root").is_dir()  # the pass ran
