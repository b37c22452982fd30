"""A landed file swapped for a link after a reader found it by name: moved outside the root, a
link left at its name, between the listing that named it and the open that reads it. No reader
(``view``, ``verify`` and its chain check, a pass that appends to the stream, retention and its
plan) reads through it, whatever listed it; each says which file is a link and what to do, and
goes on with the rest.

The roots are the bundled demo's Claude Code sessions, landed and parsed, and a JSONL log landed
in small files; what a link points at lies outside the root and is checked to be exactly as it was.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from asz_core import verify
from asz_core.collect import append
from asz_core.retention import retain
from asz_core.retention.policy import RetentionPolicy
from asz_core.retention.receipts import NO_RECEIVER
from asz_core.root import storage
from asz_core.root.storage import landed_files
from asz_core.testing import PassRunner
from tests.faults import test_reader_links as reader
from tests.faults import test_root_state as state
from tests.faults.test_reader_links import SESSION
from tests.helpers import run_cli

#: the fixtures those modules land their roots with, used here by name
parsed, log, lagging = reader.parsed, state.log, state.lagging


def _swap(target: Path, outside: Path) -> bytes:
    """``target`` moved to ``outside`` and a link to it left at its name; the bytes moved."""
    shutil.move(target, outside)
    os.symlink(outside, target)
    return outside.read_bytes()


def _swapped_after_listing(monkeypatch: pytest.MonkeyPatch, target: Path, outside: Path) -> None:
    """Every listing of a session's landed files (``landed_files_in``, which ``landed_files``
    and the pass's own look for a lagging cursor call) names ``target`` as the first one did,
    and ``target`` is swapped for a link before its caller opens what it listed: a listing that
    is wrong every time, as a swap between listing and open makes one wrong once."""
    listed_by = storage.landed_files_in
    named: list[tuple[int, Path]] = []

    def listing(directory: Path, links: list[Path] | None = None) -> Iterator[tuple[int, Path]]:
        listed = list(listed_by(directory))  # as listed before the swap: no link among it
        if directory == target.parent:
            if not named:
                named.extend(entry for entry in listed if entry[1] == target)
                _swap(target, outside)
            listed += [entry for entry in named if entry not in listed]
        return iter(listed)
    for module in (storage, verify, append):
        monkeypatch.setattr(module, "landed_files_in", listing)


def _a_transcript(root: Path) -> Path:
    """The first landed file of the demo's test run under ``streams/`` (a transcript's)."""
    return next(path for _, path in sorted(landed_files(root / SESSION)) if path.parent.parent.name == "streams")


def test_view_names_a_landed_file_swapped_for_a_link_after_the_listing(
        parsed: Path, asz_pass: PassRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The document reads each listed file once, through the root: the link is refused, and
    ``view`` exits 1 naming it instead of showing what lies outside the root."""
    target, outside = _a_transcript(parsed), tmp_path / "outside.sd"
    before = target.read_bytes()
    _swapped_after_listing(monkeypatch, target, outside)
    done = run_cli("view", "--config", str(asz_pass.config_path), SESSION, "--json")
    assert done.returncode == 1, done.stdout[:200] + done.stderr
    assert f"{target} is a link" in done.stderr and "remove the link" in done.stderr, done.stderr
    assert target.is_symlink() and outside.read_bytes() == before


