"""The parse that ends every ``run``: with nothing new it locks and reads nothing; after a change
the changed session is landed and parsed as always."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from asz_core.assembly.chain import Chain
from asz_core.assembly.parse import parse_root, parse_session
from asz_core.root.locks import FileLock
from asz_core.testing import PassRunner

pytestmark = pytest.mark.corpus

PROJECT = "-Users-ingo-projects-irrlicht"


# One session's chain shows each rule; every corpus session parsing cleanly is test_parse_corpus's.


def test_a_parse_with_nothing_new_takes_no_lock_and_reads_no_landed_file(session_copy: tuple[Path, str]) -> None:
    root, session = session_copy
    first = parse_root(root)
    parsed = [r for r in first if r.rounds]
    assert parsed and not [r for r in first if r.outcome]
    # a held lock would make any parse that needs the chain report busy: this one never asks
    with FileLock(Chain(root, session).dir / ".lock"):
        again = parse_session(root, session)
    assert (again.outcome, again.rounds, again.files_read) == ("", [], 0)
    assert again.through_seq == parsed[0].through_seq


def test_a_killed_writers_temporary_state_is_swept_by_the_next_parse_with_nothing_new(
        session_copy: tuple[Path, str]) -> None:
    root, session = session_copy
    assert parse_session(root, session).rounds
    chain = Chain(root, session)
    left = [chain.dir / ".tmp-000000000001-conversation.state", chain.rounds_dir / ".tmp-000000000002-r000009.sf"]
    for path in left:
        path.write_bytes(b"half")
    again = parse_session(root, session)
    assert (again.outcome, again.rounds) == ("", [])  # nothing new: no round, and the leftovers go
    assert not [p for p in left if p.exists()]


def test_a_head_round_that_is_not_at_the_watermark_is_folded_and_extended(session_copy: tuple[Path, str]) -> None:
    root, session = session_copy
    assert parse_session(root, session).rounds
    chain = Chain(root, session)
    head = chain.files()[-1].path
    head.chmod(0o600)
    head.write_bytes(head.read_bytes().replace(b'"through_seq":', b'"through_seq":9', 1))  # damaged
    again = parse_session(root, session)
    assert again.outcome == "refused"  # the fold, not the header line, decides


def test_a_changed_source_after_no_op_runs_still_lands_and_is_parsed(corpus: Path, tmp_path: Path) -> None:
    source = tmp_path / "projects" / PROJECT
    shutil.copytree(corpus / "claude-code" / "projects" / PROJECT, source)
    transcript = next(p for p in sorted(source.glob("*.jsonl")) if len(p.read_bytes().splitlines()) > 2)
    lines = transcript.read_bytes().splitlines(keepends=True)
    transcript.write_bytes(b"".join(lines[:-1]))
    runner = PassRunner(tmp_path, tmp_path / "root")
    runner.configure(adapters=[{"name": "claude-code-local", "source_root": str(tmp_path / "projects"),
                                "exclude": []}])
    root = tmp_path / "root"
    assert runner.run().fields()["landed"] > 0
    before = {r.session: r.through_seq for r in parse_root(root)}
    for _ in range(2):  # the second and third run after a change: nothing lands, nothing is parsed
        assert runner.run().fields()["landed"] == 0
        assert not any(r.rounds or r.outcome for r in parse_root(root))
    transcript.write_bytes(b"".join(lines))  # the last line arrives
    assert runner.run().fields()["landed"] == 1
    after = [r for r in parse_root(root) if r.rounds]
    assert len(after) == 1 and after[0].through_seq > before[after[0].session]
