"""Group commit with claude-code-local: what is made once a group has committed (each session's
settled entry stats its cursors) agrees with the root the commit leaves."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from asz_core.context import PassSummary
from asz_core.root import durable, group
from asz_core.testing import PassRunner

pytestmark = [pytest.mark.corpus,
              pytest.mark.skipif(not durable.can_sync_filesystem(), reason="group commit needs syncfs (Linux)")]


def test_the_corpus_landed_in_groups_has_each_settled_entry_as_the_root_says(
        cc_projects: Path, small_corpus: Path, slow: bool, run_local: Callable[..., PassSummary],
        asz_pass: PassRunner, monkeypatch: pytest.MonkeyPatch, opened: list[str],
        assert_root_verifies: Callable[[Path], None]) -> None:
    # the whole corpus (62 sessions) with --slow, its fifteen sessions in the default lane
    projects = cc_projects if slow else small_corpus / "claude-code" / "projects"
    sessions_in = sum(1 for _ in projects.glob("*/*.jsonl"))
    monkeypatch.setattr(group, "GROUP_SESSIONS", 4)  # several groups either way
    first = run_local(projects, collector={"workers": 1})
    assert not first.failed and first.totals.landed > sessions_in
    opened.clear()
    second = asz_pass.run()  # each settled entry stats the cursors as the commit left them
    assert opened == [] and second.totals.landed == 0
    assert_root_verifies(asz_pass.root)
