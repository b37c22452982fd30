"""``agent.token.usage`` derived from landed Session Data into the ``_metrics/`` spool."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

from asz_core.metrics.derive import derive_root
from asz_core.metrics.state import MetricsState
from asz_core.root import durable, faults, writeonce
from asz_core.sessiondata import parse_instant
from tests.core.metrics.sdfiles import SESSION, Fragment, land
from tests.helpers import count_syncs, killed_in_fork

MINUTE = 60_000_000_000
T0 = "2026-01-01T10:00:05Z"
NOW = parse_instant("2026-01-01T12:00:00Z") or 0


def _clock() -> int:
    return NOW


def _points(root: Path) -> list[dict[str, Any]]:
    """Every point of the spool, in file and point order."""
    out = []
    for path in sorted((root / "_metrics").glob("metrics-*.pb")):
        request = ExportMetricsServiceRequest.FromString(path.read_bytes())
        for rm in request.resource_metrics:
            for sm in rm.scope_metrics:
                for metric in sm.metrics:
                    assert (metric.name, metric.unit, metric.sum.is_monotonic,
                            metric.sum.aggregation_temporality) == ("agent.token.usage", "tokens", True, 1)
                    for dp in metric.sum.data_points:
                        attrs = {kv.key: kv.value.string_value for kv in dp.attributes}
                        out.append({"file": path.name, **attrs, "start": dp.start_time_unix_nano,
                                    "end": dp.time_unix_nano, "value": dp.as_double})
    return out


def _by_type(points: list[dict[str, Any]]) -> dict[tuple[str, str], float]:
    out: dict[tuple[str, str], float] = {}
    for p in points:
        key = (p["query_source"], p["type"])
        out[key] = out.get(key, 0) + p["value"]
    return out


def test_a_finished_call_is_counted_once_with_its_last_fragments_usage_in_its_minute(tmp_path: Path) -> None:
    land(tmp_path, 1, "main", [T0, Fragment("c1", "2026-01-01T10:00:06Z", (3, 1, 10, 2)),
                               Fragment("c1", "2026-01-01T10:01:07Z", (3, 9, 10, 2), finished=True)])
    stats = derive_root(tmp_path, lookback_s=0, clock=_clock)
    points = _points(tmp_path)
    assert (stats.files, stats.requests, stats.points) == (1, 1, 4)
    assert _by_type(points) == {("main", "input"): 3, ("main", "output"): 9, ("main", "cacheRead"): 10,
                                ("main", "cacheCreation"): 2}
    minute = parse_instant("2026-01-01T10:01:00Z") or 0
    assert {(p["start"], p["end"]) for p in points} == {(minute, minute + MINUTE)}
    assert {p["session.id"] for p in points} == {SESSION} and {p["model"] for p in points} == {"claude-test-1"}
    assert oct(os.stat(tmp_path / "_metrics" / points[0]["file"]).st_mode & 0o777) == "0o400"


def test_a_call_that_never_finished_is_left_out_and_zero_counts_still_make_points(tmp_path: Path) -> None:
    land(tmp_path, 1, "agent-a1", [Fragment("c1", T0, (1, 1, 0, 0)), T0,
                                   Fragment("c2", T0, (5, 0, 0, 0), finished=True)])
    derive_root(tmp_path, lookback_s=0, clock=_clock)
    assert _by_type(_points(tmp_path)) == {("subagent", "input"): 5, ("subagent", "output"): 0,
                                           ("subagent", "cacheRead"): 0, ("subagent", "cacheCreation"): 0}


def test_a_call_cut_at_a_file_boundary_is_read_on_and_counted_once(tmp_path: Path) -> None:
    land(tmp_path, 1, "agent-a1", [T0, Fragment("c1", T0, (1, 1, 0, 0))])
    land(tmp_path, 2, "agent-a1", [Fragment("c1", "2026-01-01T10:02:00Z", (4, 7, 0, 0), finished=True), T0])
    derive_root(tmp_path, lookback_s=0, clock=_clock)
    points = _points(tmp_path)
    assert {p["file"] for p in points} == {f"metrics-{SESSION}-000001-local.pb"}
    assert _by_type(points)[("subagent", "output")] == 7  # the last fragment's, read in file 2
    assert derive_root(tmp_path, lookback_s=0, clock=_clock).files == 0  # nothing new, nothing again


def test_an_unfinished_call_counts_when_its_final_fragment_lands_in_a_later_pass(tmp_path: Path) -> None:
    land(tmp_path, 1, "agent-a1", [T0, Fragment("c1", T0, (1, 1, 0, 0))])
    derive_root(tmp_path, lookback_s=0, clock=_clock)
    assert _points(tmp_path) == []
    land(tmp_path, 2, "agent-a1", [Fragment("c1", "2026-01-01T10:02:00Z", (4, 7, 0, 0), finished=True)])
    derive_root(tmp_path, lookback_s=0, clock=_clock)
    assert _by_type(_points(tmp_path))[("subagent", "output")] == 7


def test_two_points_of_a_series_in_one_minute_never_overlap(tmp_path: Path) -> None:
    land(tmp_path, 1, "agent-a1", [Fragment("c1", T0, (1, 0, 0, 0), finished=True), T0])
    land(tmp_path, 2, "agent-b2", [Fragment("c2", T0, (2, 0, 0, 0), finished=True), T0])
    derive_root(tmp_path, lookback_s=0, clock=_clock)
    inputs = [p for p in _points(tmp_path) if p["type"] == "input"]
    assert [p["value"] for p in inputs] == [1, 2]
    assert inputs[1]["start"] == inputs[0]["end"] and inputs[1]["end"] > inputs[1]["start"]


def test_the_first_pass_reaches_back_only_the_lookback_and_later_passes_derive_whole(tmp_path: Path) -> None:
    land(tmp_path, 1, "main", [Fragment("old", "2025-12-01T10:00:00Z", (1, 0, 0, 0), finished=True),
                               Fragment("new", "2026-01-01T11:30:00Z", (2, 0, 0, 0), finished=True)])
    stats = derive_root(tmp_path, lookback_s=3600, clock=_clock)
    assert stats.skipped == 1 and _by_type(_points(tmp_path))[("main", "input")] == 2
    state = MetricsState.load(tmp_path / "_metrics")
    assert {"old", "new"} <= state.sessions[SESSION].calls and not state.pending_since
    land(tmp_path, 2, "main", [Fragment("later", "2025-11-01T10:00:00Z", (4, 0, 0, 0), finished=True)])
    derive_root(tmp_path, lookback_s=3600, clock=_clock)
    assert _by_type(_points(tmp_path))[("main", "input")] == 6


def test_another_runtimes_transcript_is_not_counted(tmp_path: Path) -> None:
    land(tmp_path, 1, "main", [Fragment("c1", T0, (1, 0, 0, 0), finished=True)], dialect="langchain/1")
    stats = derive_root(tmp_path, lookback_s=0, clock=_clock)
    assert (stats.files, stats.requests) == (1, 0) and not (tmp_path / SESSION / "metrics").exists()


def _three_files(root: Path) -> None:
    land(root, 1, "main", [Fragment("c1", T0, (1, 2, 3, 4), finished=True)])
    land(root, 2, "main", [Fragment("c2", T0, (5, 6, 7, 8), finished=True)])
    land(root, 3, "agent-a1", [Fragment("c3", "2026-01-01T10:05:00Z", (9, 9, 9, 9), finished=True)])


# the derivation installs its files together: their bytes (metrics-fsync, once per file), the
# receipts' names (metrics-install 1-3), their names durable (metrics-names 1), the requests'
# names (metrics-install 4-6), those durable (metrics-names 2), then the state
@pytest.mark.parametrize("fault", ["kill:metrics-fsync:1", "kill:metrics-install:1", "kill:metrics-install:2",
                                   "kill:metrics-names:1", "kill:metrics-install:5", "kill:metrics-names:2",
                                   "kill:state-rename:1"])
def test_a_kill_mid_spool_loses_nothing_and_counts_nothing_twice(tmp_path: Path, fault: str) -> None:
    clean, crashed = tmp_path / "clean", tmp_path / "crashed"
    _three_files(clean)
    shutil.copytree(clean, crashed)
    derive_root(clean, lookback_s=0, clock=_clock)
    assert killed_in_fork(fault, lambda: derive_root(crashed, lookback_s=0, clock=_clock)) == -9
    derive_root(crashed, lookback_s=0, clock=_clock)
    assert _points(crashed) == _points(clean)
    assert MetricsState.load(crashed / "_metrics").render(NOW) == MetricsState.load(clean / "_metrics").render(NOW)
    leftovers = [p for p in crashed.rglob(".tmp-*")]
    assert leftovers == []  # the killed write's temporary file was swept by the next pass


def test_a_derivation_whose_files_cannot_be_installed_saves_no_state_and_the_next_counts_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clean, failed = tmp_path / "clean", tmp_path / "failed"
    _three_files(clean)
    shutil.copytree(clean, failed)
    derive_root(clean, lookback_s=0, clock=_clock)
    monkeypatch.setattr(faults, "_spec", "enospc:metrics-names:2")  # the requests named, not durable
    monkeypatch.setattr(faults, "_counts", {})
    stats = derive_root(failed, lookback_s=0, clock=_clock)
    assert len(stats.errors) == 1 and "derived again next pass" in stats.errors[0]
    assert stats.undone == [SESSION]  # the owed log keeps it
    assert not (failed / "_metrics" / "metrics.state").exists()
    monkeypatch.setattr(faults, "_spec", "")
    assert not derive_root(failed, lookback_s=0, clock=_clock).errors
    assert _points(failed) == _points(clean)
    assert MetricsState.load(failed / "_metrics").render(NOW) == MetricsState.load(clean / "_metrics").render(NOW)


@pytest.mark.skipif(not durable.can_sync_filesystem(), reason="syncfs is Linux's")
def test_a_derivation_makes_its_files_durable_with_a_syncfs_a_tier_not_fsyncs_a_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _three_files(tmp_path)
    for other in range(5):
        land(tmp_path, 1, "main", [Fragment(f"x{other}", T0, (1, 0, 0, 0), finished=True)],
             session=f"99999999-2222-4333-8444-55555555555{other}")
    counts = count_syncs(monkeypatch, writeonce)
    stats = derive_root(tmp_path, lookback_s=0, clock=_clock)
    assert (stats.files, stats.requests) == (8, 8)  # eight receipts and eight requests
    # their bytes, the receipts' names, the requests' names; then the state (its file, _metrics/)
    assert counts == {"syncfs": 3, "fsync": 2}


def test_a_receipt_keeps_the_accounting_when_more_fragments_arrived_after_a_crash(tmp_path: Path) -> None:
    land(tmp_path, 1, "agent-a1", [Fragment("c0", T0, (1, 0, 0, 0), finished=True),
                                   Fragment("c1", T0, (1, 1, 0, 0))])
    # the receipt is in, the request is not
    assert killed_in_fork("kill:metrics-install:2", lambda: derive_root(tmp_path, lookback_s=0, clock=_clock)) == -9
    land(tmp_path, 2, "agent-a1", [Fragment("c1", T0, (4, 7, 0, 0), finished=True)])
    derive_root(tmp_path, lookback_s=0, clock=_clock)
    by_file: dict[str, float] = {}
    for p in _points(tmp_path):
        if p["type"] == "input":
            by_file[p["file"]] = by_file.get(p["file"], 0) + p["value"]
    # file 1's request is the one its receipt promised (c0 only); c1 is counted once, by file 2
    assert by_file == {f"metrics-{SESSION}-000001-local.pb": 1, f"metrics-{SESSION}-000002-local.pb": 4}


def test_a_metrics_state_that_does_not_read_is_refused_not_overwritten(tmp_path: Path) -> None:
    from asz_core.metrics.state import MetricsStateError

    (tmp_path / "_metrics").mkdir()
    (tmp_path / "_metrics" / "metrics.state").write_bytes(b"{not json")
    land(tmp_path, 1, "main", [Fragment("c1", T0, (1, 0, 0, 0), finished=True)])
    with pytest.raises(MetricsStateError, match="move it aside"):
        derive_root(tmp_path, lookback_s=0, clock=_clock)
    assert (tmp_path / "_metrics" / "metrics.state").read_bytes() == b"{not json"


def test_a_removed_session_leaves_no_line_in_metrics_state_and_its_spool_files_are_named(tmp_path: Path) -> None:
    from asz_core.metrics.spool import spool_files_of

    other = "99999999-2222-4333-8444-555555555555"
    land(tmp_path, 1, "main", [Fragment("c1", T0, (1, 0, 0, 0), finished=True)])
    land(tmp_path, 1, "main", [Fragment("c9", T0, (1, 0, 0, 0), finished=True)], session=other)
    derive_root(tmp_path, lookback_s=0, clock=_clock)
    assert [p.name for p in spool_files_of(tmp_path, SESSION)] == [f"metrics-{SESSION}-000001-local.pb"]
    state = MetricsState.load(tmp_path / "_metrics")
    state.forget(SESSION)
    state.save(NOW)
    text = (tmp_path / "_metrics" / "metrics.state").read_text()
    assert SESSION not in text and other in text


def test_a_first_pass_whose_calls_are_all_older_than_the_lookback_still_ends_the_first_pass(tmp_path: Path) -> None:
    land(tmp_path, 1, "main", [Fragment("old", "2025-12-01T10:00:00Z", (1, 0, 0, 0), finished=True)])
    stats = derive_root(tmp_path, lookback_s=3600, clock=_clock)
    assert (stats.counted, stats.requests) == (1, 0)
    assert not MetricsState.load(tmp_path / "_metrics").first  # later files are derived whole
    land(tmp_path, 2, "main", [Fragment("older", "2025-11-01T10:00:00Z", (4, 0, 0, 0), finished=True)])
    derive_root(tmp_path, lookback_s=3600, clock=_clock)
    assert _by_type(_points(tmp_path))[("main", "input")] == 4


def test_a_root_where_nothing_counts_gets_no_spool(tmp_path: Path) -> None:
    land(tmp_path, 1, "main", [Fragment("c1", T0, (1, 0, 0, 0), finished=True)], dialect="kiro/1")
    derive_root(tmp_path, lookback_s=0, clock=_clock)
    assert sorted(p.name for p in tmp_path.iterdir()) == [SESSION]
