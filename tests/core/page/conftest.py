"""The roots the page's tests read: the shared corpus landed by every adapter (Claude Code
transcripts, their provider bodies and Kiro side by side), and small hand-made sessions."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from asz_core.glossary import gather
from asz_core.host import PluginHost
from asz_core.page.catalogue import Catalogue
from asz_core.page.server import PageServer
from asz_core.testing import PassRunner

#: Kiro's CLI database, relative to the corpus's ``.kiro`` home (as the kiro tests read it).
KIRO_DB = "../.local/share/kiro-cli/data.sqlite3"


@pytest.fixture(scope="session")
def page_root(corpus: Path, landed_once: Callable[[str, Callable[[Path], None]], Path]) -> Path:
    """Every corpus transcript, every provider body the provider adapter can claim, every Kiro
    session, landed once for the whole run (the tests only read it)."""
    def land(work: Path) -> None:
        saved = {name: os.environ.pop(name, None) for name in ("KIRO_HOME", "KIRO_CLI_DB_PATH", "XDG_DATA_HOME")}
        try:
            runner = PassRunner(work, work / "root")
            runner.configure(adapters=[
                {"name": "claude-code-local", "source_root": str(corpus / "claude-code" / "projects"), "exclude": []},
                {"name": "claude-code-provider", "source_root": str(corpus / "provider-bodies"), "exclude": []},
                {"name": "kiro", "source_root": str(corpus / "kiro" / ".kiro"), "cli_database": KIRO_DB,
                 "exclude": []},
            ])
            summary = runner.run()
        finally:
            for name, value in saved.items():
                if value is not None:
                    os.environ[name] = value
        assert not summary.failed and summary.totals.records
    return landed_once("page-corpus", land) / "root"


@pytest.fixture(scope="session")
def flagged(page_root: Path) -> str:
    """The corpus session with a record flagged ``system_prompt`` (by upstream's rules, only the
    Kiro IDE session's system prompt is flagged on this corpus)."""
    for path in sorted(page_root.glob("*/streams/*/*.sd")):
        if b'"system_prompt"' in path.read_bytes():
            return path.parts[-4]
    raise AssertionError("no landed record of the corpus is flagged system_prompt")


@pytest.fixture(scope="session")
def catalogue(page_root: Path) -> Catalogue:
    return Catalogue(page_root)


def serve(catalogue: Catalogue) -> Iterator[PageServer]:
    server = PageServer(catalogue, "127.0.0.1", 0, glossaries=gather(PluginHost().load_entry_points()))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(scope="session")
def page_server(catalogue: Catalogue) -> Iterator[PageServer]:
    """The page over the corpus root on a free loopback port, for the whole test session."""
    yield from serve(catalogue)
