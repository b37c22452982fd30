"""The provider's sessions landed in worker processes land what one process lands, byte for
byte, and the pass's seen table ends the same: the workers hand their entries back to the pass
(``AdapterContext.hand_back``), which alone writes ``_provider/seen.state`` and ``seen.log``.

The default lane compares them on the bodies of six sessions; ``--slow`` (CI) on the whole corpus,
which costs seconds of CPU for each of the two passes."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from asz_core.context import PassSummary
from asz_core.testing import PassRunner
from tests.provider_support import (
    bodies_by_session,
    copy_bodies,
    provider_config,
    response_files,
    transcript_ids,
    write_index,
)

pytestmark = pytest.mark.corpus

CLOCK = 1_780_000_000_123_456_789
#: sessions of a few bodies each, more than the workers, for the default lane
SOME = ("8f4d493a-14e9-4f80-b905-a5af06d253c2", "839f0678-4dbc-4aa5-a37c-10f12406d23f",
        "93feae2d-9738-4b3d-a7dd-b03bacf0ed76", "db54f5d0-c338-4a49-a9ff-612173df821b",
        "de3b8b19-5bc0-4a2a-934a-1b6806567e25", "a9dda813-73e3-49f8-a718-68315200e497")


@pytest.fixture(scope="module")
def some_bodies(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The request and response files of the ``SOME`` sessions, copied with their mtimes."""
    bodies = corpus / "provider-bodies"
    ids = transcript_ids(corpus / "claude-code" / "projects")
    by_session = bodies_by_session(bodies)
    src = tmp_path_factory.mktemp("some-bodies")
    copy_bodies([p for s in SOME for p in by_session[s] + response_files(bodies, ids[s].calls)], src)
    return src


def _landed(root: Path) -> dict[str, str]:
    """Every landed file by path, with the digest of its bytes."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.glob("*/provider_body/*.sd"))}


def _run(tmp_path: Path, corpus: Path, bodies: Path, name: str, workers: int,
         monkeypatch: pytest.MonkeyPatch) -> tuple[PassRunner, PassSummary]:
    monkeypatch.delenv("ASZ_WORKERS", raising=False)
    (tmp_path / name).mkdir()
    runner = PassRunner(tmp_path / name, tmp_path / name / "root")
    runner.clock = lambda: CLOCK
    for ids in transcript_ids(corpus / "claude-code" / "projects").values():
        write_index(runner.root, ids)
    runner.configure(adapters=[provider_config(bodies, exclude=[],
                                               collector={"workers": workers, "max_delta_bytes": 256 * 1024})])
    return runner, runner.run()


@pytest.mark.parametrize("whole", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["some", "corpus"])
def test_workers_land_what_one_process_lands(whole: bool, some_bodies: Path, tmp_path: Path, corpus: Path,
                                              monkeypatch: pytest.MonkeyPatch,
                                              assert_root_verifies: Callable[[Path], None]) -> None:
    bodies = corpus / "provider-bodies" if whole else some_bodies
    one, serial = _run(tmp_path, corpus, bodies, "one", 1, monkeypatch)
    three, parallel = _run(tmp_path, corpus, bodies, "three", 3, monkeypatch)
    assert not parallel.failed and parallel.totals.landed >= (50 if whole else len(SOME))
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
