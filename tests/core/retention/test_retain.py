"""``storage.retention``: a landed file gives way to its skeleton once it is old enough and the
receiver has it; the root still verifies, and collection carries on as if nothing went."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from asz_core.retention.plan import session_files
from asz_core.retention.policy import RetentionPolicy, parse_age
from asz_core.retention.receipts import NO_RECEIVER
from asz_core.retention.remove import removed_header
from asz_core.retention.retain import retain_root
from asz_core.scenario.receiver import GrpcReceiver
from asz_core.sessiondata import open_file
from asz_core.testing import PassRunner
from asz_core.verify import verify_root
from tests.core.retention.conftest import configure
from tests.helpers import run_cli, temp_files

NS = 1_000_000_000


def _files(root: Path, suffix: str) -> list[Path]:
    return sorted(root.rglob(f"*{suffix}"))


def _asz(*args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args)


def test_the_age_takes_days_hours_minutes_and_seconds_and_minus_one_is_off() -> None:
    assert parse_age(-1) is None and parse_age("-1") is None
    assert parse_age(0) == 0
    assert parse_age("1d12h") == 36 * 3600 * NS and parse_age("90s") == 90 * NS
    for bad in ("", "12", "1h1d", "-2", "3w"):
        try:
            parse_age(bad)
        except ValueError:
            continue
        raise AssertionError(f"{bad!r} was taken for an age")


def test_a_retention_key_the_schema_does_not_know_is_refused_with_its_line(tmp_path: Path) -> None:
    config = tmp_path / "asz.yaml"
    config.write_text("storage:\n  retention:\n    metadata_only_after: 3w\n    keep: true\n")
    done = _asz("config", "--config", str(config))
    assert done.returncode == 2
    assert "storage.retention.keep: unknown key" in done.stderr + done.stdout
    assert "storage.retention.metadata_only_after" in done.stderr + done.stdout


def test_a_pass_replaces_every_file_the_receiver_accepted_by_its_skeleton(
        asz_pass: PassRunner, projects: Path, receiver: GrpcReceiver,
        assert_root_verifies: Callable[[Path], None]) -> None:
    configure(asz_pass, projects, endpoint=receiver.endpoint)
    summary = asz_pass.run()
    assert not summary.failed, summary.as_dict()
    root = asz_pass.root
    assert _files(root, ".sd") == []
    skeletons = _files(root, ".sk")
    assert len(skeletons) == summary.totals.landed == len(receiver.records) > 3
    sent = {r.file: r for r in receiver.records}
    for skeleton in skeletons:
        removed = removed_header(skeleton)
        relpath = skeleton.relative_to(root).with_suffix(".sd").as_posix()
        assert removed["receiver"] == "accepted" and removed["generation"] == 1
        assert removed["owner"] == f"grpc:%2F%2F{receiver.endpoint}||me@laptop"
        assert hashlib_of(sent[relpath].body) == removed["digest"]
        assert removed["size"] == len(sent[relpath].body)
        assert os.stat(skeleton).st_mode & 0o777 == 0o400
    assert temp_files(root) == []
    assert_root_verifies(root)


def hashlib_of(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def test_a_skeleton_keeps_every_record_and_part_in_place_and_no_text(
        asz_pass: PassRunner, projects: Path, receiver: GrpcReceiver) -> None:
    configure(asz_pass, projects, endpoint=receiver.endpoint)
    asz_pass.run()
    sent = {r.file: r.body for r in receiver.records}
    for skeleton in _files(asz_pass.root, ".sk"):
        body = sent[skeleton.relative_to(asz_pass.root).with_suffix(".sd").as_posix()]
        landed = [orjson.loads(line) for line in body.splitlines()[1:-1]]
        kept = list(open_file(skeleton))
        assert [(r.ord, r.off, r.bytes, r.id, r.parent, r.time) for r in kept] == [
            (r["ord"], r["off"], r["bytes"], r.get("id"), r.get("parent"), r.get("time")) for r in landed]
        for record, original in zip(kept, landed, strict=True):
            assert [p.k for p in record.parts] == [p["k"] for p in original.get("parts", [])]
            assert all(p.text is None and p.state in ("removed", "too_large") for p in record.parts)


def test_a_later_pass_lands_nothing_and_a_resumed_source_lands_only_its_new_lines(
        asz_pass: PassRunner, projects: Path, receiver: GrpcReceiver,
        assert_root_verifies: Callable[[Path], None]) -> None:
    configure(asz_pass, projects, endpoint=receiver.endpoint)
    first = asz_pass.run()
    taken = len(receiver.records)
    again = asz_pass.run()
    assert again.totals.landed == 0 and len(receiver.records) == taken
    transcript = next((projects / "-Users-ingo-projects-irrlicht--claude-worktrees-228").glob("*.jsonl"))
    lines = transcript.read_bytes().splitlines()
    last = orjson.loads(lines[-2])
    new = dict(last, uuid="0b0b0b0b-0000-4000-8000-000000000001", parentUuid=last["uuid"],
               timestamp="2026-04-26T09:57:00.000Z")
    with transcript.open("ab") as f:
        f.write(orjson.dumps(new) + b"\n")
    resumed = asz_pass.run()
    assert resumed.totals.landed == 1, resumed.as_dict()
    newest = receiver.records[-1]
    records = [orjson.loads(line) for line in newest.body.splitlines()[1:-1]]
    assert [r["ord"] for r in records] == [len(lines) + 1] and records[0]["id"] == new["uuid"]
    assert first.totals.landed + 1 == len(_files(asz_pass.root, ".sk"))
    assert_root_verifies(asz_pass.root)


def test_nothing_goes_before_the_receiver_has_it_unless_the_user_says_local_only(
        asz_pass: PassRunner, projects: Path, assert_root_verifies: Callable[[Path], None]) -> None:
    configure(asz_pass, projects)
    summary = asz_pass.run()
    landed = _files(asz_pass.root, ".sd")
    assert len(landed) == summary.totals.landed and _files(asz_pass.root, ".sk") == []
    result = retain_root(asz_pass.root, RetentionPolicy(after_ns=0), NO_RECEIVER, time.time_ns())
    assert result.plan.kept["unconfirmed"] == len(landed) and not result.removed
    result = retain_root(asz_pass.root, RetentionPolicy(after_ns=0, local_only=True), NO_RECEIVER,
                         time.time_ns())
    assert len(result.removed) == len(landed) and _files(asz_pass.root, ".sd") == []
    assert {removed_header(p)["receiver"] for p in _files(asz_pass.root, ".sk")} == {"unconfirmed"}
    assert result.freed > 0
    assert_root_verifies(asz_pass.root)


def test_a_session_stays_until_its_last_record_is_as_old_as_the_policy_says(
        asz_pass: PassRunner, projects: Path) -> None:
    configure(asz_pass, projects)
    asz_pass.run()
    session = "ef21e42a-0206-4578-8b08-8a767d47f5fd"
    last = max(r.time for p in _files(asz_pass.root / session, ".sd") for r in open_file(p) if r.time)
    from asz_core.sessiondata.times import parse_instant

    due = parse_instant(last)
    assert due is not None
    policy = RetentionPolicy(after_ns=24 * 3600 * NS, local_only=True)
    early = retain_root(asz_pass.root, policy, NO_RECEIVER, due + 24 * 3600 * NS - NS, sessions=[session])
    assert not early.removed and early.plan.kept["young"] >= 1
    assert early.plan.next_ns == due + 24 * 3600 * NS
    on_time = retain_root(asz_pass.root, policy, NO_RECEIVER, due + 24 * 3600 * NS, sessions=[session])
    assert on_time.removed and not _files(asz_pass.root / session, ".sd")


def test_a_file_the_receiver_partly_rejected_stays(asz_pass: PassRunner, projects: Path,
                                                   receiver: GrpcReceiver) -> None:
    receiver.partial_rejects = 1
    receiver.default = "partial"
    configure(asz_pass, projects, endpoint=receiver.endpoint)
    summary = asz_pass.run()
    assert len(_files(asz_pass.root, ".sd")) == summary.totals.landed and not _files(asz_pass.root, ".sk")
    assert asz_pass.run().totals.landed == 0


def test_retain_dry_run_lists_what_would_go_and_changes_nothing(
        asz_pass: PassRunner, projects: Path) -> None:
    config = configure(asz_pass, projects, local_only=True, after=-1)
    asz_pass.run()  # retention off: the pass removes nothing
    before = {p: p.read_bytes() for p in _files(asz_pass.root, ".sd")}
    assert before
    config.write_text(config.read_text().replace("metadata_only_after: -1", "metadata_only_after: 0"))
    done = _asz("retain", "--config", str(config), "--dry-run", "--json")
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    assert {f["path"] for f in listed["files"]} == {p.relative_to(asz_pass.root).as_posix() for p in before}
    assert listed["freed"] == sum(len(b) for b in before.values())
    assert {p: p.read_bytes() for p in _files(asz_pass.root, ".sd")} == before
    assert not _files(asz_pass.root, ".sk")
    done = _asz("retain", "--config", str(config))
    assert done.returncode == 0 and "removed" in done.stdout and not _files(asz_pass.root, ".sd")


def test_a_second_removal_of_a_session_counts_the_next_generation(
        asz_pass: PassRunner, projects: Path, assert_root_verifies: Callable[[Path], None]) -> None:
    configure(asz_pass, projects, local_only=True)
    asz_pass.run()
    transcript = next((projects / "-Users-ingo-projects-irrlicht--claude-worktrees-228").glob("*.jsonl"))
    last = orjson.loads(transcript.read_bytes().splitlines()[-2])
    with transcript.open("ab") as f:
        f.write(orjson.dumps(dict(last, uuid="0c0c0c0c-0000-4000-8000-000000000002")) + b"\n")
    asz_pass.run()
    generations = sorted(int(removed_header(p)["generation"])  # type: ignore[call-overload]
                         for p in _files(asz_pass.root / "ef21e42a-0206-4578-8b08-8a767d47f5fd", ".sk"))
    assert generations[0] == 1 and generations[-1] == 2
    assert_root_verifies(asz_pass.root)


def test_a_skeleton_and_its_landed_file_both_there_are_read_as_the_landed_file(
        asz_pass: PassRunner, projects: Path, assert_root_verifies: Callable[[Path], None]) -> None:
    from asz_core.root.skeletons import land_skeleton
    from asz_core.sessiondata.skeleton import Removal

    configure(asz_pass, projects)
    asz_pass.run()
    landed = _files(asz_pass.root, ".sd")[0]
    land_skeleton(landed, Removal(at="2026-12-01T00:00:00Z"))
    # no "seq twice": the landed file is read (the spec's "Skeletons"; sdcheck does not allow
    # this in-between state, so only verify judges it)
    assert not [p for r in verify_root(asz_pass.root) for p in r.problems]
    files = session_files(landed.parent.parent.parent if landed.parent.name != "provider_body"
                          else landed.parent.parent)
    assert any(set(k) == {"sd", "sk"} for k in files.values())
    result = retain_root(asz_pass.root, RetentionPolicy(), NO_RECEIVER, 0)  # off, yet it finishes
    assert [c.landed for c in result.removed] == [landed] and result.removed[0].finishing
    assert not landed.exists()
    assert_root_verifies(asz_pass.root)


def _shape(doc: dict[str, Any]) -> object:
    """What a conversation's structure is: its streams, and its trees' nodes without content."""
    nodes = []
    stack = [*doc["talks"], *doc["loose"]]
    while stack:
        node = stack.pop()
        nodes.append((node["id"], node["kind"], node.get("stream"), node.get("ref"), node.get("usage")))
        stack.extend(node.get("children", []))
    return [(s["id"], s["role"], s["records"]) for s in doc["streams"]], nodes


def test_the_view_of_every_session_keeps_its_structure_and_says_what_was_removed(
        asz_pass: PassRunner, projects: Path) -> None:
    from asz_core.assembly.parse import parse_root
    from asz_core.view import build_view

    config = configure(asz_pass, projects, after=-1, local_only=True)
    asz_pass.run()
    assert not [r for r in parse_root(asz_pass.root) if r.outcome]
    sessions = sorted(p for p in asz_pass.root.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))
    before = {s.name: _shape(build_view(asz_pass.root, s.name)) for s in sessions}
    retain_root(asz_pass.root, RetentionPolicy(after_ns=0, local_only=True), NO_RECEIVER, time.time_ns())
    for session in sessions:
        doc = build_view(asz_pass.root, session.name)
        assert _shape(doc) == before[session.name], session.name
        assert all(f["file"].endswith(".sk") for f in doc["files"] if f["format"] == "sd")
    done = _asz("view", "--config", str(config), sessions[0].name)
    assert done.returncode == 0 and "only their skeletons remain" in done.stdout


def test_the_record_times_are_noted_once_and_a_line_a_kill_cut_short_is_not_believed(
        asz_pass: PassRunner, projects: Path) -> None:
    from asz_core.retention.times import NOTE

    configure(asz_pass, projects, after=-1)
    asz_pass.run()
    session = asz_pass.root / "ef21e42a-0206-4578-8b08-8a767d47f5fd"
    policy = RetentionPolicy(after_ns=3650 * 24 * 3600 * NS, local_only=True)  # ten years: all young
    dry = retain_root(asz_pass.root, policy, NO_RECEIVER, time.time_ns(), dry_run=True)
    assert not (session / NOTE).exists() and dry.plan.kept["young"]
    kept = retain_root(asz_pass.root, policy, NO_RECEIVER, time.time_ns())
    lines = (session / NOTE).read_text().splitlines()
    assert len(lines) == 1 and lines[0].endswith(" .") and kept.plan.next_ns is not None
    stem = lines[0].split(" ")[0]
    (session / NOTE).write_text(f"{stem} 1 1")  # torn: would say the session is from 1970
    again = retain_root(asz_pass.root, policy, NO_RECEIVER, time.time_ns())
    assert not again.removed and (session / NOTE).read_text().splitlines() == lines


def test_a_provider_body_only_a_skeleton_holds_is_reported_removed_not_damaged(
        asz_pass: PassRunner, projects: Path, corpus: Path, tmp_path: Path,
        assert_root_verifies: Callable[[Path], None]) -> None:
    from tests.provider_support import bodies_by_session, copy_bodies

    requests = bodies_by_session(corpus / "provider-bodies")["a6357d32-308a-4030-84d4-59744b5438d1"]
    responses = [p.with_name(p.name.replace(".request.", ".response.")) for p in requests]
    copy_bodies([*requests, *(p for p in responses if p.is_file())], tmp_path / "bodies")
    configure(asz_pass, projects, after=-1, bodies=tmp_path / "bodies")
    summary = asz_pass.run()
    assert not summary.failed, summary.as_dict()
    bodies = list(asz_pass.root.glob("*/provider_body/*.sd"))
    assert bodies
    retain_root(asz_pass.root, RetentionPolicy(after_ns=0, local_only=True), NO_RECEIVER, time.time_ns())
    assert not list(asz_pass.root.glob("*/provider_body/*.sd"))
    (report,) = verify_root(asz_pass.root, ["a6357d32-308a-4030-84d4-59744b5438d1"])
    assert not report.problems and report.counts["provider_body_unavailable"] >= len(requests)
    assert any("kept only as skeletons" in note for note in report.notes)
    assert_root_verifies(asz_pass.root)


def test_round_chains_still_verify_once_their_files_are_skeletons_and_a_new_round_binds_one(
        asz_pass: PassRunner, projects: Path, assert_root_verifies: Callable[[Path], None]) -> None:
    from asz_core.assembly.parse import parse_root

    configure(asz_pass, projects, after=-1)  # land, then parse: the rounds bind the .sd files
    assert not asz_pass.run().failed
    root = asz_pass.root
    assert parse_root(root, None) and _files(root, ".sf")
    configure(asz_pass, projects, local_only=True)
    assert not asz_pass.run().failed
    assert _files(root, ".sd") == [] and _files(root, ".sk")
    # a round's input digest binds the landed file's digest, which its skeleton keeps
    assert_root_verifies(root)
    line = (b'{"type":"user","uuid":"0f0f0f0f-0000-4000-8000-000000000001","sessionId":"s",'
            b'"message":{"role":"user","content":"one more"}}\n')
    with next(projects.rglob("*.jsonl")).open("ab") as fh:  # a new file lands beside skeletons
        fh.write(line)
    configure(asz_pass, projects, after=-1)
    assert not asz_pass.run().failed
    before = len(_files(root, ".sf"))
    assert not [r for r in parse_root(root, None) if r.outcome]
    assert len(_files(root, ".sf")) == before + 1
    assert_root_verifies(root)
