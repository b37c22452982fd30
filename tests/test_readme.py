"""The README's two set-up commands are the ones CI and users run."""

from __future__ import annotations

import re

from tests.helpers import REPO


def _commands() -> list[str]:
    text = (REPO / "README.md").read_text("utf-8")
    return re.findall(r"```sh\n(.+?)\n```", text, flags=re.S)[:2]


def test_readme_starts_with_the_two_commands() -> None:
    readme = (REPO / "README.md").read_text("utf-8")
    first_block = readme.index("```sh")
    assert readme[:first_block].count("\n") <= 3, "the two commands come first"
    run, test = _commands()
    assert "asz-pipeline run" in run and "examples/demo" in run
    assert "pytest" in test


def test_ci_runs_the_readme_test_command() -> None:
    _, test = _commands()
    ci = (REPO / ".ci" / "run").read_text("utf-8")
    assert f'readme_test_command="{test}"' in ci
