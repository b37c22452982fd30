"""The round chain: deltas, resolution, immutability, the lock, a crash, a lost file, tampering."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from asz_core.assembly.chain import Chain
from asz_core.assembly.chaincheck import check_chain
from asz_core.assembly.flow import RoundError, read_round
from asz_core.assembly.parse import parse_session
from asz_core.removal.scenario_root import delete_in_removed, move_to_removed
from asz_core.root.locks import FileLock
from asz_core.verify import verify_root

from .conftest import build_sd

pytestmark = pytest.mark.corpus


def test_an_unfinished_tool_is_open_in_one_round_and_resolved_in_the_next(scenarios: Path,
                                                                         tmp_path: Path) -> None:
    session = build_sd(scenarios / "unfinished-tool.yaml", tmp_path, through="open")
    first = parse_session(tmp_path, session)
    fold = Chain(tmp_path, session).fold()
    assert len(first.rounds) == 1
    assert fold.nodes["tool/s2-tool"]["attrs"]["result"] == "unavailable"
    assert [u["state"] for u in fold.unresolved.values()] == ["open"]
    build_sd(scenarios / "unfinished-tool.yaml", tmp_path)
    second = parse_session(tmp_path, session)
    fold = Chain(tmp_path, session).fold()
    assert len(second.rounds) == 1
    assert fold.nodes["tool/s2-tool"]["attrs"]["result"] == "available" and fold.revisions["tool/s2-tool"] == 2
    assert [u["state"] for u in fold.unresolved.values()] == ["resolved"]  # resolved, never dropped
    delta = read_round(second.rounds[0].read_bytes())
    assert delta.header["from_seq"] > 1 and len(delta.nodes) < len(fold.nodes)


def test_every_round_is_read_only_and_a_round_that_does_not_follow_the_head_is_refused(
        scenarios: Path, tmp_path: Path) -> None:
    session = build_sd(scenarios / "assembly.yaml", tmp_path)
    path = parse_session(tmp_path, session).rounds[0]
    assert os.stat(path).st_mode & 0o777 == 0o400
    chain = Chain(tmp_path, session)
    with pytest.raises(RoundError, match="head is round 1"):
        chain.publish(1, "0" * 64, path.read_bytes())
    assert [f.path for f in chain.files()] == [path]


def test_a_second_parser_writes_nothing_while_the_chain_is_locked(scenarios: Path, tmp_path: Path) -> None:
    session = build_sd(scenarios / "assembly.yaml", tmp_path)
    chain = Chain(tmp_path, session)
    with FileLock(chain.lock().path):
        busy = parse_session(tmp_path, session)
    assert busy.outcome == "busy" and not busy.rounds and not chain.files()
    assert parse_session(tmp_path, session).rounds


@pytest.mark.parametrize("parsed_before", [False, True], ids=["never parsed", "parsed before"])
def test_a_parse_that_takes_the_lock_after_a_removal_took_the_session_leaves_nothing_behind(
        scenarios: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parsed_before: bool) -> None:
    scenario = scenarios / "unfinished-tool.yaml"
    if parsed_before:
        assert parse_session(tmp_path, build_sd(scenario, tmp_path, through="open")).rounds
    session = build_sd(scenario, tmp_path)  # landed past what any chain holds: the parse has work
    taking = Chain.lock

    def removed_first(chain: Chain) -> FileLock:
        # a scenario removal between the parse's first look and its lock: the session directory,
        # then the chain, go through _removed/ as remove_session moves them
        for rel, name in ((session, session), (f"_conversations/{session}", f"{session}.chain")):
            if (tmp_path / rel).exists():
                move_to_removed(tmp_path, rel, name)
                delete_in_removed(tmp_path, name)
        return taking(chain)

    monkeypatch.setattr(Chain, "lock", removed_first)
    parsed = parse_session(tmp_path, session)
    assert (parsed.outcome, parsed.rounds) == ("", [])
    assert not (tmp_path / session).exists() and not (tmp_path / "_conversations" / session).exists()


def test_a_parser_killed_before_its_round_is_installed_leaves_no_round_and_the_next_writes_it(
        scenarios: Path, tmp_path: Path) -> None:
    session = build_sd(scenarios / "assembly.yaml", tmp_path)
    code = ("import sys; from pathlib import Path; from asz_core.assembly.parse import parse_session; "
            "parse_session(Path(sys.argv[1]), sys.argv[2])")
    env = {**os.environ, "ASZ_FAULT": "kill:round-install:1"}
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path), session], env=env, check=False)
    assert done.returncode == -9
    chain = Chain(tmp_path, session)
    assert not chain.files()
    assert [n for n in os.listdir(chain.rounds_dir) if n.startswith(".tmp-")]
    assert parse_session(tmp_path, session).rounds
    assert [n for n in os.listdir(chain.rounds_dir)] == [chain.files()[0].path.name]


def test_a_lost_landed_file_is_reported_by_round_and_sequence(scenarios: Path, tmp_path: Path) -> None:
    session = build_sd(scenarios / "assembly.yaml", tmp_path)
    parse_session(tmp_path, session)
    meta = next((tmp_path / session).glob("streams/*/meta-*.sd"))
    seq = int(meta.name.rsplit("-", 1)[1][:-3])
    meta.unlink()
    problems = check_chain(tmp_path, session)
    assert [(p.kind, p.round, p.seq) for p in problems] == [("lost file", 1, seq)]
    reported = [p for r in verify_root(tmp_path, [session]) for p in r.problems]
    assert any(p.kind == "lost file" and f"landed seq {seq}" in p.message for p in reported)
    # the structure survives in the rounds, and the chain still assembles as it did
    assert not parse_session(tmp_path, session).outcome


def test_a_changed_byte_in_a_round_is_rejected_by_the_fold_and_by_verify(scenarios: Path, tmp_path: Path) -> None:
    session = build_sd(scenarios / "assembly.yaml", tmp_path)
    path = parse_session(tmp_path, session).rounds[0]
    data = path.read_bytes().replace(b'"trigger":"external"', b'"trigger":"externaL"', 1)
    os.chmod(path, 0o600)
    path.write_bytes(data)
    with pytest.raises(RoundError, match="digest"):
        Chain(tmp_path, session).fold()
    assert [p.kind for p in check_chain(tmp_path, session)] == ["round broken"]
    refused = parse_session(tmp_path, session)
    assert refused.outcome == "refused" and "digest" in refused.message


def test_a_chain_built_under_another_policy_is_not_extended(scenarios: Path, tmp_path: Path) -> None:
    session = build_sd(scenarios / "growth.yaml", tmp_path, through="turn1")
    path = parse_session(tmp_path, session).rounds[0]
    lines = path.read_bytes().decode().splitlines()
    header = json.loads(lines[0])
    header["policy"] = "v1+idle=20m0s"
    from asz_core.assembly.flow import encode_round

    body = [json.loads(line) for line in lines[1:-1]]
    data, digest = encode_round({k: v for k, v in header.items() if k not in ("t", "schema")},
                                [b for b in body if b["t"] == "node"], [b for b in body if b["t"] == "relation"],
                                [b for b in body if b["t"] == "unresolved"])
    os.chmod(path, 0o600)
    path.unlink()
    Chain(tmp_path, session).publish(1, digest, data)
    build_sd(scenarios / "growth.yaml", tmp_path)
    refused = parse_session(tmp_path, session)
    assert refused.outcome == "refused" and "policy" in refused.message and not refused.rounds
