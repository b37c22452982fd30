"""The corpus landed once for the view's tests: both Claude Code adapters, nothing excluded."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from asz_core.context import PassSummary
from asz_core.testing import PassRunner


@pytest.fixture(scope="session")
def corpus_root(corpus: Path, landed_once: Callable[[str, Callable[[Path], None]], Path]) -> Path:
    """A root holding every corpus transcript and every body the provider adapter can claim."""
    def land(work: Path) -> None:
        runner = PassRunner(work, work / "root")
        runner.configure(adapters=[
            {"name": "claude-code-local", "source_root": str(corpus / "claude-code" / "projects"), "exclude": []},
            {"name": "claude-code-provider", "source_root": str(corpus / "provider-bodies"), "exclude": []},
        ])
        summary: PassSummary = runner.run()
        assert not summary.failed and summary.totals.records
    return landed_once("view-corpus", land) / "root"
