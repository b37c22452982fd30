"""Kiro IDE directories that are not read are named and counted: a link where a workspace
bucket or a session directory would be, a directory in a bucket not named ``sess_<uuid>``."""

from __future__ import annotations

import shutil
from pathlib import Path

from kiro_helpers import IDE_BUCKET, IDE_ID, configure

from asz_core.testing import PassRunner


def test_links_and_odd_directories_among_ide_sessions_are_counted_unreadable(
        asz_pass: PassRunner, kiro_copy: Path, tmp_path: Path) -> None:
    configure(asz_pass, kiro_copy)
    before = asz_pass.run().totals.unreadable
    sessions = kiro_copy / ".kiro" / "sessions"
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(sessions / IDE_BUCKET, elsewhere / "bucket")
    (sessions / "linked-bucket").symlink_to(elsewhere / "bucket")
    (sessions / IDE_BUCKET / "sess_00000000-0000-4000-8000-000000000001").symlink_to(
        elsewhere / "bucket" / IDE_ID)
    (sessions / IDE_BUCKET / "workspace-notes").mkdir()
    asz_pass.reporter.warnings.clear()
    assert asz_pass.run().totals.unreadable == before + 3
    warnings = asz_pass.reporter.warnings
    for needle in ("linked-bucket", "sess_00000000-0000-4000-8000-000000000001", "workspace-notes"):
        assert any(needle in w for w in warnings), needle
    assert not (asz_pass.root / "sess_00000000-0000-4000-8000-000000000001").exists()
