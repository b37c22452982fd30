"""A session's summary of its provider_body files: a later pass lands new bodies into the session
without reading the bodies it landed before, and lands exactly the bytes it lands after reading
them; a summary that does not match the files, or a base whose source file is gone, falls back
to reading them.

Each test lands a real chain of the corpus (12 requests, 11 responses) in two passes, the second
half referring into the first, twice: once as the adapter does, once with something changed
between the passes, and compares the second pass's file line by line (but the header's ``at``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from asz_core.providerbody import ProviderBodies, provider_body_files
from asz_core.providerbody.summary import load, summary_path
from asz_core.testing import PassRunner
from tests.adapters.claude_code_provider.test_provider_adapter import CHAIN, bodies_of, rebuilds_exactly, stage
from tests.provider_support import TranscriptIds, land_ids, provider_config, transcript_ids

pytestmark = pytest.mark.corpus

Between = Callable[[Path, Path], None]


@pytest.fixture(scope="module")
def ids(corpus: Path) -> dict[str, TranscriptIds]:
    return transcript_ids(corpus / "claude-code" / "projects")


@pytest.fixture
def taken(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The landed provider_body files read (taken in whole), by name, in this process."""
    return _count_reads(monkeypatch)


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.delenv("ASZ_WORKERS", raising=False)
    seen: list[str] = []
    real = ProviderBodies._take_in

    def take_in(self: ProviderBodies, seq: int, path: Path) -> None:
        seen.append(path.name)
        real(self, seq, path)

    monkeypatch.setattr(ProviderBodies, "_take_in", take_in)
    return seen


def _lines(path: Path) -> list[object]:
    lines: list[object] = [json.loads(line) for line in path.read_bytes().splitlines()]
    header = lines[0]
    assert isinstance(header, dict)
    header.pop("at")
    return lines[:-1]  # the closing line's digest covers the header's `at`


def _two_passes(tmp: Path, corpus: Path, ids: dict[str, TranscriptIds], taken: list[str],
                between: Between | None = None) -> tuple[list[object], list[str], Path, Path]:
    """Land the chain's first half, call ``between(root, bodies)``, land the rest: the second
    file's lines, the files the second pass read, the root and the bodies directory."""
    tmp.mkdir()
    runner = PassRunner(tmp, tmp / "root")
    chain = bodies_of(corpus, ids, CHAIN)
    src = tmp / "bodies"
    land_ids(runner.root, chain.ids)
    written = chain.written()
    half = len(written) // 2
    stage(written[:half], src)
    runner.configure(adapters=[provider_config(src)])
    assert runner.run().totals.records == half
    assert summary_path(runner.root / CHAIN).is_file()
    if between is not None:
        between(runner.root, src)
    stage(written[half:], src)
    taken.clear()
    second = runner.run()
    assert second.totals.records == len(written) - half and not second.failed
    files = provider_body_files(runner.root / CHAIN)
    assert len(files) == 2
    return _lines(files[1][1]), list(taken), runner.root, src


def _without_summary(root: Path, src: Path) -> None:
    summary_path(root / CHAIN).unlink()


