"""``parse`` over the real corpus: every session assembles, every chain verifies, a parse with
nothing new reads nothing, and the budget changes where the chain is cut, never what it says."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from asz_core.assembly import evidence
from asz_core.assembly.chain import Chain
from asz_core.assembly.parse import parse_root, parse_session
from asz_core.testing import run_sdcheck
from asz_core.verify import verify_root

pytestmark = pytest.mark.corpus


# The default lane parses the small corpus's fifteen sessions; --slow (CI) all 62 too, which costs
# seconds of CPU.
WHOLE = [pytest.param(False, id="small"), pytest.param(True, id="corpus", marks=pytest.mark.slow)]


@pytest.mark.parametrize("whole", WHOLE)
def test_every_session_of_the_shared_corpus_parses_into_one_round_that_verifies(
        whole: bool, request: pytest.FixtureRequest) -> None:
    corpus_copy: Path = request.getfixturevalue("corpus_copy" if whole else "small_copy")
    results = parse_root(corpus_copy)
    sessions = [p for p in corpus_copy.iterdir() if p.is_dir() and not p.name.startswith("_")]
    assert len(results) == len(sessions) == (62 if whole else 15)
    assert all(not r.outcome and len(r.rounds) == 1 for r in results), [r.message for r in results if r.outcome]
    for r in results:
        fold = Chain(corpus_copy, r.session).fold()
        kinds = {n["kind"] for n in fold.nodes.values()}
        assert {"session", "stream", "epoch"} <= kinds
        assert fold.through_seq == max(evidence.landed_seqs(corpus_copy / r.session))
    problems = [str(p) for rep in verify_root(corpus_copy) for p in rep.problems]
    assert not problems, problems[:5]
    verdict = run_sdcheck(corpus_copy)
    assert verdict is None or verdict.get("ok", True), verdict


@pytest.mark.parametrize("whole", WHOLE)
def test_a_parse_with_nothing_new_writes_no_round_and_reads_no_landed_file(
        whole: bool, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus_copy: Path = request.getfixturevalue("corpus_copy" if whole else "small_copy")
    parse_root(corpus_copy)

    def refuse(seq: int, path: Path) -> evidence.LandedEvidence:
        raise AssertionError(f"a no-op parse read landed file {path}")

    monkeypatch.setattr(evidence, "read_landed", refuse)
    again = parse_root(corpus_copy)
    assert all(not r.rounds and not r.outcome and r.files_read == 0 for r in again)


def test_a_one_byte_budget_cuts_one_round_per_landed_file_and_folds_to_the_same_entities(
        small_copy: Path) -> None:
    session = max((p.name for p in small_copy.iterdir() if p.is_dir() and not p.name.startswith("_")),
                  key=lambda s: len(evidence.landed_seqs(small_copy / s)))
    whole = parse_session(small_copy, session)
    assert len(whole.rounds) == 1
    one = Chain(small_copy, session).fold()
    other = small_copy.parent / "cut"
    other.mkdir()
    shutil.copytree(small_copy / session, other / session)  # a session reached through a link is not read
    cut = parse_session(other, session, max_round_bytes=1)
    seqs = evidence.landed_seqs(small_copy / session)
    assert len(cut.rounds) == len(seqs) > 1
    many = Chain(other, session).fold()
    assert many.nodes == one.nodes and many.relations == one.relations
    assert {k: v for k, v in many.unresolved.items() if v["state"] == "open"} == \
           {k: v for k, v in one.unresolved.items() if v["state"] == "open"}


def test_the_same_landed_evidence_writes_the_same_round_bytes(small_copy: Path, tmp_path: Path) -> None:
    session = sorted(p.name for p in small_copy.iterdir() if p.is_dir() and not p.name.startswith("_"))[0]
    first = parse_session(small_copy, session).rounds[0]
    second_root = tmp_path / "again"
    second_root.mkdir()
    shutil.copytree(small_copy / session, second_root / session)
    second = parse_session(second_root, session).rounds[0]
    assert first.name == second.name and first.read_bytes() == second.read_bytes()
