"""``asz-pipeline repack``: a root re-cut to another file size holds every record byte for
byte, in order, verifies, shows the same conversations, and collection continues into it."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from asz_core.assembly.chain import Chain
from asz_core.repack import RepackRefused, repack_root
from asz_core.repack.structure import fold_structure
from asz_core.retention.plan import session_files
from asz_core.retention.policy import RetentionPolicy
from asz_core.retention.receipts import NO_RECEIVER
from asz_core.retention.retain import retain_root
from asz_core.sessiondata import open_file
from asz_core.testing import PassRunner
from asz_core.view import build_view
from tests.core.retention.conftest import configure
from tests.helpers import run_cli

SMALLEST = 4096  #: the smallest max_delta_bytes the configuration allows


def _chains(root: Path) -> dict[tuple[str, str, str], list[bytes]]:
    """(session, stream directory, kind) → every record's landed line, in seq order."""
    out: dict[tuple[str, str, str], list[bytes]] = {}
    for session in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
        files = session_files(session)
        for seq in sorted(files):
            path = files[seq].get("sd") or files[seq]["sk"]
            with open_file(path) as reader:
                key = (session.name, path.parent.relative_to(session).as_posix(), reader.header["kind"])
                out.setdefault(key, []).extend(line for line, _ in reader.raw_records())
    return out


def _conversation(doc: dict[str, Any]) -> object:
    """A view document without the file positions a repack renumbers: its streams, and its trees'
    nodes by kind, stream and what their records say."""
    nodes = []
    stack = [*doc["talks"], *doc["loose"]]
    while stack:
        node = stack.pop()
        nodes.append((node["kind"], node.get("stream"), node.get("text"), node.get("bytes"), node.get("usage"),
                      node.get("name"), node.get("result"), node["at"]))
        stack.extend(node.get("children", []))
    return [(s["id"], s["records"]) for s in doc["streams"]], sorted(nodes, key=repr)


def _asz(*args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args)


@pytest.fixture
def landed(asz_pass: PassRunner, projects: Path) -> Path:
    config = configure(asz_pass, projects, after=-1)
    assert not asz_pass.run().failed
    return config


def test_a_root_repacked_under_the_smallest_budget_holds_every_record_byte_identical(
        asz_pass: PassRunner, landed: Path, tmp_path: Path,
        assert_root_verifies: Callable[[Path], None]) -> None:
    assert _asz("parse", "--config", str(landed)).returncode == 0
    dest = tmp_path / "dest"
    done = _asz("repack", "--config", str(landed), str(dest), "--max-delta-bytes", str(SMALLEST), "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["sessions"]
    assert len(rows) == 3 and all(r["files_out"] > r["files_in"] for r in rows if r["bytes"] > 2 * SMALLEST)
    assert all(r["rounds"] >= 1 and not r["refused"] for r in rows), rows
    assert _chains(dest) == _chains(asz_pass.root)
    assert sum(r["records"] for r in rows) == sum(len(v) for v in _chains(dest).values())
    for path in dest.rglob("*.sd"):  # only a record larger than the budget makes a larger file
        assert path.stat().st_size <= SMALLEST or sum(1 for _ in open_file(path)) == 1, path
    assert_root_verifies(dest)
    for session in (p for p in asz_pass.root.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
        assert _conversation(build_view(dest, session.name)) == _conversation(build_view(asz_pass.root, session.name))


def test_a_repacked_root_folds_to_the_same_conversations_at_new_positions(
        asz_pass: PassRunner, landed: Path, tmp_path: Path,
        assert_root_verifies: Callable[[Path], None]) -> None:
    assert _asz("parse", "--config", str(landed)).returncode == 0
    dest = tmp_path / "dest"
    rows = repack_root(asz_pass.root, dest, lambda _: SMALLEST, time.time_ns())
    assert [r.refused for r in rows] == ["", "", ""] and all(r.rounds for r in rows)
    assert_root_verifies(dest)  # verify reads the new chains against the new files
    moved = 0
    for row in rows:
        before, after = Chain(asz_pass.root, row.session).fold(), Chain(dest, row.session).fold()
        assert after.head is not None and after.head["through_seq"] == max(session_files(dest / row.session))
        # the same entities of the same kinds under the same parents, the same relations, once
        # every position is named by the record it points at
        assert fold_structure(dest, row.session) == fold_structure(asz_pass.root, row.session)
        assert len(after.nodes) == len(before.nodes) and len(after.relations) == len(before.relations)
        moved += len(set(after.nodes) ^ set(before.nodes))
    assert moved, "no id names a position: the comparison above did not need to name records"


def test_collection_continues_into_the_repacked_root(asz_pass: PassRunner, landed: Path, projects: Path,
                                                      tmp_path: Path,
                                                      assert_root_verifies: Callable[[Path], None]) -> None:
    dest = tmp_path / "dest"
    repack_root(asz_pass.root, dest, lambda _: SMALLEST, time.time_ns())
    runner = PassRunner(tmp_path / "work", dest)
    (tmp_path / "work").mkdir()
    configure(runner, projects, after=-1, max_delta=SMALLEST)
    assert runner.run().totals.landed == 0
    transcript = next((projects / "-Users-ingo-projects-irrlicht--claude-worktrees-456").glob("*.jsonl"))
    lines = transcript.read_bytes().splitlines()
    last = orjson.loads(lines[-1])
    with transcript.open("ab") as f:
        f.write(orjson.dumps(dict(last, uuid="0d0d0d0d-0000-4000-8000-000000000003")) + b"\n")
    summary = runner.run()
    assert summary.totals.landed == 1 and summary.totals.records == 1, summary.as_dict()
    assert_root_verifies(dest)


def test_a_repack_into_a_directory_that_is_not_empty_is_refused(asz_pass: PassRunner, landed: Path,
                                                                tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "mine.txt").write_text("keep me")
    with pytest.raises(RepackRefused, match="not empty"):
        repack_root(asz_pass.root, dest, lambda _: SMALLEST, time.time_ns())
    assert [p.name for p in dest.iterdir()] == ["mine.txt"]


def test_a_retained_root_repacks_its_skeletons_whole_and_one_session_alone(
        asz_pass: PassRunner, landed: Path, tmp_path: Path,
        assert_root_verifies: Callable[[Path], None]) -> None:
    retain_root(asz_pass.root, RetentionPolicy(after_ns=0, local_only=True), NO_RECEIVER, time.time_ns(),
                sessions=["ef21e42a-0206-4578-8b08-8a767d47f5fd"])
    dest = tmp_path / "dest"
    rows = repack_root(asz_pass.root, dest, lambda _: SMALLEST, time.time_ns(),
                       sessions=["ef21e42a-0206-4578-8b08-8a767d47f5fd", "a6357d32-308a-4030-84d4-59744b5438d1"])
    assert [r.refused for r in rows] == ["", ""]
    names = sorted(r.session for r in rows)
    assert sorted(p.name for p in dest.iterdir() if not p.name.startswith((".", "_"))) == names
    assert sorted(p.name for p in (dest / "_conversations").iterdir()) == names
    assert {k: v for k, v in _chains(asz_pass.root).items() if k[0] in {r.session for r in rows}} == _chains(dest)
    assert list(dest.rglob("*.sk"))
    assert_root_verifies(dest)
