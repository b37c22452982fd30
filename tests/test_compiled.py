"""The per-record path runs compiled where the build compiled it, and never stale."""

from __future__ import annotations

import importlib
import os
import time
from pathlib import Path

import pytest

from tests.compiled import compiled_modules, refusal_if_stale
from tests.helpers import REPO


def test_where_ci_requires_it_every_listed_module_is_imported_compiled() -> None:
    if not os.environ.get("ASZ_REQUIRE_COMPILED"):
        pytest.skip("ASZ_REQUIRE_COMPILED is not set (CI sets it and installs with the README's command)")
    for module in compiled_modules():
        name = ".".join(module.source.relative_to(REPO).with_suffix("").parts)
        imported = importlib.import_module(name).__file__ or ""
        assert imported.endswith(".so"), f"{name} was imported from {imported}, not compiled"


def test_a_module_edited_after_it_was_compiled_stops_the_tests(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.hatch.build.targets.wheel.hooks.custom]\ninclude = ["/pkg/hot.py", "/pkg/cold.py"]\n')
    (tmp_path / "pkg").mkdir()
    hot, cold = tmp_path / "pkg" / "hot.py", tmp_path / "pkg" / "cold.py"
    hot.write_text("x = 1\n")
    cold.write_text("y = 1\n")
    built = tmp_path / "pkg" / "hot.cpython-311-x86_64-linux-gnu.so"
    built.write_bytes(b"")
    assert refusal_if_stale(tmp_path) is None  # compiled after its source was written
    assert [m.extension for m in compiled_modules(tmp_path)] == [built, None]
    os.utime(built, (time.time() - 60, time.time() - 60))  # the source edited since
    refusal = refusal_if_stale(tmp_path)
    assert refusal and refusal.startswith("pkg/hot.py changed after it was compiled") and "pip install -e ." in refusal
