"""Links and fifos planted where the root's readers look: a conversation's chain (its directory,
``rounds/``, a round's name) and a landed file's name. No reader (the parse, ``view``, the
listing, ``verify``, ``push``, the removal's check of what was sent) reads, removes or waits
through one, whichever command it runs in; each says what it found.

The root is the bundled demo's Claude Code sessions, landed and parsed; what a link points at
lies outside the root and is checked to be exactly as it was.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from asz_core.assembly.chain import CONVERSATIONS, Chain
from asz_core.assembly.flow import RoundError
from asz_core.assembly.parse import parse_root, parse_session
from asz_core.root.storage import landed_files
from asz_core.testing import PassRunner
from asz_core.verify import verify_root
from asz_core.view import NoRounds
from asz_core.view.listing import list_sessions
from asz_core.view.rounds import read_chain
from tests.helpers import run_cli_forked

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo" / "claude-code" / "projects"
SESSION = "4f1c8a2e-9b3d-4e6f-8a1b-2c3d4e5f6a7b"  #: the demo's test run, parsed into one round
VICTIM = b"a file outside the root\n"


@pytest.fixture
def parsed(asz_pass: PassRunner) -> Path:
    """The demo's Claude Code sessions landed and parsed; returns the root."""
    asz_pass.configure(adapters=[{"name": "claude-code-local", "source_root": str(DEMO), "exclude": []}])
    assert not asz_pass.run().failed
    parse_root(asz_pass.root)
    assert Chain(asz_pass.root, SESSION).files()
    return asz_pass.root


def _move_out(place: Path, outside: Path) -> None:
    """``place`` moved to ``outside`` and a link to it left in its name, with a file named as a
    killed writer's temporary beside what was moved (what a sweep through the link would remove)."""
    shutil.move(place, outside)
    os.symlink(outside, place)
    for directory in (outside, *(p for p in outside.iterdir() if p.is_dir())):
        (directory / ".tmp-0123456789ab-victim").write_bytes(VICTIM)


def _untouched(outside: Path) -> bool:
    return all(p.read_bytes() == VICTIM for p in outside.rglob(".tmp-*")) and any(outside.rglob(".tmp-*"))


def test_a_conversation_reached_through_a_link_is_read_by_no_reader_and_verify_names_it(
        parsed: Path, tmp_path: Path) -> None:
    conversation = parsed / CONVERSATIONS / SESSION
    _move_out(conversation, tmp_path / "outside")
    with pytest.raises(RoundError, match="link"):
        Chain(parsed, SESSION).files()
    with pytest.raises(NoRounds, match="link"):
        read_chain(parsed, SESSION)
    assert next(row for row in list_sessions(parsed) if row["id"] == SESSION)["rounds"] == 0
    problems = [p for report in verify_root(parsed, [SESSION]) for p in report.problems]
    assert any("link" in p.message for p in problems), problems
    assert _untouched(tmp_path / "outside")


@pytest.mark.parametrize("linked", ["_conversations/S", "_conversations/S/rounds"])
def test_a_parse_past_a_linked_chain_removes_and_writes_nothing_through_it(
        parsed: Path, tmp_path: Path, linked: str) -> None:
    place = parsed / linked.replace("S", SESSION)
    outside = tmp_path / "outside"
    _move_out(place, outside)
    before = sorted(p.relative_to(outside) for p in outside.rglob("*"))
    _, newest = max(landed_files(parsed / SESSION))
    os.chmod(newest, 0o600)
    newest.unlink()  # the chain now reaches past the landed files: a parse has work to do
    result = parse_session(parsed, SESSION)
    assert result.outcome == "refused" and "link" in result.message, result
    assert sorted(p.relative_to(outside) for p in outside.rglob("*")) == before
    assert _untouched(outside)


def test_a_round_s_name_held_by_a_link_or_a_fifo_is_named_not_read(parsed: Path, tmp_path: Path) -> None:
    head = Chain(parsed, SESSION).files()[-1].path
    secret = tmp_path / "secret.sf"
    shutil.copyfile(head, secret)
    head.chmod(0o600)
    head.unlink()
    os.symlink(secret, head)
    with pytest.raises(RoundError, match=head.name):
        Chain(parsed, SESSION).files()
    head.unlink()
    os.mkfifo(head, 0o600)
    with pytest.raises(RoundError, match=head.name):
        Chain(parsed, SESSION).files()


def test_a_fifo_at_a_landed_file_s_name_never_makes_view_wait(parsed: Path, asz_pass: PassRunner) -> None:
    _, newest = max(landed_files(parsed / SESSION))
    os.chmod(newest, 0o600)
    newest.unlink()
    os.mkfifo(newest, 0o600)
    done = run_cli_forked("view", "--config", str(asz_pass.config_path), SESSION, "--json", timeout=60)
    # it answered: the fifo read empty, which is not what the round consumed, and it says so
    assert done.returncode == 1 and "no longer digest" in done.stderr.decode(), done.stderr.decode()


def test_a_parse_past_a_linked_evidence_cache_reads_and_removes_nothing_through_it(
        parsed: Path, tmp_path: Path) -> None:
    cache = parsed / SESSION / "index" / "assembly"
    assert any(cache.iterdir())  # the parse cached what it read of the landed files
    outside = tmp_path / "outside"
    _move_out(cache, outside)
    before = {p.name: p.read_bytes() for p in outside.iterdir()}
    shutil.rmtree(parsed / CONVERSATIONS / SESSION)  # the chain made again: a parse under its lock
    result = parse_session(parsed, SESSION)
    assert not result.outcome and result.rounds, result  # from the landed files themselves
    assert {p.name: p.read_bytes() for p in outside.iterdir()} == before
