"""The roots the page's tests read: the shared corpus landed by every adapter (Claude Code
transcripts, their provider bodies and Kiro side by side), and small hand-made sessions."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from asz_core.glossary import gather
from asz_core.host import PluginHost
from asz_core.page.catalogue import Catalogue
from asz_core.page.server import PageServer
from asz_core.page.watch import Watcher
from asz_core.testing import PassRunner
from tests.core.page.page_helpers import FIRST, copy_transcript


@pytest.fixture(scope="session")
def page_root(every_adapter_root: Path) -> Path:
    """Every corpus transcript, every provider body the provider adapter can claim, every Kiro
    session, landed and parsed once for the whole run (``every_adapter_root``, which the view's
    tests read too; the tests only read it)."""
    return every_adapter_root


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


def serve(catalogue: Catalogue, watcher: Watcher | None = None) -> Iterator[PageServer]:
    server = PageServer(catalogue, "127.0.0.1", 0, glossaries=gather(PluginHost().load_entry_points()),
                        watcher=watcher)
    # polled often, so that shutting it down after a test takes no default half second
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
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


@pytest.fixture
def watched(corpus: Path, tmp_path: Path) -> tuple[PassRunner, Path]:
    """A configuration over a source holding one transcript, the root not created yet."""
    source = tmp_path / "projects"
    copy_transcript(corpus, source, FIRST)
    runner = PassRunner(tmp_path, tmp_path / "root")
    runner.configure(adapters=[{"name": "claude-code-local", "source_root": str(source), "exclude": []}])
    return runner, source
