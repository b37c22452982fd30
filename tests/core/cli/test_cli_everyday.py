"""``asz-pipeline`` as a new user meets it: where the root is, what a missing one says, exit
codes and messages (never a traceback), plugins that fail or are switched off, the schedule,
and secrets kept out of everything printed."""

from __future__ import annotations

import errno
import io
import json
import os
import plistlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from asz_core.cli.app import EXIT_CONFIG, EXIT_FAILED, EXIT_OK, EXIT_REFUSED, App
from asz_core.cli.main import main
from asz_core.cli.schedule_units import Job, launchd_plist, systemd_quote, systemd_service, systemd_timer
from tests.helpers import REPO, run_cli

BUILT_IN_OFF = "".join(f"  - name: {name}\n    enabled: false\n"
                       for name in ("claude-code-local", "changes", "claude-code-provider", "kiro"))


def asz(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd, env=env)


def asz_process(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The command in a process of its own: for what only a new process shows (the plugins the
    environment installs)."""
    return subprocess.run([sys.executable, "-m", "asz_core.cli", *args], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, **(env or {})}, check=False)


def in_process(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(args), app=App(out=out, err=err))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "alpha.jsonl").write_text('{"a":1}\n')
    (tmp_path / "asz.yaml").write_text(
        "storage:\n  root: ./root\nadapters:\n  - name: jsonl\n    source_root: ./logs\n" + BUILT_IN_OFF)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ASZ_ROOT", raising=False)
    return tmp_path


# ---- the root a command reads ----------------------------------------------------------------


def test_verify_of_a_missing_root_is_not_ok_and_says_where_it_looked(workdir: Path) -> None:
    done = asz("verify", "--config", "asz.yaml", cwd=workdir)
    assert done.returncode == EXIT_FAILED and "ok" not in done.stdout
    assert f"the storage root {workdir / 'root'} does not exist" in done.stderr
    assert "Traceback" not in done.stderr


def test_verify_of_an_empty_root_is_not_ok(workdir: Path) -> None:
    (workdir / "root").mkdir()
    done = asz("verify", "--config", "asz.yaml", "--json", cwd=workdir)
    verdict = json.loads(done.stdout)
    assert done.returncode == EXIT_FAILED and verdict["ok"] is False and verdict["empty"] is True
    text = asz("verify", "--config", "asz.yaml", cwd=workdir)
    assert f"verify: root={workdir / 'root'} sessions=0" in text.stdout and "nothing to check" in text.stdout


def test_a_landed_root_verifies_ok_and_names_itself(workdir: Path) -> None:
    assert asz("run", "--config", "asz.yaml", cwd=workdir).returncode == EXIT_OK
    done = asz("verify", "--config", "asz.yaml", cwd=workdir)
    assert done.returncode == EXIT_OK and done.stdout.rstrip().endswith(" ok")
    assert f"root={workdir / 'root'}" in done.stdout


def test_a_root_that_is_a_file_is_a_message_for_verify_and_view(workdir: Path) -> None:
    (workdir / "root").write_text("not a root")
    for command in ("verify", "view"):
        done = asz(command, "--config", "asz.yaml", cwd=workdir)
        assert done.returncode == EXIT_FAILED and "is not a directory" in done.stderr, command
        assert "Traceback" not in done.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any directory, whatever its mode")
def test_an_unreadable_root_is_a_message_not_a_traceback(workdir: Path) -> None:
    assert asz("run", "--config", "asz.yaml", cwd=workdir).returncode == EXIT_OK
    (workdir / "root").chmod(0)
    try:
        for command in ("verify", "view"):
            done = asz(command, "--config", "asz.yaml", cwd=workdir)
            assert done.returncode == EXIT_REFUSED and "Permission denied" in done.stderr, command
            assert "Traceback" not in done.stderr
    finally:
        (workdir / "root").chmod(0o700)


def test_with_no_configuration_the_root_is_the_users_data_directory(tmp_path: Path) -> None:
    env = {"XDG_DATA_HOME": str(tmp_path / "share"), "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
           "ASZ_CONFIG": "", "ASZ_ROOT": ""}
    done = asz("config", "--json", cwd=tmp_path, env=env)
    assert done.returncode == EXIT_OK, done.stderr
    assert json.loads(done.stdout)["root"] == str(tmp_path / "share" / "asz")
    text = asz("config", cwd=tmp_path, env=env)
    assert f"# storage root: {tmp_path / 'share' / 'asz'} (does not exist yet)" in text.stdout
    help_text = asz("--help", cwd=tmp_path, env=env).stdout
    assert str(tmp_path / "share" / "asz") in "".join(help_text.split())  # however the help wraps a long path


# ---- the command line ------------------------------------------------------------------------


def test_config_is_taken_before_and_after_the_command(workdir: Path) -> None:
    for args in (("--config", "../asz.yaml", "config", "--json"), ("config", "--json", "--config", "../asz.yaml")):
        done = asz(*args, cwd=workdir / "logs")  # from elsewhere: only --config finds the file
        assert done.returncode == EXIT_OK and json.loads(done.stdout)["source"] == "../asz.yaml", args


def test_a_bad_interval_is_exit_2_with_a_message(workdir: Path) -> None:
    done = asz("run", "--config", "asz.yaml", "--watch", "--interval", "5x", cwd=workdir)
    assert done.returncode == EXIT_CONFIG and "'5x' is not a duration" in done.stderr
    assert "Traceback" not in done.stderr


def test_errors_under_json_are_json(workdir: Path) -> None:
    (workdir / "bad.yaml").write_text("adapters:\n  - name: jsonl\n    colector: {}\n")
    errors = []
    for args, kind, code in ((("run", "--config", "bad.yaml", "--json"), "config", EXIT_CONFIG),
                             (("run", "--json", "--interval", "5x"), "usage", EXIT_CONFIG),
                             (("verify", "--config", "asz.yaml", "--json"), "failed", EXIT_FAILED)):
        done = asz(*args, cwd=workdir)
        error = json.loads(done.stdout)["error"]
        assert (done.returncode, error["kind"], error["exit"]) == (code, kind, code), args
        errors.append(error)
    assert any("bad.yaml:3: adapters[0].colector: unknown key" in p for p in errors[0]["problems"])


def test_the_version_is_printed() -> None:
    from asz_core import __version__

    done = subprocess.run([sys.executable, "-m", "asz_core.cli", "--version"], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0 and done.stdout.strip() == f"asz {__version__}"


def test_a_full_file_system_at_pass_start_is_exit_3(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from asz_core.root.storage import StorageRoot

    (workdir / "root").mkdir()

    def full(self: StorageRoot, *, wait: bool = False) -> object:
        raise OSError(errno.ENOSPC, "No space left on device", str(self.path / ".lock"))

    monkeypatch.setattr(StorageRoot, "lock", full)
    code, out, err = in_process("run", "--config", "asz.yaml")
    assert code == EXIT_REFUSED and "no space left on the device" in err and "Traceback" not in err
    code, out, _ = in_process("run", "--config", "asz.yaml", "--json")
    assert code == EXIT_REFUSED and json.loads(out)["error"]["kind"] == "full"


def test_an_interrupt_while_a_pass_starts_prints_no_traceback(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import asz_core.cli.commands.run_cmd as run_cmd

    def interrupted(*args: object, **kwargs: object) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(run_cmd, "run_pass", interrupted)
    code, _, err = in_process("run", "--config", "asz.yaml")
    assert code == 130 and "asz: interrupted; what landed is complete" in err and "Traceback" not in err


def test_built_in_commands_come_through_asz_add_commands(workdir: Path) -> None:
    from asz_core.cli import commands
    from asz_core.cli.main import build_parser

    app = App()
    commands.register(app.host)
    assert app.host.plugins[commands.NAME].loaded
    parser = build_parser(app)
    sub = next(a for a in parser._actions if a.dest == "command")
    assert {"run", "sources", "verify", "view", "plugins", "config", "schedule", "push"} <= set(sub.choices)


def test_sources_says_sessions_in_the_plural(workdir: Path) -> None:
    (workdir / "logs" / "beta.jsonl").write_text('{"b":1}\n')
    done = asz("sources", "--config", "asz.yaml", cwd=workdir)
    assert "jsonl" in done.stdout and "2 sessions" in done.stdout and "2 source files" in done.stdout


# ---- plugins --------------------------------------------------------------------------------


def _install_plugin(site: Path, body: str) -> Path:
    info = site / "asz_broken_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: asz-broken-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[asz.plugins]\nbroken = asz_broken_plugin\n")
    (site / "asz_broken_plugin.py").write_text(body)
    return site


def test_a_plugin_that_fails_to_load_stops_run_naming_it_until_switched_off(workdir: Path) -> None:
    site = _install_plugin(workdir / "site", "import no_such_module_anywhere\n")
    env = {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    done = asz_process("run", "--config", "asz.yaml", cwd=workdir, env=env)
    assert done.returncode == EXIT_CONFIG
    assert "plugin 'broken' (asz_broken_plugin, asz-broken-plugin) failed to load: ModuleNotFoundError" in done.stderr
    assert not (workdir / "root").exists()
    listed = asz_process("plugins", "--config", "asz.yaml", "--json", cwd=workdir, env=env)
    (row,) = [r for r in json.loads(listed.stdout)["plugins"] if r["name"] == "broken"]
    assert row["status"].startswith("failed: ModuleNotFoundError") and listed.returncode == EXIT_FAILED
    with (workdir / "asz.yaml").open("a") as f:
        f.write("plugins:\n  broken:\n    enabled: false\n")
    assert asz_process("run", "--config", "asz.yaml", cwd=workdir, env=env).returncode == EXIT_OK
    listed = asz_process("plugins", "--config", "asz.yaml", "--json", cwd=workdir, env=env)
    (row,) = [r for r in json.loads(listed.stdout)["plugins"] if r["name"] == "broken"]
    assert (row["enabled"], row["status"], listed.returncode) == (False, "switched off", EXIT_OK)


def test_ctrl_c_while_plugins_load_ends_quietly_before_anything_started(workdir: Path) -> None:
    # Loading plugins imports extension modules, and a KeyboardInterrupt raised inside one's
    # initialization can crash the interpreter (orjson's did, under load): until the command
    # runs, an interrupt ends the process at once, with nothing started.
    site = _install_plugin(workdir / "site", "import os, signal\nos.kill(os.getpid(), signal.SIGINT)\n")
    env = {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    done = asz_process("run", "--config", "asz.yaml", cwd=workdir, env=env)
    assert done.returncode == 130, done.stderr
    assert done.stderr == "asz: interrupted before anything started\n"
    assert not (workdir / "root").exists()


def test_an_installed_plugin_is_switched_off_by_name(workdir: Path) -> None:
    with (workdir / "asz.yaml").open("a") as f:
        f.write("plugins:\n  otlp-push:\n    enabled: false\n"
                "export:\n  otlp:\n    endpoint: 127.0.0.1:9\n")  # nothing listens: a push would fail
    done = asz("run", "--config", "asz.yaml", "--json", cwd=workdir)
    assert done.returncode == EXIT_OK, done.stderr
    assert json.loads(done.stdout)["errors"] == 0 and "push" not in done.stderr


# ---- the schedule ----------------------------------------------------------------------------


def test_schedule_install_writes_a_timer_systemd_accepts_and_remove_takes_it_away(workdir: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(workdir / "cfg")}
    done = asz("schedule", "install", "--no-start", "--interval", "15m", "--config", "asz.yaml", cwd=workdir, env=env)
    assert done.returncode == EXIT_OK, done.stderr
    units = workdir / "cfg" / "systemd" / "user"
    service, timer = (units / "asz-pipeline.service").read_text(), (units / "asz-pipeline.timer").read_text()
    assert "Type=oneshot\n" in service and f"WorkingDirectory={workdir}\n" in service
    assert f" run --config {workdir / 'asz.yaml'}\n" in service
    assert "OnActiveSec=1min\n" in timer and "OnUnitActiveSec=900s\n" in timer
    assert "Unit=asz-pipeline.service\n" in timer and "WantedBy=timers.target\n" in timer
    assert "systemctl --user enable --now asz-pipeline.timer" in done.stdout
    if shutil.which("systemd-analyze"):
        checked = subprocess.run(["systemd-analyze", "verify", "--man=no", "asz-pipeline.timer",
                                  "asz-pipeline.service"], cwd=units, capture_output=True, text=True, check=False)
        assert checked.returncode == 0, checked.stderr
    status = asz("schedule", "status", cwd=workdir, env=env)
    assert status.returncode == EXIT_OK and str(units / "asz-pipeline.timer") in status.stdout
    gone = asz("schedule", "remove", "--no-start", cwd=workdir, env=env)
    assert gone.returncode == EXIT_OK and not any(units.iterdir())
    assert asz("schedule", "status", cwd=workdir, env=env).returncode == EXIT_FAILED


def test_the_interval_defaults_to_the_adapters_collector_interval(workdir: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(workdir / "cfg")}
    text = (workdir / "asz.yaml").read_text().replace("source_root: ./logs\n",
                                                      "source_root: ./logs\n    collector:\n      interval: 30m\n")
    (workdir / "asz.yaml").write_text(text)
    assert asz("schedule", "install", "--no-start", "--config", "asz.yaml", cwd=workdir, env=env).returncode == 0
    assert "OnUnitActiveSec=1800s\n" in (workdir / "cfg" / "systemd" / "user" / "asz-pipeline.timer").read_text()


def test_a_path_with_spaces_and_percent_is_quoted_for_systemd(tmp_path: Path) -> None:
    job = Job(["/opt/my tools/asz-pipeline", "run", "--config", "/home/me/100%/asz.yaml"], 600, "/home/me",
              {"ASZ_ROOT": "/data/my root"})
    service = systemd_service(job)
    assert 'ExecStart="/opt/my tools/asz-pipeline" run --config /home/me/100%%/asz.yaml\n' in service
    assert 'Environment="ASZ_ROOT=/data/my root"\n' in service
    assert systemd_quote('a"b') == '"a\\"b"'
    assert "OnUnitActiveSec=600s" in systemd_timer(job)


def test_the_launchd_agent_runs_a_pass_every_interval(tmp_path: Path) -> None:
    job = Job(["/venv/bin/asz-pipeline", "run", "--config", "/u/asz.yaml"], 900, "/u", {"ASZ_ROOT": "/data"})
    agent = plistlib.loads(launchd_plist(job, tmp_path / "pipeline.log"))
    assert agent["ProgramArguments"] == job.command and agent["StartInterval"] == 900
    assert agent["RunAtLoad"] is True and agent["WorkingDirectory"] == "/u"
    assert agent["EnvironmentVariables"] == {"ASZ_ROOT": "/data"}
    assert agent["StandardErrorPath"] == str(tmp_path / "pipeline.log")


# ---- secrets ---------------------------------------------------------------------------------


def test_config_never_prints_a_header_value_or_a_url_password(workdir: Path) -> None:
    with (workdir / "asz.yaml").open("a") as f:
        f.write("export:\n  otlp:\n    protocol: http\n    endpoint: https://me:hunter2@oap.example:12800\n"
                "    headers:\n      Authorization: Bearer s3cret-token\n")
    for args in (("config",), ("config", "--json")):
        done = asz(*args, "--config", "asz.yaml", cwd=workdir)
        assert done.returncode == EXIT_OK, done.stderr
        assert "s3cret-token" not in done.stdout and "hunter2" not in done.stdout, args
        assert "Authorization" in done.stdout and "https://me:***@oap.example:12800" in done.stdout


def test_a_push_never_prints_the_url_password_and_warns_of_plain_http(workdir: Path) -> None:
    pytest.importorskip("opentelemetry.proto")
    assert asz("run", "--config", "asz.yaml", cwd=workdir).returncode == EXIT_OK
    with (workdir / "asz.yaml").open("a") as f:
        f.write("export:\n  otlp:\n    protocol: http\n    endpoint: http://me:hunter2@192.0.2.1:9\n"
                "    timeout: 1s\n    headers:\n      Authorization: Bearer s3cret-token\n")
    for json_flag in ((), ("--json",)):
        done = asz("push", "--config", "asz.yaml", *json_flag, cwd=workdir)
        both = done.stdout + done.stderr
        assert done.returncode == EXIT_FAILED, both
        assert "hunter2" not in both and "s3cret-token" not in both
        assert "http://me:***@192.0.2.1:9" in both
        assert "over plain http://" in done.stderr
    state = workdir / "root" / "push.state"
    assert not state.exists() or "hunter2" not in state.read_text()


def test_push_without_the_otlp_extra_says_what_to_install(workdir: Path) -> None:
    with (workdir / "asz.yaml").open("a") as f:
        f.write("export:\n  otlp:\n    endpoint: 127.0.0.1:9\n")
    blocked = ("import sys; sys.modules['opentelemetry'] = None; sys.modules['grpc'] = None; "
               "from asz_core.cli.main import main; sys.exit(main(sys.argv[1:]))")
    done = subprocess.run([sys.executable, "-c", blocked, "push", "--config", "asz.yaml"], cwd=workdir,
                          capture_output=True, text=True, check=False)
    assert done.returncode == EXIT_CONFIG, done.stderr
    assert "pip install 'asz[otlp]'" in done.stderr and "Traceback" not in done.stderr


# ---- shell completion ------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash here")
def test_the_bash_completion_completes_commands_their_options_and_values(tmp_path: Path) -> None:
    done = asz("completion", "bash", cwd=tmp_path)
    assert done.returncode == EXIT_OK
    (tmp_path / "asz.bash").write_text(done.stdout)

    def complete(*words: str) -> list[str]:
        line = " ".join(f"'{w}'" for w in words)
        probe = (f"source asz.bash; COMP_WORDS=(asz-pipeline {line}); COMP_CWORD={len(words)}; "
                 f"_asz_pipeline; echo \"${{COMPREPLY[@]}}\"")
        return subprocess.run(["bash", "-c", probe], cwd=tmp_path, capture_output=True, text=True,
                              check=True).stdout.split()

    assert complete("sch") == ["schedule"]
    assert complete("schedule", "") == sorted(["--config", "--help", "--interval", "--no-start",
                                                "install", "remove", "status"])
    assert complete("--config", "x.yaml", "run", "--dr") == ["--dry-run"]
    assert complete("completion", "") == ["--config", "--help", "bash", "zsh"]
    assert "push" in complete("")  # a plugin's command too


def test_the_zsh_completion_is_the_bash_one_behind_bashcompinit(tmp_path: Path) -> None:
    done = asz("completion", "zsh", cwd=tmp_path)
    assert done.stdout.startswith("#compdef asz-pipeline\nautoload -U +X bashcompinit && bashcompinit\n")
    assert "complete -o default -F _asz_pipeline asz-pipeline" in done.stdout


# ---- a lean install --------------------------------------------------------------------------


def test_the_install_without_extras_names_no_otlp_package() -> None:
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    heavy = ("grpcio", "protobuf", "opentelemetry", "googleapis")
    assert not [d for d in project["dependencies"] if d.lower().startswith(heavy)]
    assert {d.split(">")[0] for d in project["optional-dependencies"]["otlp"]} == {
        "opentelemetry-proto", "grpcio", "googleapis-common-protos"}


def test_every_command_but_push_works_without_the_otlp_packages(workdir: Path) -> None:
    blocked = ("import sys\n"
               "for name in ('grpc', 'google.protobuf', 'opentelemetry'): sys.modules[name] = None\n"
               "from asz_core.cli.main import main\n"
               "codes = [main(a.split()) for a in ('run --config asz.yaml', 'verify --config asz.yaml', "
               "'config --config asz.yaml', 'plugins --config asz.yaml', 'view --config asz.yaml')]\n"
               "print(codes)\n")
    done = subprocess.run([sys.executable, "-c", blocked], cwd=workdir, capture_output=True, text=True, check=False)
    assert done.stdout.strip().splitlines()[-1] == "[0, 0, 0, 0, 0]", done.stderr


# ---- the way out of a conflict ---------------------------------------------------------------


def test_conflicts_lists_a_truncated_source_and_putting_its_bytes_back_clears_it(workdir: Path) -> None:
    source = workdir / "logs" / "alpha.jsonl"
    source.write_text('{"a":1}\n{"a":2}\n')
    assert asz("run", "--config", "asz.yaml", cwd=workdir).returncode == EXIT_OK
    assert asz("conflicts", "--config", "asz.yaml", cwd=workdir).returncode == EXIT_OK
    original = source.read_bytes()
    source.write_text('{"a":1}\n')  # cut short
    assert asz("run", "--config", "asz.yaml", cwd=workdir).returncode == EXIT_FAILED
    done = asz("conflicts", "--config", "asz.yaml", "--json", cwd=workdir)
    (item,) = json.loads(done.stdout)["conflicts"]
    assert done.returncode == EXIT_FAILED and item["session"] == "alpha" and item["source"].endswith("alpha.jsonl")
    assert item["landed_bytes"] == len(original)
    source.write_bytes(original + b'{"a":3}\n')  # the bytes back, and one more line
    again = asz("run", "--config", "asz.yaml", "--json", cwd=workdir)
    assert again.returncode == EXIT_OK and json.loads(again.stdout)["records"] == 1
    assert asz("conflicts", "--config", "asz.yaml", cwd=workdir).returncode == EXIT_OK
    assert asz("verify", "--config", "asz.yaml", cwd=workdir).returncode == EXIT_OK


def test_ctrl_c_while_the_command_is_still_importing_ends_it_quietly(tmp_path: Path) -> None:
    # SIGINT arrives while asz_core.cli.main is being imported, before anything has started
    probe = ("import os, signal, sys\n"
             "class Interrupt:\n"
             "    def find_spec(self, name, path=None, target=None):\n"
             "        if name == 'asz_core.cli.main':\n"
             "            os.kill(os.getpid(), signal.SIGINT)\n"
             "        return None\n"
             "sys.meta_path.insert(0, Interrupt())\n"
             "sys.argv = ['asz-pipeline', 'config']\n"
             "from asz_core.cli import main\n"
             "sys.exit(main())\n")
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert (done.returncode, done.stderr) == (130, "asz: interrupted before anything started\n")


# ---- --watch and progress --------------------------------------------------------------------


def test_watch_says_a_standing_warning_once_and_again_when_it_changes(
        workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    import asz_core.cli.commands.run_cmd as run_cmd
    from asz_core import hookimpl

    said = iter(["disk nearly full", "disk nearly full", "disk full", "disk full", "disk nearly full"])
    observer = types.ModuleType("observer")

    @hookimpl
    def asz_pass_start(ctx: object) -> None:
        ctx.reporter.warn(next(said))  # type: ignore[attr-defined]

    observer.asz_pass_start = asz_pass_start  # type: ignore[attr-defined]
    passes = []

    def sleep(seconds: float) -> None:
        passes.append(seconds)
        if len(passes) == 5:
            raise KeyboardInterrupt

    monkeypatch.setattr(run_cmd.time, "sleep", sleep)
    out, err = io.StringIO(), io.StringIO()
    app = App(out=out, err=err)
    app.host.register("observer", observer, adapter=False)
    assert main(["run", "--config", "asz.yaml", "--watch", "--interval", "2s"], app=app) == 130
    assert len(out.getvalue().splitlines()) == 5 and passes == [2.0] * 5
    shown = [line for line in err.getvalue().splitlines() if line.startswith("warning:")]
    assert shown == ["warning: disk nearly full", "warning: disk full", "warning: disk nearly full"]


def test_progress_shows_on_a_terminal_only_after_a_second(monkeypatch: pytest.MonkeyPatch) -> None:
    from asz_core.cli import console
    from asz_core.cli.commands.verify_cmd import _progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    now = [100.0]
    monkeypatch.setattr(console.time, "monotonic", lambda: now[0])
    for stream, expected in ((Terminal(), True), (io.StringIO(), False)):
        app = App(out=io.StringIO(), err=stream)
        show = _progress(app)
        show(1, 3)
        assert "verify:" not in stream.getvalue()  # the first second shows nothing
        now[0] += 2
        show(2, 3)
        assert ("verify: 2/3 sessions" in stream.getvalue()) is expected
        show(3, 3)
        assert stream.getvalue().endswith("\r\x1b[K") is expected  # cleared when done
