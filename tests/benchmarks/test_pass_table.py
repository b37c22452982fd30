"""The method of ``benchmarks/pass.py --table``: commands in rotation, medians of per-round
ratios, each round once the filesystem's create cost is quiet (``benchmarks/create_cost.py``)."""

from __future__ import annotations

import importlib.util
import statistics
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.helpers import REPO


def _load(name: str) -> ModuleType:
    """A benchmark script as a module (``pass`` is a keyword, so not by ``import``)."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bench = _load("pass")
create_cost = _load("create_cost")


def _run(seconds: float) -> object:
    return bench.Run(wall=seconds, inner=seconds, rss=1.0, out="", code=0, cpu=seconds)


def test_a_drift_of_the_machine_over_the_run_cancels_out_of_the_ratio() -> None:
    floor = [0.17, 0.22, 0.19]  # the machine slows and recovers between rounds
    landing = [f / 0.25 for f in floor]
    assert bench.per_round_ratio(floor, landing) == pytest.approx(0.25)


def test_the_ratio_is_the_median_of_each_rounds_ratio_not_a_ratio_of_medians() -> None:
    floor = [1.0, 1.1, 3.0]
    landing = [2.0, 4.0, 6.0]  # the second round's floor ran while the machine was fast
    assert bench.per_round_ratio(floor, landing) == pytest.approx(0.5)
    assert statistics.median(floor) / statistics.median(landing) == pytest.approx(0.275)


def test_a_ratio_needs_both_terms_of_every_round() -> None:
    with pytest.raises(ValueError):
        bench.per_round_ratio([1.0, 2.0], [1.0])


def test_each_round_starts_one_command_later_and_keeps_each_commands_runs_in_round_order(tmp_path: Path) -> None:
    order: list[str] = []

    def command(name: str, seconds: float):  # type: ignore[no-untyped-def]
        def run() -> object:
            order.append(name)
            return _run(seconds + len(order))
        return run

    quiet = bench.Quiet(tmp_path, most_us=1e9, most_wait=0.0)
    runs, settlings = bench.in_rotation([command("floor", 0), command("one", 100), command("workers", 200)], 3,
                                        quiet, before_each=lambda: None)
    assert order == ["floor", "one", "workers", "one", "workers", "floor", "workers", "floor", "one"]
    assert [r.wall for r in runs[0]] == [1, 6, 8]
    assert [r.wall for r in runs[1]] == [102, 104, 109]
    assert [r.wall for r in runs[2]] == [203, 205, 207]
    assert len(settlings) == 3 and all(s.quiet for s in settlings)


def test_a_quiet_filesystem_is_probed_once_and_not_waited_for() -> None:
    slept: list[float] = []
    settled = create_cost.settle(lambda: 30.0, quiet_us=100, most_wait=90, interval=3, sleep=slept.append)
    assert settled.probes == (30.0,) and settled.quiet and settled.waited == 0 and not slept


def test_after_a_mass_deletion_the_round_waits_until_a_create_is_quiet_again() -> None:
    costs = iter([600.0, 350.0, 40.0, 30.0])
    slept: list[float] = []
    settled = create_cost.settle(lambda: next(costs), quiet_us=100, most_wait=90, interval=3, sleep=slept.append)
    assert settled.probes == (600.0, 350.0, 40.0) and settled.cost == 40.0 and settled.quiet
    assert slept == [3, 3] and settled.waited == 6


def test_the_wait_is_bounded_and_a_round_that_starts_loud_says_so() -> None:
    slept: list[float] = []
    settled = create_cost.settle(lambda: 600.0, quiet_us=100, most_wait=10, interval=3, sleep=slept.append)
    assert slept == [3, 3, 3] and len(settled.probes) == 4 and not settled.quiet
    line = create_cost.describe([settled, create_cost.Settling((30.0,), 0.0, True)], 100)
    assert "600 → 600 in 9 s, 30 µs" in line and "1 round(s) NOT quiet" in line


def test_a_probe_times_its_creates_and_deletes_nothing(tmp_path: Path) -> None:
    first = create_cost.probe(tmp_path)
    second = create_cost.probe(tmp_path)
    assert first > 0 and second > 0
    trees = sorted(tmp_path.iterdir())
    assert len(trees) == 2  # the first probe's tree is still there
    per_tree = create_cost.DIRECTORIES * (1 + create_cost.FILES_EACH)
    assert all(sum(1 for _ in tree.rglob("*")) == per_tree for tree in trees)
    assert all(p.stat().st_mode & 0o077 == 0 for p in trees[0].rglob("*"))
