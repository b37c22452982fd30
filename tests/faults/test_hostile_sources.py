"""Hostile sources: each gets its named outcome, and nothing already landed is lost or changed.

The sources are Claude Code transcripts (the adapter users run most); each case starts from a
real corpus session, copied, then made hostile.
"""

from __future__ import annotations

import builtins
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from asz_core.context import PassSummary
from asz_core.testing import PassRunner
from tests.helpers import records_of, temp_files

SLUG = "-Users-ingo-projects-irrlicht--claude-worktrees-228"
SESSION = "ef21e42a-0206-4578-8b08-8a767d47f5fd"


@pytest.fixture
def projects(corpus: Path, tmp_path: Path) -> Path:
    target = tmp_path / "projects" / SLUG
    target.mkdir(parents=True)
    shutil.copyfile(corpus / "claude-code" / "projects" / SLUG / f"{SESSION}.jsonl", target / f"{SESSION}.jsonl")
    return tmp_path / "projects"


def _configure(asz_pass: PassRunner, projects: Path, **collector: object) -> None:
    entry: dict[str, object] = {"name": "claude-code-local", "source_root": str(projects), "exclude": []}
    if collector:
        entry["collector"] = collector
    asz_pass.configure(adapters=[entry])


def _landed_bytes(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in root.rglob("*.sd")}


@pytest.fixture
def landed_once(asz_pass: PassRunner, projects: Path) -> Iterator[tuple[Path, dict[Path, bytes]]]:
    """The session landed once; yields its transcript and the landed files' bytes."""
    _configure(asz_pass, projects)
    assert not asz_pass.run().failed
    yield projects / SLUG / f"{SESSION}.jsonl", _landed_bytes(asz_pass.root)


def _unchanged(root: Path, before: dict[Path, bytes]) -> None:
    after = _landed_bytes(root)
    for path, data in before.items():
        assert after[path] == data, f"{path} changed"
    assert temp_files(root) == []


@pytest.mark.parametrize(("name", "line"), [
    ("invalid UTF-8", b'{"type":"user","message":{"role":"user","content":"\xff\xfe"}}'),
    ("NUL bytes", b'{"type":"user",\x00"x":1}'),
    ("not JSON", b"Traceback (most recent call last):"),
    ("nested 10,000 deep", b'{"type":"user","x":' + b"[" * 10_000 + b"]" * 10_000 + b"}"),
])
def test_a_bad_line_lands_as_an_unknown_part_and_the_lines_after_it_still_land(
        name: str, line: bytes, asz_pass: PassRunner, landed_once: tuple[Path, dict[Path, bytes]],
        assert_root_verifies) -> None:  # type: ignore[no-untyped-def]
    transcript, before = landed_once
    good = b'{"type":"system","subtype":"turn_duration","durationMs":5,"uuid":"u-after"}'
    with open(transcript, "ab") as f:
        f.write(line + b"\n" + good + b"\n")
    summary = asz_pass.run()
    assert summary.totals.records == 2 and not summary.failed, name
    bad, after = [r for _, r in records_of(asz_pass.root, SESSION)][-2:]
    assert [p.k for p in bad.parts] == ["unknown"] and bad.parts[0].raw() == line
    assert after.id == "u-after"
    _unchanged(asz_pass.root, before)
    assert_root_verifies(asz_pass.root)