def test_verify_names_a_landed_file_swapped_for_a_link_after_the_listing(
        asz_pass: PassRunner, log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = min(landed_files(asz_pass.root / state.SESSION))[1]
    outside = tmp_path / "outside.sd"
    before = target.read_bytes()
    _swapped_after_listing(monkeypatch, target, outside)
    problems = [p for report in verify.verify_root(asz_pass.root, [state.SESSION]) for p in report.problems]
    linked = [p for p in problems if p.kind == "link" and p.path == str(target)]
    assert linked and "remove the link" in linked[0].message, problems
    assert target.is_symlink() and outside.read_bytes() == before


def test_a_pass_refuses_a_stream_whose_lagging_file_is_swapped_for_a_link(
        asz_pass: PassRunner, log: Path, lagging: list[Path], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The pass brings a lagging cursor forward from the newest file past it, read by name: a
    link there refuses the session, where reading it would take a file outside the root for
    what the stream landed."""
    target, outside = lagging[-1], tmp_path / "outside.sd"
    before = target.read_bytes()
    _swapped_after_listing(monkeypatch, target, outside)
    state._grow(log, 3)
    summary = asz_pass.run()
    assert summary.totals.errors and summary.totals.records == 0, summary.errors
    assert all(f"{target} is a link" in str(e) and "remove the link" in str(e) for e in summary.errors), summary.errors
    assert outside.read_bytes() == before


def test_retention_leaves_a_landed_file_swapped_for_a_link_and_removes_the_others(
        parsed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Planned for removal, then swapped: its skeleton would be written from the file outside
    the root. It stays, said with what to do; the session's other files give way."""
    outside = tmp_path / "outside.sd"
    plan_root = retain.plan_root
    moved: dict[Path, bytes] = {}

    def plan_then_swap(*args: object, **kwargs: object) -> retain.Plan:
        plan = plan_root(*args, **kwargs)  # type: ignore[arg-type]
        target = next(c.landed for c in plan.remove if c.session == SESSION)
        moved[target] = _swap(target, outside)
        return plan
    monkeypatch.setattr(retain, "plan_root", plan_then_swap)
    result = retain.retain_root(parsed, RetentionPolicy(after_ns=0, local_only=True), NO_RECEIVER,
                                time.time_ns())
    [(target, before)] = moved.items()
    assert any(f"{target} is a link" in e and "it stays" in e for e in result.errors), result.errors
    assert target.is_symlink() and not target.with_suffix(".sk").exists()
    assert result.removed  # the other files, of this session and the others
    assert outside.read_bytes() == before


def test_verify_of_a_round_chain_says_its_landed_file_swapped_for_a_link_does_not_read(
        parsed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The chain's check digests every landed file a round consumed, by name: the link there is
    a problem of the round, named, and verify goes on, where the digest's refusal used to end it."""
    target, outside = _a_transcript(parsed), tmp_path / "outside.sd"
    before = target.read_bytes()
    _swapped_after_listing(monkeypatch, target, outside)
    problems = [p for report in verify.verify_root(parsed, [SESSION]) for p in report.problems]
    assert any(p.kind == "link" and p.path == str(target) for p in problems), problems
    unread = [p for p in problems if p.kind == "input digest" and "does not read" in p.message]
    assert unread and f"{target} is a link" in unread[0].message, problems
    assert outside.read_bytes() == before


def test_retention_plans_around_a_landed_file_swapped_for_a_link_after_the_listing(
        parsed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its digest, which the plan takes to ask the receiver, is refused: the file stays,
    counted unreadable, and the plan goes on to the session's other files (a session of several,
    so that the others still date it)."""
    session = max(storage.StorageRoot(parsed).sessions(), key=lambda s: len(list(landed_files(parsed / s))))
    target, outside = min(landed_files(parsed / session))[1], tmp_path / "outside.sd"
    before = target.read_bytes()
    _swapped_after_listing(monkeypatch, target, outside)
    plan = retain.plan_root(parsed, RetentionPolicy(after_ns=0, local_only=True), NO_RECEIVER, time.time_ns())
    assert plan.kept["unreadable"] == 1, plan.kept
    assert target not in {c.landed for c in plan.remove}
    assert any(c.session == session for c in plan.remove)
    assert outside.read_bytes() == before


def test_verify_names_a_link_planted_at_a_landed_files_name(parsed: Path, tmp_path: Path) -> None:
    """No listing takes the link for a landed file, so without a word for it verify would only
    say the stream's files are gone: it names the link, and what to do."""
    target, outside = _a_transcript(parsed), tmp_path / "outside.sd"
    before = _swap(target, outside)
    problems = [p for report in verify.verify_root(parsed, [SESSION]) for p in report.problems]
    linked = [p for p in problems if p.kind == "link" and p.path == str(target)]
    assert linked and "remove the link" in linked[0].message, problems
    assert outside.read_bytes() == before
