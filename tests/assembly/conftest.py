"""Roots for the assembly tests: the shared Claude Code corpus landed once, and scenario builds."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from asz_core.scenario.build import BuildOptions, build
from asz_core.scenario.model import load_scenario
from asz_core.testing import PassRunner

AT_MS = 1_767_225_600_000  #: 2026-01-01T00:00:00Z


@pytest.fixture(scope="module")
def landed_corpus(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every session of the shared Claude Code corpus, landed (not parsed) in a root of its own."""
    work = tmp_path_factory.mktemp("assembly-corpus")
    runner = PassRunner(work, work / "root")
    runner.configure(adapters=[{"name": "claude-code-local", "source_root": str(corpus / "claude-code" / "projects"),
                                "exclude": []}])
    summary = runner.run()
    assert not summary.failed, summary.as_dict()
    return work / "root"


@pytest.fixture
def corpus_copy(landed_corpus: Path, tmp_path: Path) -> Path:
    """A copy of the landed corpus a test may parse and damage."""
    target = tmp_path / "root"
    shutil.copytree(landed_corpus, target)
    return target


def build_sd(scenario: Path, out: Path, through: str = "") -> str:
    """A scenario landed directly as Session Data (``--format sd``); returns its session id."""
    built = build(load_scenario(scenario), out, BuildOptions(format="sd", at_ms=AT_MS, through=through))
    return built.plans[0].session


@pytest.fixture
def scenarios(corpus: Path) -> Path:
    return corpus / "upstream" / "tests" / "scenarios"
