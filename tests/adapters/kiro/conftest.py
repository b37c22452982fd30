"""Fixtures for the kiro adapter's tests: the real Kiro captures in ``../shared/corpus/kiro``.

Tests that change a source copy it to ``tmp_path`` first (the corpus is read-only). Every pass
sets ``source_root``, and every default points at an empty directory, so nothing here reads the
machine's own ``~/.kiro`` or database.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest


@pytest.fixture
def kiro_corpus(corpus: Path) -> Path:
    """The corpus's Kiro tree: ``.kiro/`` (the home) and ``.local/share/kiro-cli/``."""
    return corpus / "kiro"


@pytest.fixture
def kiro_copy(kiro_corpus: Path, tmp_path: Path) -> Path:
    """A writable copy of the Kiro tree, for tests that append, rewrite or update."""
    target = tmp_path / "kiro"
    shutil.copytree(kiro_corpus, target)
    for directory, _, files in os.walk(target):
        os.chmod(directory, 0o700)
        for name in files:
            os.chmod(Path(directory) / name, stat.S_IRUSR | stat.S_IWUSR)
    return target


@pytest.fixture(autouse=True)
def _no_real_kiro(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Point every default at an empty place, so a test that forgot ``source_root`` finds
    nothing rather than this machine's own Kiro files."""
    for name in ("KIRO_HOME", "KIRO_CLI_DB_PATH", "XDG_DATA_HOME", "XDG_CONFIG_HOME",
                 "LOCALAPPDATA", "APPDATA"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "no-home"))
