"""The metrics spool pushed to real loopback receivers: once, after the files, refused requests
left for the next push, ``export.otlp.logs``/``metrics`` switching what goes."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from asz_core.metrics.derive import derive_root
from asz_core.scenario.receiver import GrpcReceiver, HttpReceiver, make_receiver
from asz_plugins.otlp_push.config import OtlpConfig
from asz_plugins.otlp_push.push import push_root
from asz_plugins.otlp_push.state import PushState
from tests.core.metrics.sdfiles import SESSION, Fragment, land

T0 = "2026-01-01T10:00:05Z"


@pytest.fixture(params=("grpc", "http"))
def receiver(request: pytest.FixtureRequest) -> Iterator[GrpcReceiver | HttpReceiver]:
    server = make_receiver(request.param).start()
    yield server
    server.stop()


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    land(root, 1, "main", [Fragment("c1", T0, (1, 2, 3, 4), finished=True)])
    land(root, 2, "agent-a1", [Fragment("c2", T0, (10, 20, 30, 40), finished=True)])
    derive_root(root, lookback_s=0, clock=time.time_ns)
    return root


def _push(root: Path, rx: GrpcReceiver | HttpReceiver, **cfg: object) -> object:
    protocol = "grpc" if isinstance(rx, GrpcReceiver) else "http"
    config = OtlpConfig(protocol=protocol, endpoint=rx.endpoint, instance_id="me@here", batch_bytes=1,
                        timeout_s=10.0, **cfg)  # type: ignore[arg-type]
    return push_root(root, config, runtime_of=lambda adapter: {"test": "Test Agent"}.get(adapter, adapter))


def test_every_spool_file_reaches_the_receiver_once_after_the_files_under_asz_resource(
        tmp_path: Path, receiver: GrpcReceiver | HttpReceiver) -> None:
    root = _root(tmp_path)
    result = _push(root, receiver)
    assert not result.errors, result.errors  # type: ignore[attr-defined]
    points = receiver.points
    assert len(receiver.metric_requests) == 2 and len(points) == 8
    totals = {(p.attributes["query_source"], p.attributes["type"]): p.value for p in points}
    assert totals == {("main", "input"): 1, ("main", "output"): 2, ("main", "cacheRead"): 3,
                      ("main", "cacheCreation"): 4, ("subagent", "input"): 10, ("subagent", "output"): 20,
                      ("subagent", "cacheRead"): 30, ("subagent", "cacheCreation"): 40}
    assert {p.attributes["session.id"] for p in points} == {SESSION}
    kinds = {(p.metric, p.unit, p.monotonic, p.temporality) for p in points}
    assert kinds == {("agent.token.usage", "tokens", True, 1)}
    resource = points[0].resource
    assert (resource["service.name"], resource["service.instance.id"], resource["service.layer"],
            resource["telemetry.sdk.name"]) == ("Test Agent", "me@here", "AI_AGENT", "asz")
    state = PushState.load(root)
    assert sorted(p for p in state.pushed if p.startswith("_metrics/")) == [
        f"_metrics/metrics-{SESSION}-000001-local.pb", f"_metrics/metrics-{SESSION}-000002-local.pb"]
    assert len(receiver.records) == 2  # the landed files, as logs, first
    _push(root, receiver)
    assert len(receiver.metric_requests) == 2  # nothing is sent twice


def test_a_refused_metrics_request_leaves_its_points_for_the_next_push(
        tmp_path: Path, receiver: GrpcReceiver | HttpReceiver) -> None:
    root = _root(tmp_path)
    receiver.plan("fail")
    refused = _push(root, receiver, logs=False)
    assert refused.errors and not receiver.metric_requests  # type: ignore[attr-defined]
    assert not PushState.load(root).pushed
    taken = _push(root, receiver, logs=False)
    assert not taken.errors and taken.metrics == 2  # type: ignore[attr-defined]
    assert len(receiver.points) == 8 and receiver.records == []  # logs off: the spool alone


def test_metrics_off_sends_the_files_and_leaves_the_spool(
        tmp_path: Path, receiver: GrpcReceiver | HttpReceiver) -> None:
    root = _root(tmp_path)
    result = _push(root, receiver, metrics=False)
    assert result.files == 2 and not receiver.metric_requests  # type: ignore[attr-defined]


def test_a_partial_success_marks_the_spool_file_sent_and_rejected(
        tmp_path: Path, receiver: GrpcReceiver | HttpReceiver) -> None:
    root = _root(tmp_path)
    receiver.plan("partial")
    result = _push(root, receiver, logs=False)
    assert result.rejected == 1  # type: ignore[attr-defined]
    assert f"_metrics/metrics-{SESSION}-000001-local.pb" in PushState.load(root).rejected


def test_a_removed_session_takes_its_spool_files_and_their_state_lines_with_it(
        tmp_path: Path, receiver: GrpcReceiver | HttpReceiver) -> None:
    from asz_core.metrics.state import MetricsState
    from asz_plugins.otlp_push.plugin import asz_sessions_removed

    root = _root(tmp_path)
    other = "99999999-2222-4333-8444-555555555555"
    land(root, 1, "main", [Fragment("c9", T0, (1, 0, 0, 0), finished=True)], session=other)
    derive_root(root, lookback_s=0, clock=time.time_ns)
    _push(root, receiver)
    asz_sessions_removed(config=None, root=root, sessions=[SESSION])  # type: ignore[arg-type]
    assert sorted(p.name for p in (root / "_metrics").glob("metrics-*")) == [f"metrics-{other}-000001-local.pb"]
    pushed = PushState.load(root).pushed
    assert not [p for p in pushed if SESSION in p] and f"_metrics/metrics-{other}-000001-local.pb" in pushed
    state = MetricsState.load(root / "_metrics")
    assert SESSION not in state.sessions and other in state.sessions
