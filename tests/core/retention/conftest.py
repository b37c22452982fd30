"""Roots landed from real Claude Code sessions, pushed to a loopback receiver, for retention."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from asz_core.scenario.receiver import GrpcReceiver
from asz_core.testing import PassRunner

#: three real sessions, each (project directory, session): a short one, a long one, one with
#: subagents (the smallest of the corpus's sessions with subagents: each test lands all three, so
#: their size is the tests' cost)
SESSIONS = (("-Users-ingo-projects-irrlicht--claude-worktrees-228", "ef21e42a-0206-4578-8b08-8a767d47f5fd"),
            ("-Users-ingo-projects-irrlicht--claude-worktrees-456", "a6357d32-308a-4030-84d4-59744b5438d1"),
            ("-Users-ingo-projects-irrlicht", "8a525d27-37a4-4a12-8523-a3ea345290cf"))
MAX_DELTA = 65536  #: small enough that the long sessions land in several files each


def copy_sessions(corpus: Path, target: Path) -> Path:
    """``SESSIONS`` copied from the corpus into ``target`` (a ``projects`` tree), writable: the
    corpus is read-only, and a source grows."""
    for slug, session in SESSIONS:
        source = corpus / "claude-code" / "projects" / slug
        (target / slug).mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / f"{session}.jsonl", target / slug / f"{session}.jsonl")
        if (source / session).is_dir():
            shutil.copytree(source / session, target / slug / session)
    for directory, _dirs, files in os.walk(target):
        os.chmod(directory, 0o755)
        for name in files:
            os.chmod(Path(directory) / name, 0o644)
    return target


@pytest.fixture
def projects(corpus: Path, tmp_path: Path) -> Path:
    return copy_sessions(corpus, tmp_path / "projects")


@pytest.fixture
def receiver() -> Iterator[GrpcReceiver]:
    server = GrpcReceiver().start()
    yield server
    server.stop()


def configure(runner: PassRunner, projects: Path, *, endpoint: str = "", after: Any = 0,
              local_only: bool = False, max_delta: int = MAX_DELTA, bodies: Path | None = None) -> Path:
    """``bodies``: a directory of provider bodies, landed by claude-code-provider after them."""
    provider = [{"name": "claude-code-provider", "source_root": str(bodies), "exclude": []}] if bodies else []
    return runner.configure(
        storage={"root": str(runner.root),
                 "retention": {"metadata_only_after": after, "local_only": local_only}},
        adapters=[{"name": "claude-code-local", "source_root": str(projects), "exclude": [],
                   "collector": {"max_delta_bytes": max_delta}}, *provider],
        export={"otlp": {"protocol": "grpc", "endpoint": endpoint, "instance_id": "me@laptop"}})
