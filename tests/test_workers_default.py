"""How many worker processes a pass uses: what is configured, else a default that forks only on
Linux and only for a pass with many sessions to land."""

from __future__ import annotations

import os
import sys

import pytest

from asz_core import workers
from asz_core.workers import DEFAULT_FROM_SESSIONS, DEFAULT_MOST, configured_workers


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASZ_WORKERS", raising=False)


def test_what_is_configured_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    assert configured_workers({"collector": {"workers": 1}}, 10_000) == 1
    assert configured_workers({"collector": {"workers": 3}}, 2) == 3
    monkeypatch.setenv("ASZ_WORKERS", "1")
    assert configured_workers({"collector": {"workers": 3}}, 10_000) == 1


@pytest.mark.skipif(sys.platform != "linux", reason="the default forks only on Linux")
def test_unset_it_is_the_cpus_once_there_are_many_sessions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)))
    assert configured_workers({}, DEFAULT_FROM_SESSIONS - 1) == 1
    assert configured_workers({}, DEFAULT_FROM_SESSIONS) == DEFAULT_MOST
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert configured_workers({"collector": {}}, 10_000) == 2
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert configured_workers({}, 10_000) == 1


def test_unset_it_is_one_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workers.sys, "platform", "darwin")
    assert configured_workers({}, 10_000) == 1
