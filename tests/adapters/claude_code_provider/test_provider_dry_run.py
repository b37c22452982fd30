"""A dry run counts what the pass would land: on the shared corpus, ``claude-code-local`` and
the provider adapter together, a dry run's summary equals the real pass's that follows it, and
the dry run writes nothing in the root (the provider's bodies whose sessions the same pass
creates are placed through the index lines the dry run would have written).

The default lane shows it on fifteen sessions and their bodies (``small_corpus``); ``--slow`` (CI) on the
whole corpus, four passes of which cost seconds of CPU."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from asz_core.testing import PassRunner
from tests.provider_support import provider_config

pytestmark = pytest.mark.corpus

INSTANT = 1_790_000_000 * 10**9


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every name under ``root`` with its size and mtime, less the root lock (a dry run holds it
    too, so that no pass lands while it reads, and the lock names its holder)."""
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            st = os.lstat(Path(folder, name))
            out[str(Path(folder, name).relative_to(root))] = (st.st_size, st.st_mtime_ns)
    del out[".lock"]
    return out


@pytest.mark.parametrize("whole", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["small", "corpus"])
def test_a_dry_run_counts_what_the_real_pass_lands_and_writes_nothing(whole: bool, request: pytest.FixtureRequest,
                                                                      tmp_path: Path) -> None:
    corpus: Path = request.getfixturevalue("corpus" if whole else "small_corpus")
    runner = PassRunner(tmp_path, tmp_path / "root")
    runner.clock = lambda: INSTANT
    runner.configure(adapters=[{"name": "claude-code-local", "source_root": str(corpus / "claude-code" / "projects")},
                               provider_config(corpus / "provider-bodies")])
    dry = runner.run(dry_run=True)
    assert not runner.root.exists()
    real = runner.run()
    assert dry.dry_run and not real.dry_run and not real.failed
    assert dry.fields() == real.fields()
    assert {n: c.as_dict() for n, c in dry.by_adapter.items()} == {n: c.as_dict() for n, c in real.by_adapter.items()}
    bodies = real.by_adapter["claude-code-provider"]
    assert bodies.landed > 0 and bodies.waiting < bodies.sources / 2  # placed, not waiting

    before = _tree(runner.root)
    again = runner.run(dry_run=True)
    assert _tree(runner.root) == before
    assert again.fields() == runner.run().fields()
