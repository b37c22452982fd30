"""Tests of the benchmark scripts' methods (never of their figures)."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
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


def three_sessions(corpus: Path, out: Path) -> Path:
    """Three of the shared corpus's main transcripts, cut to their first two lines
    (``session_phases.cut_corpus``), under ``out``: what the scripts that land ``many-small``'s
    sessions are tested on."""
    projects = corpus / "claude-code" / "projects"
    source = out / "projects"
    for path in sorted(projects.glob("*/*.jsonl"))[:3]:
        target = source / path.relative_to(projects)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    return load_script("session_phases").cut_corpus(source, 2, out / "first-2")
