"""A ``run`` that finds nothing changed since the last pass, which changed nothing, repeats that
pass's report without running; anything that could change the outcome makes it run in full."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from asz_core import quietpass
from asz_core.cli.main import main
from asz_core.cli.repeat import run_options
from asz_core.host import PluginHost
from asz_core.plugin import AdapterInfo, hookimpl

#: two small real sessions, each in its own project directory
PROJECTS = ("-tmp-tmp74wiyiny", "-tmp-tmpcy4oc572")


#: the other built-in adapters, which stay on unless switched off (a test never reads the machine's own)
OTHERS_OFF = "  - name: claude-code-provider\n    enabled: false\n  - name: kiro\n    enabled: false\n"


@pytest.fixture
def home(tmp_path: Path, corpus: Path) -> Path:
    projects = tmp_path / "projects"
    for name in PROJECTS:
        shutil.copytree(corpus / "claude-code" / "projects" / name, projects / name)
    for path in projects.rglob("*"):
        path.chmod(0o700 if path.is_dir() else 0o600)
    (tmp_path / "asz.yaml").write_text(
        f"storage:\n  root: {tmp_path / 'root'}\n"
        f"adapters:\n  - name: claude-code-local\n    source_root: {projects}\n{OTHERS_OFF}")
    return tmp_path


def run(home: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, dict[str, Any]]:
    code = main(["run", "--json", "--config", str(home / "asz.yaml"), *extra])
    out = capsys.readouterr().out
    return code, json.loads(out.splitlines()[-1])


def counts(report: dict[str, Any]) -> dict[str, Any]:
    """What a pass reports, less what differs between two runs of it."""
    return {k: v for k, v in report.items() if k not in ("elapsed_s", "repeated")}


def transcripts(home: Path) -> list[Path]:
    return sorted((home / "projects").glob("*/*.jsonl"))


def until_repeated(home: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    """Run until a run repeats the last pass (at most five runs); every report."""
    reports = []
    for _ in range(5):
        reports.append(run(home, capsys)[1])
        if reports[-1]["repeated"]:
            return reports
    raise AssertionError(f"five runs and none repeated: {reports}")


def test_a_quiet_pass_confirmed_is_repeated_until_a_source_grows(
        home: Path, capsys: pytest.CaptureFixture[str], assert_root_verifies: Callable[[Path], None]) -> None:
    reports = until_repeated(home, capsys)
    # landed; changed nothing (recorded); changed nothing again, the same (confirmed); repeated
    assert [r["landed"] for r in reports] == [2, 0, 0, 0]
    assert counts(reports[3]) == counts(reports[2]) == counts(reports[1])
    code, again = run(home, capsys)
    assert code == 0 and again["repeated"] is True

    line = transcripts(home)[0].read_bytes().splitlines(keepends=True)[-1]
    with transcripts(home)[0].open("ab") as f:
        f.write(line.replace(b'"uuid":"', b'"uuid":"x', 1))
    code, grown = run(home, capsys)
    assert code == 0 and grown["repeated"] is False and grown["landed"] == 1
    assert_root_verifies(home / "root")


def _append_new_session(home: Path) -> None:
    source = transcripts(home)[0]
    shutil.copy(source, source.with_name("0b6bd7c4-6a0e-4bd4-8bd0-1f3b1d1c0e11.jsonl"))


def _touch_transcript(home: Path) -> None:
    path = transcripts(home)[1]
    os.utime(path, ns=(time.time_ns(), path.stat().st_mtime_ns + 1_000_000))


def _delete_transcript(home: Path) -> None:
    transcripts(home)[1].unlink()


def _edit_config(home: Path) -> None:
    with (home / "asz.yaml").open("a") as f:
        f.write("# edited\n")


def _remove_landed_session(home: Path) -> None:
    # a session goes with its conversation's chain, whose rounds bind its landed files
    session = next(p for p in (home / "root").iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))
    shutil.rmtree(session)
    shutil.rmtree(home / "root" / "_conversations" / session.name, ignore_errors=True)


def _land_elsewhere(home: Path) -> None:
    # another pass (another configuration) landing in a session rewrites its session.state
    state = next((home / "root").glob("*/session.state"))
    state.write_text(state.read_text())


def _change_environment(home: Path) -> None:
    os.environ["ASZ_TEST_QUIET_PASS"] = "1"


@pytest.mark.parametrize("change", [_append_new_session, _touch_transcript, _delete_transcript, _edit_config,
                                    _remove_landed_session, _land_elsewhere, _change_environment])
def test_anything_the_outcome_depends_on_makes_the_pass_run(
        home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        change: Callable[[Path], None], assert_root_verifies: Callable[[Path], None]) -> None:
    monkeypatch.delenv("ASZ_TEST_QUIET_PASS", raising=False)
    until_repeated(home, capsys)
    change(home)
    _, after = run(home, capsys)
    assert after["repeated"] is False
    repeated = until_repeated(home, capsys)[-1]
    _, full = run(home, capsys, "--full")  # what is repeated is what a full pass reports
    assert counts(repeated) == counts(full)
    assert_root_verifies(home / "root")


def test_full_and_dry_run_always_run_and_a_dry_run_keeps_the_record(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    until_repeated(home, capsys)
    assert run(home, capsys, "--full")[1]["repeated"] is False
    assert run(home, capsys, "--dry-run")[1]["repeated"] is False
    assert run(home, capsys)[1]["repeated"] is True


def test_a_sticky_conflict_is_repeated_with_its_exit_status(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(home, capsys)
    path = transcripts(home)[0]
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])  # truncated after it landed: a conflict, for good
    code, conflict = run(home, capsys)
    assert code == 1 and conflict["conflicts"] == 1 and conflict["repeated"] is False
    assert run(home, capsys)[1]["repeated"] is False  # the same again: confirmed
    code, again = run(home, capsys)
    assert code == 1 and again["repeated"] is True and counts(again) == counts(conflict)
    code, full = run(home, capsys, "--full")
    assert code == 1 and counts(full) == counts(conflict)


def test_the_record_names_the_code_and_configuration_it_was_run_with(
        home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    until_repeated(home, capsys)
    table = Path(quietpass._table_dir()) / f"{quietpass.run_key(run_options(str(home / 'asz.yaml')))}.json"
    data = json.loads(table.read_text())
    import asz_adapters.claude_code_local.adapter as adapter
    import asz_core.pipeline as pipeline

    assert {adapter.__file__, pipeline.__file__, str(home / "asz.yaml")} <= set(data["files"])
    assert data["trees"] == [str(home / "projects")]
    assert table.stat().st_mode & 0o077 == 0  # it names private paths: the owner's alone


def test_a_line_appended_while_a_quiet_pass_runs_is_landed_not_repeated_away(
        home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    run(home, capsys)
    source = transcripts(home)[0]
    line = source.read_bytes().splitlines(keepends=True)[-1].replace(b'"uuid":"', b'"uuid":"y', 1)
    take = quietpass.PassStamps.take

    def append_then_take(*args: Any) -> quietpass.PassStamps:
        with source.open("ab") as f:   # after the pass read the file, before its stamps
            f.write(line)
        monkeypatch.setattr(quietpass.PassStamps, "take", take)
        return take(*args)

    monkeypatch.setattr(quietpass.PassStamps, "take", append_then_take)
    _, quiet = run(home, capsys)
    assert quiet["landed"] == 0  # it had read the file before the line came
    _, after = run(home, capsys)  # the stamps now include the line, but the record is unconfirmed
    assert after["repeated"] is False and after["landed"] == 1


def test_a_recheck_instant_ends_the_repeats(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    until_repeated(home, capsys)
    key = quietpass.run_key(run_options(str(home / "asz.yaml")))
    table = Path(quietpass._table_dir()) / f"{key}.json"
    data = json.loads(table.read_text())
    assert quietpass.replay(key, time.time_ns()) is not None
    table.write_text(json.dumps({**data, "recheck_ns": time.time_ns() - 1}))
    assert quietpass.replay(key, time.time_ns()) is None


class _Adapter:
    @staticmethod
    @hookimpl
    def asz_adapter_info() -> AdapterInfo:
        return AdapterInfo(version="1", runtime="test")

    @staticmethod
    @hookimpl
    def asz_pass_repeatable() -> bool:
        return True


class _Observer:
    @staticmethod
    @hookimpl
    def asz_pass_end() -> None:
        pass


class _QuietObserver(_Observer):
    answer: bool | None = True

    @classmethod
    @hookimpl
    def asz_pass_repeatable(cls) -> bool | None:
        return cls.answer


def test_every_plugin_taking_part_must_say_a_pass_is_repeatable() -> None:
    host = PluginHost()
    host.register("a", _Adapter)
    ctx: Any = None
    assert host.pass_repeatable(ctx, ["a"])
    host.register("quiet-observer", _QuietObserver, adapter=False)
    assert host.pass_repeatable(ctx, ["a"])
    _QuietObserver.answer = None  # not a yes
    assert not host.pass_repeatable(ctx, ["a"])
    _QuietObserver.answer = True
    observer = host.register("observer", _Observer, adapter=False)  # observes passes, says nothing
    assert not host.pass_repeatable(ctx, ["a"])
    # what `asz-pipeline plugins` shows in its "repeats" column
    assert host.repeatable(host.adapter("a")) is True and host.repeatable(observer) is False
    assert host.repeatable(host.register("commands-only", object(), adapter=False)) is None


def test_the_installed_command_repeats_without_importing_a_plugin(home: Path) -> None:
    probe = ("import sys; from asz_core.cli.main import main; code = main(); "
             "print(sorted(m for m in ('pluggy', 'orjson', 'asz_adapters', 'yaml') if m in sys.modules), "
             "file=sys.stderr); sys.exit(code)")
    argv = ["run", "--json", "--config", str(home / "asz.yaml")]
    for expected in (False, False, False, True):
        done = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["repeated"] is expected
    assert done.stderr.strip() == "[]"


def test_a_directory_that_moves_the_default_source_makes_the_pass_run(
        tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # no source_root: claude-code-local reads ~/.claude/projects until $XDG_CONFIG_HOME/claude exists
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    (tmp_path / "home" / ".claude" / "projects").mkdir(parents=True)
    (tmp_path / "asz.yaml").write_text(f"storage:\n  root: {tmp_path / 'root'}\n"
                                       f"adapters:\n  - name: claude-code-local\n{OTHERS_OFF}")
    assert until_repeated(tmp_path, capsys)[-1]["sessions"] == 0
    shutil.copytree(corpus / "claude-code" / "projects" / PROJECTS[0], tmp_path / "xdg" / "claude" / "projects" / "p")
    _, moved = run(tmp_path, capsys)
    assert moved["repeated"] is False and moved["landed"] == 1


def test_a_link_below_a_watched_tree_is_stamped_not_walked(tmp_path: Path) -> None:
    tree, elsewhere = tmp_path / "tree", tmp_path / "elsewhere"
    (tree / "project").mkdir(parents=True)
    elsewhere.mkdir()
    (tree / "project" / "s.jsonl").write_text("{}\n")
    (tree / "everything").symlink_to("/")          # never walked: that could be a whole disk
    (tree / "linked").symlink_to(elsewhere)
    (tmp_path / "home").symlink_to(tree)           # a watched path that is a link is walked through
    before, through = quietpass.stamp_tree(str(tree)), quietpass.stamp_tree(str(tmp_path / "home"))
    (elsewhere / "deep").mkdir()                   # the link's target gained an entry: its mtime
    assert quietpass.stamp_tree(str(tree)) != before
    after = quietpass.stamp_tree(str(tree))
    with (tree / "project" / "s.jsonl").open("a") as f:
        f.write("{}\n")
    assert quietpass.stamp_tree(str(tree)) != after
    assert quietpass.stamp_tree(str(tmp_path / "home")) not in (through, after)


def test_a_tree_inside_another_is_walked_once(tmp_path: Path) -> None:
    (tmp_path / "sessions" / "cli").mkdir(parents=True)
    stamps = quietpass.PassStamps.take([(str(tmp_path / "sessions"), True), (str(tmp_path / "sessions" / "cli"), True),
                                        (str(tmp_path / "sessions-old"), True)], str(tmp_path / "root"), None)
    assert stamps.trees == [str(tmp_path / "sessions"), str(tmp_path / "sessions-old")]
