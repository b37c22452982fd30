"""``asz-pipeline`` as a user runs it, on the example adapter: a pass, the pipe and ``--watch`` in a
subprocess as installed, the other commands' status and output in-process (``run_cli``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from asz_core.cli.app import EXIT_CONFIG, EXIT_FAILED, EXIT_OK, EXIT_REFUSED
from asz_core.root.locks import FileLock
from asz_core.testing import run_sdcheck
from tests.helpers import REPO, run_cli

#: the built-in adapters stay on beside a third-party one unless switched off; a test never
#: reads the machine's own sessions
BUILT_IN_OFF = "".join(f"  - name: {name}\n    enabled: false\n"
                       for name in ("claude-code-local", "changes", "claude-code-provider", "kiro"))


def asz(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd, env=env)


def asz_process(*args: str, cwd: Path | None = None,
                env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The command in a process of its own, as the installed console script runs it."""
    return subprocess.run([sys.executable, "-m", "asz_core.cli", *args], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, **(env or {})}, check=False)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    src = tmp_path / "logs"
    src.mkdir()
    (src / "alpha.jsonl").write_text('{"a":1}\n{"a":2}\n')
    (src / "beta.jsonl").write_text('{"b":1}\nnot json\n')
    (tmp_path / "asz.yaml").write_text(
        "storage:\n  root: ./root\nadapters:\n  - name: jsonl\n    source_root: ./logs\n" + BUILT_IN_OFF)
    return tmp_path


def test_plugins_lists_the_installed_example_adapter(workdir: Path) -> None:
    done = asz("plugins", "--config", str(workdir / "asz.yaml"), "--json")
    assert done.returncode == EXIT_OK, done.stderr
    (row,) = [r for r in json.loads(done.stdout)["plugins"] if r["name"] == "jsonl"]
    assert row["distribution"].startswith("asz-adapter-jsonl") and row["enabled"] and row["order"] == 1
    assert row["entry_point"] == "asz_adapter_jsonl.adapter" and row["status"] == "loaded"


def test_run_lands_through_the_example_adapter_and_sdcheck_accepts(workdir: Path) -> None:
    first = asz_process("run", "--config", "asz.yaml", "--json", cwd=workdir)
    assert first.returncode == EXIT_OK, first.stderr
    line = json.loads(first.stdout)
    assert (line["sessions"], line["landed"], line["records"]) == (2, 2, 4)
    second = asz_process("run", "--config", "asz.yaml", cwd=workdir)
    assert second.returncode == EXIT_OK and " landed=0 records=0 " in second.stdout
    assert second.stdout.startswith("[") and "conflicts=0" in second.stdout
    verdict = run_sdcheck(workdir / "root")
    assert verdict is None or verdict["ok"], verdict
    verified = asz_process("verify", "--config", "asz.yaml", cwd=workdir)
    assert verified.returncode == EXIT_OK and "ok" in verified.stdout


def test_verify_fails_on_damage(workdir: Path) -> None:
    asz("run", "--config", "asz.yaml", cwd=workdir)
    (landed,) = (workdir / "root" / "alpha" / "streams" / "main").glob("*.sd")
    landed.chmod(0o600)
    landed.write_bytes(landed.read_bytes().replace(b'"a":2', b'"a":3'))
    done = asz("verify", "--config", "asz.yaml", "--json", cwd=workdir)
    assert done.returncode == EXIT_FAILED
    problems = [p for s in json.loads(done.stdout)["sessions"] for p in s["problems"]]
    assert problems and problems[0]["kind"] == "damaged"


def test_config_errors_exit_2_with_every_problem(workdir: Path) -> None:
    (workdir / "bad.yaml").write_text("adapters:\n  - name: jsonl\n    colector: {}\n  - name: ghost\n")
    done = asz("run", "--config", "bad.yaml", cwd=workdir)
    assert done.returncode == EXIT_CONFIG
    assert "bad.yaml:3: adapters[0].colector: unknown key" in done.stderr
    assert "bad.yaml:4: adapters[1].name: adapter 'ghost' is not installed (installed adapters:" in done.stderr


def test_a_locked_root_exits_3_naming_the_holder(workdir: Path) -> None:
    (workdir / "root").mkdir()
    with FileLock(workdir / "root" / ".lock", describe=True):
        done = asz("run", "--config", "asz.yaml", cwd=workdir)
    assert done.returncode == EXIT_REFUSED and f"pid {os.getpid()}" in done.stderr


def test_config_prints_the_effective_configuration(workdir: Path) -> None:
    done = asz("config", "--config", "asz.yaml", "--json", cwd=workdir)
    assert done.returncode == EXIT_OK
    config = json.loads(done.stdout)["config"]
    assert config["storage"]["root"] == str(workdir / "root")
    assert config["adapters"][0]["collector"]["max_delta_bytes"] == 2097152


def test_sources_lists_what_the_adapter_finds(workdir: Path) -> None:
    done = asz("sources", "--config", "asz.yaml", "--json", cwd=workdir)
    assert done.returncode == EXIT_OK
    (report,) = json.loads(done.stdout)["adapters"]
    assert report["found"] == {"session": 2} and report["source_dirs"] == [str(workdir / "logs")]


@pytest.mark.parametrize("command", ["run", "sources", "verify", "plugins", "config"])
def test_every_subcommand_takes_config(command: str) -> None:
    done = asz(command, "--help")
    assert done.returncode == 0 and "--config" in done.stdout


def test_the_demo_of_the_readme_runs(tmp_path: Path) -> None:
    demo = tmp_path / "examples" / "demo"  # run from the top directory, as the README does
    demo.parent.mkdir()
    subprocess.run(["cp", "-r", str(REPO / "examples" / "demo"), str(demo)], check=True)
    subprocess.run(["rm", "-rf", str(demo / "data")], check=True)
    done = asz("run", "--config", "examples/demo/asz.yaml", cwd=tmp_path)
    assert done.returncode == EXIT_OK, done.stderr
    assert asz("verify", "--config", "examples/demo/asz.yaml", cwd=tmp_path).returncode == EXIT_OK
    assert (demo / "data").is_dir()


def test_a_closed_pipe_is_not_an_error(workdir: Path) -> None:
    for n in range(3000):  # more output than a pipe holds, so the writer meets the closed end
        (workdir / "logs" / f"session-{n:05d}.jsonl").write_text("{}\n")
    done = subprocess.run(f"{sys.executable} -m asz_core.cli sources --config asz.yaml --sessions | head -c 1",
                          shell=True, capture_output=True, text=True, cwd=workdir, check=False)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr


def test_watch_keeps_passing_at_the_interval(workdir: Path) -> None:
    child = subprocess.Popen([sys.executable, "-m", "asz_core.cli", "run", "--config", "asz.yaml", "--watch",
                              "--interval", "1s"], cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        first = child.stdout.readline()  # type: ignore[union-attr]
        (workdir / "logs" / "gamma.jsonl").write_text('{"g":1}\n')
        lines = [child.stdout.readline() for _ in range(2)]  # type: ignore[union-attr]
    finally:
        child.terminate()
        child.wait(timeout=10)
    assert " records=4 " in first
    assert any(" records=1 " in line for line in lines), lines
