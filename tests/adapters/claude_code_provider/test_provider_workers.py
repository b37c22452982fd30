"""The provider's sessions landed in worker processes land what one process lands, byte for
byte, and the pass's seen table ends the same: the workers hand their entries back to the pass
(``AdapterContext.hand_back``), which alone writes ``_provider/seen.state`` and ``seen.log``.

The default lane compares them on fifteen sessions' bodies (``small_corpus``); ``--slow`` (CI) on
the whole corpus, which costs seconds of CPU for each of the two passes."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from asz_core.context import PassSummary
from asz_core.testing import PassRunner
from tests.provider_support import land_ids, provider_config, transcript_ids

pytestmark = pytest.mark.corpus

CLOCK = 1_780_000_000_123_456_789


def _landed(root: Path) -> dict[str, str]:
    """Every landed file by path, with the digest of its bytes."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.glob("*/provider_body/*.sd"))}


def _run(tmp_path: Path, corpus: Path, name: str, workers: int,
         monkeypatch: pytest.MonkeyPatch) -> tuple[PassRunner, PassSummary]:
    monkeypatch.delenv("ASZ_WORKERS", raising=False)
    (tmp_path / name).mkdir()
    runner = PassRunner(tmp_path / name, tmp_path / name / "root")
    runner.clock = lambda: CLOCK
    for ids in transcript_ids(corpus / "claude-code" / "projects").values():
        land_ids(runner.root, ids)
    runner.configure(adapters=[provider_config(corpus / "provider-bodies", exclude=[],
                                               collector={"workers": workers, "max_delta_bytes": 256 * 1024})])
    return runner, runner.run()


@pytest.mark.parametrize("whole", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["small", "corpus"])
def test_workers_land_what_one_process_lands(whole: bool, request: pytest.FixtureRequest, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch,
                                              assert_root_verifies: Callable[[Path], None]) -> None:
    corpus: Path = request.getfixturevalue("corpus" if whole else "small_corpus")
    one, serial = _run(tmp_path, corpus, "one", 1, monkeypatch)
    three, parallel = _run(tmp_path, corpus, "three", 3, monkeypatch)
    assert not parallel.failed and parallel.totals.landed > (50 if whole else 12)
    assert parallel.totals.as_dict() == serial.totals.as_dict()
    assert _landed(three.root) == _landed(one.root)
    assert sorted(three.reporter.warnings) == sorted(one.reporter.warnings)
    state = "_provider/seen.state"
    assert (three.root / state).read_bytes() == (one.root / state).read_bytes()
    assert not (three.root / "_provider" / "seen.log").exists()  # taken into seen.state at the end
    assert_root_verifies(three.root)
    again = three.run()  # the table the pass wrote from what the workers handed back: nothing is read again
    assert not again.failed and again.totals.landed == 0 and again.totals.conflicts == 0
    assert (three.root / state).read_bytes() == (one.root / state).read_bytes()
