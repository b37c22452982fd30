"""How many worker processes a pass uses: what is configured, else a default that forks only on
Linux and only for a pass with many sessions to land."""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

import pytest

from asz_core import hookimpl, pipeline, workers
from asz_core.plugin import AdapterInfo, Found, SessionClaim
from asz_core.root.group import GROUP_SESSIONS
from asz_core.testing import PassRunner
from asz_core.workers import (
    DECIDED_BY,
    DEFAULT_FROM_SESSIONS,
    DEFAULT_MOST,
    DEFAULT_PER_CPU,
    DEFAULT_SPARE,
    configured_workers,
)


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASZ_WORKERS", raising=False)


def test_what_is_configured_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    assert configured_workers({"collector": {"workers": 1}}, 10_000) == 1
    assert configured_workers({"collector": {"workers": 3}}, 2) == 3
    monkeypatch.setenv("ASZ_WORKERS", "1")
    assert configured_workers({"collector": {"workers": 3}}, 10_000) == 1


@pytest.mark.skipif(sys.platform != "linux", reason="the default forks only on Linux")
def test_unset_it_is_one_a_cpu_and_one_more_once_there_are_many_sessions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)))
    assert configured_workers({}, DEFAULT_FROM_SESSIONS - 1) == 1
    assert configured_workers({}, DEFAULT_FROM_SESSIONS) == DEFAULT_MOST
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2})
    assert configured_workers({}, 10_000) == DEFAULT_MOST == 4
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert configured_workers({"collector": {}}, 10_000) == 2 * DEFAULT_PER_CPU + DEFAULT_SPARE == 3
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert configured_workers({}, 10_000) == 1  # one CPU: the pass's own process, no spare


@pytest.mark.skipif(sys.platform != "linux", reason="the default forks only on Linux")
def test_unset_the_spare_comes_only_once_each_worker_would_land_more_than_a_group(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    with_spare = 2 * DEFAULT_PER_CPU + DEFAULT_SPARE
    # each of three would land a group or less: each commits once, at its end, with no wait to fill
    assert configured_workers({}, DEFAULT_FROM_SESSIONS) == 2 * DEFAULT_PER_CPU
    assert configured_workers({}, with_spare * GROUP_SESSIONS) == 2 * DEFAULT_PER_CPU
    assert configured_workers({}, with_spare * GROUP_SESSIONS + 1) == with_spare
    assert configured_workers({}, DECIDED_BY) == with_spare
    # where the CPUs alone make the most, there is no spare to add
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(4)))
    assert configured_workers({}, DEFAULT_FROM_SESSIONS) == configured_workers({}, 10_000) == DEFAULT_MOST


def test_unset_it_is_one_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workers.sys, "platform", "darwin")
    assert configured_workers({}, 10_000) == 1


@pytest.mark.skipif(sys.platform != "linux", reason="the default forks only on Linux")
def test_an_adapter_with_long_sessions_lowers_the_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert configured_workers({}, 7, from_sessions=8) == 1
    assert configured_workers({}, 8, from_sessions=8) == 2 * DEFAULT_PER_CPU
    assert configured_workers({"collector": {"workers": 1}}, 8, from_sessions=8) == 1


def _streaming_parallel_adapter(sessions: int, parallel_from: int | None = None) -> types.ModuleType:
    """An adapter that may land in workers and yields its claims one at a time."""
    module = types.ModuleType("streaming_parallel")

    @hookimpl
    def asz_adapter_info() -> AdapterInfo:
        return AdapterInfo(version="1.0", runtime="streaming", parallel_sessions=True,
                           parallel_from=parallel_from)

    @hookimpl
    def asz_discover(ctx):  # type: ignore[no-untyped-def]
        return (Found(kind="session", key=f"s-{i}", session=f"s-{i}") for i in range(sessions))

    @hookimpl
    def asz_claim(ctx, found):  # type: ignore[no-untyped-def]
        return (SessionClaim(item.session, [item]) for item in found)

    @hookimpl
    def asz_land(ctx, claim, session):  # type: ignore[no-untyped-def]
        pass

    for fn in (asz_adapter_info, asz_discover, asz_claim, asz_land):
        setattr(module, fn.__name__, fn)
    return module


@pytest.mark.skipif(sys.platform != "linux", reason="the default forks only on Linux")
@pytest.mark.parametrize(("sessions", "parallel_from"), [(3, None), (DEFAULT_FROM_SESSIONS, None), (3, 4), (4, 4),
                                                      (DECIDED_BY + 5, None), (DECIDED_BY + 5, 4)])
def test_a_stream_of_claims_is_counted_as_far_as_the_default_depends_on_it(
        asz_pass: PassRunner, monkeypatch: pytest.MonkeyPatch, sessions: int, parallel_from: int | None) -> None:
    """Claims that come as a generator say how many there are only once taken: the pass looks
    ahead as far as the default depends on their number (the threshold, and whether each worker
    would land more than a group), and every claim still lands, once, in order."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    calls: list[tuple[int, list[str]]] = []

    def record(host, actx, claims, workers):  # type: ignore[no-untyped-def]
        calls.append((workers, [c.session for c in claims]))
        return []

    monkeypatch.setattr(pipeline, "land_in_workers", record)
    asz_pass.register("streaming_parallel", _streaming_parallel_adapter(sessions, parallel_from))
    asz_pass.configure(adapters=[{"name": "streaming_parallel"}])
    summary = asz_pass.run()
    assert summary.by_adapter["streaming_parallel"].sessions == sessions
    if sessions < (parallel_from or DEFAULT_FROM_SESSIONS):
        assert calls == []  # landed in this process
    else:
        spare = DEFAULT_SPARE if sessions > (2 * DEFAULT_PER_CPU + DEFAULT_SPARE) * GROUP_SESSIONS else 0
        assert calls == [(2 * DEFAULT_PER_CPU + spare, [f"s-{i}" for i in range(sessions)])]


def test_the_pass_imports_what_landing_needs_before_it_forks_its_workers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "asz_test_landing_needs.py").write_text("LOADED = True\n", "utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    info = AdapterInfo(version="1", runtime="Test",
                       landing_modules=("asz_test_landing_needs", "asz_test_not_installed_anywhere"))
    host = types.SimpleNamespace(adapter=lambda name: types.SimpleNamespace(info=info))
    try:
        workers._import_landing(host, "test")  # type: ignore[arg-type]
        # the forked workers inherit it; one that does not import is left to fail each landing
        assert sys.modules["asz_test_landing_needs"].LOADED
        assert "asz_test_not_installed_anywhere" not in sys.modules
    finally:
        sys.modules.pop("asz_test_landing_needs", None)


def test_every_adapter_that_lands_in_workers_names_landing_modules_that_import() -> None:
    import importlib

    from asz_core.host import PluginHost

    host = PluginHost().load_entry_points()
    named = {name: record.info.landing_modules for name, record in host.adapters.items()
             if record.info is not None and record.info.parallel_sessions}
    assert named and all(named.values()), named
    for modules in named.values():
        for module in modules:
            importlib.import_module(module)
