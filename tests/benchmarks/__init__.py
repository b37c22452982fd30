"""Tests of the benchmark scripts' methods (never of their figures)."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from tests.helpers import REPO


def load_script(name: str) -> ModuleType:
    """A benchmark script as a module (``pass`` is a keyword, so not by ``import``)."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
