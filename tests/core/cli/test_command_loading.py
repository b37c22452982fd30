"""A command line that names a built-in command loads that command alone, a plugin's command none of
them; help, completion and any other name get every command; ``--version`` gets none."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from asz_core.cli import commands
from asz_core.cli.app import App
from asz_core.cli.main import _command_named, build_parser


@pytest.mark.parametrize(("argv", "named"), [
    (["run", "--json"], "run"),
    (["--config", "asz.yaml", "run"], "run"),
    (["--config=asz.yaml", "sources", "--json"], "sources"),
    (["run", "--config", "asz.yaml"], "run"),
    (["--config", "run", "parse"], "parse"),  # "run" is the file's name here
    (["--help"], None),
    (["--version", "run"], commands.NO_COMMAND),
    (["--config", "asz.yaml", "--version"], commands.NO_COMMAND),
    (["--help", "--version"], None),
    (["-x", "run"], None),
    (["--config", "asz.yaml"], None),
    ([], None),
])
def test_the_command_named_is_the_first_word_that_is_no_option_nor_the_configs_file(
        argv: list[str], named: str | None) -> None:
    assert _command_named(argv) == named


def _choices(named: str | None) -> set[str]:
    app = App()
    commands.register(app.host)
    parser = build_parser(app, named)
    sub = next(a for a in parser._actions if a.dest == "command")
    assert isinstance(sub.choices, dict)
    return set(sub.choices)


def test_a_built_in_command_named_is_the_only_built_in_command_built() -> None:
    every = _choices(None)
    assert set(commands.NAMES) <= every
    only_run = _choices("run")
    assert "run" in only_run and not only_run & (set(commands.NAMES) - {"run"})
    assert only_run - {"run"} == every - set(commands.NAMES)  # plugins' commands are still there


def test_a_name_no_plugin_adds_gets_every_command() -> None:
    assert _choices("no-such-command") == _choices(None)


def test_a_plugins_command_named_gets_no_built_in_command() -> None:
    every = _choices(None)
    assert "push" in every
    assert _choices("push") == every - set(commands.NAMES)


def test_a_plugins_command_parses_as_it_did_with_every_command_built() -> None:
    app = App()
    commands.register(app.host)
    argv = ["push", "--config", "asz.yaml", "--json", "--wait"]
    assert vars(build_parser(app, "push").parse_args(argv)) == vars(build_parser(app, None).parse_args(argv))


def test_a_typo_is_told_every_command() -> None:
    from asz_core.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    assert main(["psuh", "--json"], App(out=out, err=err)) == 2
    message = json.loads(out.getvalue())["error"]["message"]
    assert "'psuh'" in message and all(repr(name) in message for name in ("push", "run", *commands.NAMES))


def test_version_builds_no_built_in_command_and_still_says_the_version(capsys: pytest.CaptureFixture[str]) -> None:
    from asz_core import __version__
    from asz_core.cli.main import main

    assert not _choices(commands.NO_COMMAND) & set(commands.NAMES)
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"asz {__version__}\n"


def test_each_built_in_command_is_its_modules_only_command() -> None:
    for name in commands.NAMES:
        assert name in _choices(name)


def test_a_run_does_not_import_the_other_commands_modules() -> None:
    code = ("import json, sys\n"
            "from asz_core.cli.app import App\n"
            "from asz_core.cli import commands\n"
            "from asz_core.cli.main import build_parser\n"
            "app = App()\n"
            "commands.register(app.host)\n"
            "build_parser(app, 'run').parse_args(['run', '--json'])\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('asz_core.cli.commands.'))))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == ["asz_core.cli.commands.run_cmd"]


def test_every_command_module_is_a_built_in_command_named() -> None:
    from pathlib import Path

    modules = {p.name.removesuffix("_cmd.py") for p in Path(commands.__file__).parent.glob("*_cmd.py")}
    assert modules == set(commands.NAMES)
