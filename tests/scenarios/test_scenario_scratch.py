"""Where ``scenario check`` works when ``--out`` names no directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from asz_core.scenario import scratch


def test_a_check_works_in_the_memory_directory_when_it_has_room(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TMPDIR", raising=False)
    made = scratch.make_scratch("asz-scenario-", memory=str(tmp_path))
    assert made.parent == tmp_path
    assert made.is_dir() and not any(made.iterdir())
    assert made.stat().st_mode & 0o077 == 0  # owner-only, as mkdtemp makes it


def test_tmpdir_set_by_the_user_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chosen = tmp_path / "chosen"
    chosen.mkdir()
    monkeypatch.setenv("TMPDIR", str(chosen))
    monkeypatch.setattr("tempfile.tempdir", None)  # tempfile reads $TMPDIR once, and caches it
    assert scratch.scratch_parent(str(tmp_path)) is None
    assert scratch.make_scratch("asz-scenario-", memory=str(tmp_path)).parent == chosen


def test_no_memory_directory_or_too_little_room_falls_back_to_the_default(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TMPDIR", raising=False)
    assert scratch.scratch_parent(str(tmp_path / "missing")) is None
    monkeypatch.setattr(scratch, "MEMORY_ROOM", 1 << 62)
    assert scratch.scratch_parent(str(tmp_path)) is None
