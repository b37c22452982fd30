"""Settled Kiro sessions: a pass that finds a CLI or IDE session's files as it left them neither
locks nor lands it and counts the same; a session holding a database conversation is landed
every pass, and any change to a log or metadata document lands its session again."""

from __future__ import annotations

import os

import pytest
from kiro_helpers import CLI_ID, DB_ID, IDE_BUCKET, IDE_ID, configure

from asz_core.root import storage
from asz_core.root.settled import SETTLED_PREFIX

pytestmark = pytest.mark.corpus


@pytest.fixture
def opened(monkeypatch):
    """The sessions each pass opens (locks) for landing."""
    seen: list[str] = []
    real = storage.SessionHandle.__enter__

    def enter(self):
        seen.append(self.id)
        return real(self)

    monkeypatch.setattr(storage.SessionHandle, "__enter__", enter)
    return seen


def _counts(summary):
    return {k: v for k, v in summary.totals.as_dict().items() if k not in ("landed", "records", "bytes")}


def test_a_second_pass_lands_only_the_database_sessions_and_counts_the_same(
        asz_pass, kiro_copy, opened, assert_root_verifies):
    configure(asz_pass, kiro_copy)
    first = asz_pass.run()
    assert {CLI_ID, IDE_ID, DB_ID} <= set(opened) and first.totals.landed > 0
    assert (asz_pass.root / f"{SETTLED_PREFIX}kiro.state").is_file()
    opened.clear()
    second = asz_pass.run()
    assert CLI_ID not in opened and IDE_ID not in opened and DB_ID in opened
    assert second.totals.landed == 0 and _counts(second) == _counts(first)
    assert_root_verifies(asz_pass.root)


@pytest.mark.parametrize("which", ["cli-meta", "cli-log", "ide-meta", "ide-log"])
def test_a_touched_file_lands_its_session_again(asz_pass, kiro_copy, opened, which):
    configure(asz_pass, kiro_copy, database=False)
    first = asz_pass.run()
    opened.clear()
    asz_pass.run()
    unsettled = set(opened)  # sessions with something waiting or unreadable land every pass
    assert CLI_ID not in unsettled and IDE_ID not in unsettled
    sessions = kiro_copy / ".kiro" / "sessions"
    path = {"cli-meta": sessions / "cli" / f"{CLI_ID}.json",
            "cli-log": sessions / "cli" / f"{CLI_ID}.jsonl",
            "ide-meta": sessions / IDE_BUCKET / IDE_ID / "session.json",
            "ide-log": sessions / IDE_BUCKET / IDE_ID / "messages.jsonl"}[which]
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    opened.clear()
    second = asz_pass.run()
    assert set(opened) == unsettled | {CLI_ID if which.startswith("cli") else IDE_ID}
    assert _counts(second) == _counts(first)
    opened.clear()
    asz_pass.run()
    assert set(opened) == unsettled


def test_a_lost_cursor_lands_its_session_again(asz_pass, kiro_copy, opened, assert_root_verifies):
    configure(asz_pass, kiro_copy, database=False)
    asz_pass.run()
    (asz_pass.root / CLI_ID / "streams" / "main" / "meta.cursor").unlink()
    opened.clear()
    second = asz_pass.run()
    assert CLI_ID in opened and second.totals.conflicts == 0
    assert_root_verifies(asz_pass.root)