@pytest.fixture(scope="module")
def reference(corpus: Path, ids: dict[str, TranscriptIds],
              tmp_path_factory: pytest.TempPathFactory) -> tuple[list[object], list[str]]:
    """The second file's lines when the second pass reads the first file (no summary), and the
    files it read: what every test below compares with, landed once."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        seen = _count_reads(monkeypatch)
        lines, read, _, _ = _two_passes(tmp_path_factory.mktemp("reference") / "read", corpus, ids, seen,
                                        _without_summary)
    return lines, read


def test_the_second_pass_reads_no_landed_file_and_lands_what_reading_them_lands(
        tmp_path: Path, corpus: Path, ids: dict[str, TranscriptIds], taken: list[str],
        reference: tuple[list[object], list[str]],
        assert_root_verifies: Callable[[Path], None]) -> None:
    lines, read = reference
    assert len(read) == 1  # without a summary: the first file, read whole
    reference_lines = lines
    lines, read, root, src = _two_passes(tmp_path / "summary", corpus, ids, taken)
    assert read == []
    assert lines == reference_lines
    assert rebuilds_exactly(root, src) == len(bodies_of(corpus, ids, CHAIN).written())
    assert_root_verifies(root)
    # the summary now covers both files: a third pass with a new body would not read them either
    named = [name for name, *_ in json.loads(summary_path(root / CHAIN).read_bytes())["files"]]
    assert named == [path.name for _, path in provider_body_files(root / CHAIN)]


def test_a_base_whose_source_file_is_gone_is_rebuilt_from_the_landed_files(
        tmp_path: Path, corpus: Path, ids: dict[str, TranscriptIds], taken: list[str],
        reference: tuple[list[object], list[str]], assert_root_verifies: Callable[[Path], None]) -> None:

    def clean_up(root: Path, src: Path) -> None:  # the spec's `find ... -delete` of collected files
        for path in src.iterdir():
            path.unlink()

    lines, read, root, _ = _two_passes(tmp_path / "deleted", corpus, ids, taken, clean_up)
    assert len(read) == 1 and lines == reference[0]
    assert_root_verifies(root)


@pytest.mark.parametrize("change", ["touched", "garbled", "other_format"])
def test_a_summary_that_does_not_match_the_files_is_not_used(
        tmp_path: Path, corpus: Path, ids: dict[str, TranscriptIds], taken: list[str], change: str,
        reference: tuple[list[object], list[str]], assert_root_verifies: Callable[[Path], None]) -> None:

    def spoil(root: Path, src: Path) -> None:
        path = summary_path(root / CHAIN)
        if change == "touched":  # the landed file: another mtime than the summary names
            landed = provider_body_files(root / CHAIN)[0][1]
            st = landed.stat()
            os.utime(landed, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
        elif change == "garbled":
            path.write_bytes(path.read_bytes()[:100])
        else:
            data = json.loads(path.read_bytes())
            data["format"] = 0
            path.write_bytes(json.dumps(data).encode())

    lines, read, root, _ = _two_passes(tmp_path / change, corpus, ids, taken, spoil)
    assert len(read) == 1 and lines == reference[0]
    assert_root_verifies(root)


def _land_in_halves(tmp: Path, corpus: Path, ids: dict[str, TranscriptIds], between: Between | None,
                    max_delta_bytes: int) -> Path:
    """Every body of the corpus landed in two passes split at the middle mtime, files no larger
    than ``max_delta_bytes`` (so that some bodies land reduced, pieces taken out)."""
    tmp.mkdir()
    runner = PassRunner(tmp, tmp / "root")
    for each in ids.values():
        land_ids(runner.root, each)
    written = sorted((corpus / "provider-bodies").iterdir(), key=lambda p: (p.stat().st_mtime_ns, p.name))
    src = tmp / "bodies"
    half = len(written) // 2
    runner.configure(adapters=[provider_config(src, collector={"max_delta_bytes": max_delta_bytes})])
    stage([(p, p.stat().st_mtime_ns) for p in written[:half]], src)
    assert not runner.run().failed
    if between is not None:
        between(runner.root, src)
    stage([(p, p.stat().st_mtime_ns) for p in written[half:]], src)
    assert not runner.run().failed
    return runner.root


def _landed(root: Path) -> dict[tuple[str, int], list[object]]:
    return {(session.name, seq): _lines(path) for session in sorted(root.iterdir()) if session.is_dir()
            for seq, path in provider_body_files(session)}


@pytest.mark.slow  # a whole-corpus sweep, twice
def test_the_whole_corpus_in_two_passes_lands_the_same_bytes_with_and_without_summaries(
        tmp_path: Path, corpus: Path, ids: dict[str, TranscriptIds],
        assert_root_verifies: Callable[[Path], None]) -> None:
    def forget(root: Path, src: Path) -> None:
        for path in root.glob("*/index/provider_bodies"):
            path.unlink()

    read = _land_in_halves(tmp_path / "read", corpus, ids, forget, 300_000)
    summarized = _land_in_halves(tmp_path / "summary", corpus, ids, None, 300_000)
    landed = _landed(summarized)
    assert landed == _landed(read)
    sessions = {session for session, seq in landed if seq > 1}
    assert len(sessions) >= 20  # sessions that got new bodies in the second pass
    assert_root_verifies(summarized)


@pytest.mark.parametrize("whole", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["small", "corpus"])
def test_a_summary_restores_what_reading_the_files_gives(
        whole: bool, request: pytest.FixtureRequest, tmp_path: Path, ids: dict[str, TranscriptIds]) -> None:
    # fifteen sessions' bodies show it in the default lane, with files cut smaller so that some of
    # their pieces are taken out too; the whole corpus costs seconds of CPU
    corpus: Path = request.getfixturevalue("corpus" if whole else "small_corpus")
    root = _land_in_halves(tmp_path / "root", corpus, ids, None, 300_000 if whole else 60_000)
    too_large = 0
    for session in sorted(p for p in root.iterdir() if (p / "provider_body").is_dir()):
        restored = load(session)
        assert restored is not None, session.name
        store, _ = restored
        reader = ProviderBodies(session)
        reader.load_all()
        read = reader.store
        fields = ("role", "src", "sha256", "bytes", "depth", "chain")
        assert {k: (e.index, e.seq, e.row, e.status, e.problem, *(getattr(e.manifest, f) for f in fields))
                for k, e in store.bodies.items()} == \
               {k: (e.index, e.seq, e.row, e.status, e.problem, *(getattr(e.manifest, f) for f in fields))
                for k, e in read.bodies.items()}
        assert store.pieces.keys() == read.pieces.keys() and store.count == read.count
        assert {d: store.holds_piece(d) for d in store.pieces} == {d: read.holds_piece(d) for d in read.pieces}
        assert (store.piece_sizes, store.piece_states) == (read.piece_sizes, read.piece_states)
        too_large += sum(state == "too_large" for state in read.piece_states.values())
    assert too_large  # some pieces were taken out to fit
