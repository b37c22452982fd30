"""Roots for the assembly tests: the shared Claude Code corpus landed once, and scenario builds."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from asz_core.scenario.build import BuildOptions, build
from asz_core.scenario.model import load_scenario
from asz_core.testing import PassRunner

AT_MS = 1_767_225_600_000  #: 2026-01-01T00:00:00Z


def _lander(projects: Path) -> Callable[[Path], None]:
    """Land every Claude Code session under ``projects`` (not parsed) into ``<work>/root``."""
    def land(work: Path) -> None:
        runner = PassRunner(work, work / "root")
        runner.configure(adapters=[{"name": "claude-code-local", "source_root": str(projects), "exclude": []}])
        summary = runner.run()
        assert not summary.failed, summary.as_dict()
    return land


@pytest.fixture(scope="session")
def landed_corpus(corpus: Path, landed_once: Callable[[str, Callable[[Path], None]], Path]) -> Path:
    """Every session of the shared Claude Code corpus, landed (not parsed) in a root of its own,
    once for the whole run; tests parse copies of it."""
    return landed_once("assembly-corpus", _lander(corpus / "claude-code" / "projects")) / "root"


@pytest.fixture
def corpus_copy(landed_corpus: Path, tmp_path: Path) -> Path:
    """A copy of the landed corpus a test may parse and damage."""
    target = tmp_path / "root"
    shutil.copytree(landed_corpus, target)
    return target


@pytest.fixture(scope="session")
def landed_small(small_corpus: Path, landed_once: Callable[[str, Callable[[Path], None]], Path]) -> Path:
    """The small corpus's sessions (``small_corpus``), landed as ``landed_corpus`` is, once."""
    return landed_once("assembly-small", _lander(small_corpus / "claude-code" / "projects")) / "root"


@pytest.fixture
def small_copy(landed_small: Path, tmp_path: Path) -> Path:
    """A copy of the small corpus's landed root a test may parse and damage."""
    target = tmp_path / "root"
    shutil.copytree(landed_small, target)
    return target


#: one corpus session, for the tests that need a single session's chain
ONE_SESSION = "839f0678-4dbc-4aa5-a37c-10f12406d23f"


@pytest.fixture
def session_copy(landed_small: Path, tmp_path: Path) -> tuple[Path, str]:
    """A root holding a copy of one landed corpus session (``ONE_SESSION``, one of the small
    corpus's), and its id: what a test of one session's parse needs, without copying and parsing
    them all."""
    target = tmp_path / "root"
    target.mkdir()
    shutil.copytree(landed_small / ONE_SESSION, target / ONE_SESSION)
    return target, ONE_SESSION


def build_sd(scenario: Path, out: Path, through: str = "") -> str:
    """A scenario landed directly as Session Data (``--format sd``); returns its session id."""
    built = build(load_scenario(scenario), out, BuildOptions(format="sd", at_ms=AT_MS, through=through))
    return built.plans[0].session


@pytest.fixture
def scenarios(corpus: Path) -> Path:
    return corpus / "upstream" / "tests" / "scenarios"