def test_a_50_mb_line_lands_alone_and_reduced(asz_pass: PassRunner, landed_once: tuple[Path, dict[Path, bytes]],
                                               assert_root_verifies) -> None:  # type: ignore[no-untyped-def]
    transcript, before = landed_once
    shot = {"type": "user", "uuid": "u-shot", "message": {"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "A" * 50_000_000}}]}}
    with open(transcript, "ab") as f:
        f.write(orjson.dumps(shot) + b"\n")
    summary = asz_pass.run()
    assert summary.totals.records == 1 and summary.totals.landed == 1
    record = [r for _, r in records_of(asz_pass.root, SESSION)][-1]
    assert record.id == "u-shot" and record.bytes > 50_000_000
    assert record.parts[0].k == "media" and record.parts[0].state == "too_large" and record.parts[0].sha256
    _unchanged(asz_pass.root, before)
    assert_root_verifies(asz_pass.root)


def test_a_truncated_file_is_a_conflict(asz_pass: PassRunner, landed_once: tuple[Path, dict[Path, bytes]]) -> None:
    transcript, before = landed_once
    data = transcript.read_bytes()
    transcript.write_bytes(data[: len(data) // 2])
    summary = asz_pass.run()
    assert summary.totals.conflicts == 1 and summary.failed
    _unchanged(asz_pass.root, before)


def test_a_file_rewritten_in_place_with_the_same_size_is_a_conflict(
        asz_pass: PassRunner, landed_once: tuple[Path, dict[Path, bytes]]) -> None:
    transcript, before = landed_once
    data = bytearray(transcript.read_bytes())
    data[10] = ord("X") if data[10] != ord("X") else ord("Y")
    transcript.write_bytes(bytes(data) + b'{"type":"mode","mode":"normal"}\n')
    summary = asz_pass.run()
    assert summary.totals.conflicts == 1 and summary.totals.records == 0
    _unchanged(asz_pass.root, before)


def test_a_file_replaced_by_a_symlink_to_etc_passwd_is_not_read(
        asz_pass: PassRunner, landed_once: tuple[Path, dict[Path, bytes]]) -> None:
    transcript, before = landed_once
    transcript.unlink()
    transcript.symlink_to("/etc/passwd")
    summary = asz_pass.run()
    assert summary.totals.records == 0
    assert not any(b"root:" in p.read_bytes() for p in asz_pass.root.rglob("*.sd"))
    _unchanged(asz_pass.root, before)


@pytest.mark.parametrize("name", ["..%2F..%2Fx.jsonl", "not-a-session.jsonl", "..jsonl", "_provider.jsonl"])
def test_a_session_file_not_named_like_a_session_is_refused(name: str, asz_pass: PassRunner,
                                                            projects: Path, tmp_path: Path) -> None:
    shutil.copyfile(projects / SLUG / f"{SESSION}.jsonl", projects / SLUG / name)
    (projects / SLUG / f"{SESSION}.jsonl").unlink()
    _configure(asz_pass, projects)
    summary = asz_pass.run()
    assert summary.totals.records == 0 and not summary.failed
    assert not any(p.name == "x" for p in tmp_path.rglob("x"))
    assert not asz_pass.root.exists() or [p for p in asz_pass.root.iterdir() if not p.name.startswith(".")] == []


@pytest.mark.parametrize("agent", ["agent-..%2F..%2Fx", "agent-..", "agent-xyz", "agent-a1234567890abcdefg"])
def test_an_agent_file_not_named_like_an_agent_is_refused(agent: str, asz_pass: PassRunner, projects: Path,
                                                          tmp_path: Path) -> None:
    sub = projects / SLUG / SESSION / "subagents"
    sub.mkdir(parents=True)
    (sub / f"{agent}.jsonl").write_bytes(b'{"type":"user","uuid":"x"}\n')
    _configure(asz_pass, projects)
    summary = asz_pass.run()
    assert summary.totals.unreadable >= 1 and not summary.failed
    streams = sorted(p.name for p in (asz_pass.root / SESSION / "streams").iterdir())
    assert streams == ["main"]


def test_a_source_deleted_between_discover_and_land(asz_pass: PassRunner, projects: Path) -> None:
    _configure(asz_pass, projects)
    claim = asz_pass.host.claim

    def claim_then_delete(name, ctx, found):  # type: ignore[no-untyped-def]
        claims = list(claim(name, ctx, found))  # every session discovered and claimed first
        (projects / SLUG / f"{SESSION}.jsonl").unlink()
        return claims

    asz_pass.host.claim = claim_then_delete  # type: ignore[method-assign]
    summary: PassSummary = asz_pass.run()
    assert summary.totals.errors == 0 and summary.totals.records == 0


def test_an_unreadable_file_is_counted_and_not_landed(asz_pass: PassRunner, projects: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    transcript = projects / SLUG / f"{SESSION}.jsonl"
    if os.geteuid() != 0:
        transcript.chmod(0o000)
    else:  # root reads a mode-000 file anyway: make opening it fail as it would for its owner
        real_open = builtins.open
        real_os_open = os.open

        def refusing_open(file, *args, **kwargs):  # type: ignore[no-untyped-def]
            if str(file) == str(transcript):
                raise PermissionError(13, "Permission denied", str(file))
            return real_open(file, *args, **kwargs)

        def refusing_os_open(file, *args, **kwargs):  # type: ignore[no-untyped-def]
            if str(file) == str(transcript):
                raise PermissionError(13, "Permission denied", str(file))
            return real_os_open(file, *args, **kwargs)
        monkeypatch.setattr(builtins, "open", refusing_open)
        monkeypatch.setattr(os, "open", refusing_os_open)
    _configure(asz_pass, projects)
    summary = asz_pass.run()
    assert summary.totals.unreadable == 1 and summary.totals.records == 0 and not summary.failed


def test_two_passes_started_at_once_one_runs_and_the_other_names_the_holder(
        projects: Path, tmp_path: Path) -> None:
    runner = PassRunner(tmp_path, tmp_path / "root")
    _configure(runner, projects)
    cli = [sys.executable, "-m", "asz_core.cli", "run", "--config", str(runner.config_path)]
    # the first pass stops for three seconds at its first install, holding the root
    first = subprocess.Popen(cli, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env={**os.environ, "ASZ_FAULT": "stall:install:1"})
    while not (runner.root / ".lock").exists() or not (runner.root / ".lock").read_text():
        time.sleep(0.01)  # not a busy loop: under xdist it would take a CPU from the other worker
    second = subprocess.run(cli, capture_output=True, text=True, check=False)
    _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert second.returncode == 3 and f"pid {first.pid}" in second.stderr
    waited = subprocess.run([*cli, "--wait"], capture_output=True, text=True, check=False)
    assert waited.returncode == 0 and " landed=0 " in waited.stdout
