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

#: three real sessions: a short one, a long one, one with subagents
SLUGS = ("-Users-ingo-projects-irrlicht--claude-worktrees-228",
         "-Users-ingo-projects-irrlicht--claude-worktrees-456",
         "-home-marco-projects-spotter-worktrees-spotter-4te")
MAX_DELTA = 65536  #: small enough that the long sessions land in several files each


@pytest.fixture
def projects(corpus: Path, tmp_path: Path) -> Path:
    target = tmp_path / "projects"
    for slug in SLUGS:
        shutil.copytree(corpus / "claude-code" / "projects" / slug, target / slug)
    for directory, _dirs, files in os.walk(target):  # the corpus is read-only; a source grows
        os.chmod(directory, 0o755)
        for name in files:
            os.chmod(Path(directory) / name, 0o644)
    return target


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
