"""The corpus landed and parsed once for the view's tests: both Claude Code adapters, nothing
excluded, and the Kiro captures, in one root."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from asz_core.assembly.parse import parse_root
from asz_core.context import PassSummary
from asz_core.testing import PassRunner

#: what the Kiro adapter would otherwise read of the machine running the tests
_KIRO_ENV = ("KIRO_HOME", "KIRO_CLI_DB_PATH", "XDG_DATA_HOME", "XDG_CONFIG_HOME")


@pytest.fixture(scope="session")
def corpus_root(corpus: Path, landed_once: Callable[[str, Callable[[Path], None]], Path]) -> Path:
    """A root holding every corpus transcript, every body the provider adapter can claim and every
    Kiro session, each parsed into its round chain."""
    def land(work: Path) -> None:
        saved = {name: os.environ.get(name) for name in (*_KIRO_ENV, "HOME")}
        os.environ["HOME"] = str(work / "no-home")
        for name in _KIRO_ENV:
            os.environ.pop(name, None)
        try:
            runner = PassRunner(work, work / "root")
            runner.configure(adapters=[
                {"name": "claude-code-local", "source_root": str(corpus / "claude-code" / "projects"), "exclude": []},
                {"name": "claude-code-provider", "source_root": str(corpus / "provider-bodies"), "exclude": []},
                {"name": "kiro", "source_root": str(corpus / "kiro" / ".kiro"),
                 "cli_database": "../.local/share/kiro-cli/data.sqlite3"},
            ])
            summary: PassSummary = runner.run()
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
        assert not summary.failed and summary.totals.records
        results = parse_root(work / "root")
        assert results and not [r.message for r in results if r.outcome]
    return landed_once("view-corpus", land) / "root"
