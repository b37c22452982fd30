"""The method of ``benchmarks/pass.py --table``: commands in rotation, medians of per-round
ratios, each run once the machine is quiet (``benchmarks/quiet.py``: the filesystem's create
cost, I/O and CPU pressure)."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from tests.benchmarks import load_script

bench = load_script("pass")
create_cost = load_script("create_cost")
quiet = load_script("quiet")
pressure = load_script("pressure")
table_report = load_script("table_report")
readme_block = load_script("readme_block")


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
    events: list[str] = []

    def command(name: str, seconds: float):  # type: ignore[no-untyped-def]
        def run() -> object:
            order.append(name)
            events.append(name)
            return _run(seconds + len(order))
        return run

    calm = quiet.Quiet(tmp_path, quiet.Levels(create_us=1e9), most_wait=0.0, pressure=False)
    runs, settlings = bench.in_rotation([command("floor", 0), command("one", 100), command("workers", 200)], 3,
                                        calm, before_each=lambda: events.append("sync"))
    assert order == ["floor", "one", "workers", "one", "workers", "floor", "workers", "floor", "one"]
    assert [r.wall for r in runs[0]] == [1, 6, 8]
    assert [r.wall for r in runs[1]] == [102, 104, 109]
    assert [r.wall for r in runs[2]] == [203, 205, 207]
    assert len(settlings) == 9 and all(s.quiet for s in settlings)


def test_every_run_waits_for_a_quiet_machine_after_a_sync_not_only_a_rounds_first(tmp_path: Path) -> None:
    events: list[str] = []

    class Watched(quiet.Quiet):  # type: ignore[misc,name-defined]
        def settle(self) -> object:
            events.append("look")
            return super().settle()

    def command(name: str):  # type: ignore[no-untyped-def]
        def run() -> object:
            events.append(name)
            return _run(1.0)
        return run

    calm = Watched(tmp_path, quiet.Levels(create_us=1e9), most_wait=0.0, pressure=False)
    bench.in_rotation([command("noop"), command("stat")], 2, calm, before_each=lambda: events.append("sync"))
    # the first command of a round no longer runs after an idle look while the next runs warm:
    # each is looked before, after the sync that keeps the last run's write-back out of the look
    assert events == ["sync", "look", "noop", "sync", "look", "stat", "sync", "look", "stat", "sync", "look", "noop"]


LEVELS = quiet.Levels(create_us=100, io=10, cpu=10)


def test_by_default_a_create_as_dear_as_minutes_after_a_large_deletion_is_not_quiet() -> None:
    assert quiet.Levels().loud(quiet.Reading(62.0, 0.0, 0.0)) == ("create",)  # rounds 32 and 33: a third slower
    assert quiet.Levels().loud(quiet.Reading(20.0, 0.0, 0.0)) == ()  # a quiet create on this VM: 12-20 µs


def test_a_quiet_machine_is_looked_at_once_and_not_waited_for() -> None:
    slept: list[float] = []
    settled = quiet.settle(lambda: quiet.Reading(30.0, 1.0, 2.0), LEVELS, most_wait=90, interval=3,
                           sleep=slept.append)
    assert settled.readings == (quiet.Reading(30.0, 1.0, 2.0),) and settled.quiet and not slept
    assert settled.waited == 0 and settled.ran_at.io == 1.0


def test_after_a_mass_deletion_the_run_waits_until_a_create_is_quiet_again() -> None:
    costs = iter([600.0, 350.0, 40.0, 30.0])
    slept: list[float] = []
    settled = quiet.settle(lambda: quiet.Reading(next(costs)), LEVELS, most_wait=90, interval=3, sleep=slept.append)
    assert [r.create_us for r in settled.readings] == [600.0, 350.0, 40.0] and settled.quiet
    assert settled.ran_at.create_us == 40.0 and slept == [3, 3] and settled.waited == 6


def test_a_disk_loaded_by_discards_is_waited_out_though_a_create_costs_nothing_more() -> None:
    looks = iter([quiet.Reading(20.0, 41.0, 0.0), quiet.Reading(20.0, 12.0, 0.0), quiet.Reading(25.0, 3.0, 1.0)])
    settled = quiet.settle(lambda: next(looks), LEVELS, most_wait=90, interval=3, sleep=lambda _: None)
    assert len(settled.readings) == 3 and settled.quiet and settled.waited == 6
    assert LEVELS.loud(settled.readings[0]) == ("I/O",)


def test_tasks_queueing_for_a_cpu_keep_the_machine_loud() -> None:
    assert LEVELS.loud(quiet.Reading(30.0, 0.0, 55.0)) == ("CPU",)
    assert LEVELS.loud(quiet.Reading(300.0, 20.0, 55.0)) == ("create", "I/O", "CPU")
    assert LEVELS.loud(quiet.Reading(30.0, None, None)) == ()  # where pressure is not read, it does not count


def test_the_wait_is_bounded_and_a_run_that_starts_loud_says_which_gauge() -> None:
    slept: list[float] = []
    settled = quiet.settle(lambda: quiet.Reading(30.0, 60.0, 0.0), LEVELS, most_wait=10, interval=3,
                           sleep=slept.append)
    assert slept == [3, 3, 3] and len(settled.readings) == 4 and not settled.quiet and settled.loud == ("I/O",)
    calm = quiet.Settling((quiet.Reading(30.0, 0.0, 1.0),), 0.0, ())
    line = quiet.describe([settled, calm], LEVELS, pressure=True)
    assert "30/60/0 after 9 s (first 30/60/0), 30/0/1" in line and "1 run(s) NOT quiet" in line and "(I/O)" in line
    sentence = quiet.summary([settled, calm], LEVELS, pressure=True)
    assert "I/O pressure 0\N{EN DASH}60 %" in sentence and "1 of 2 runs waited for it, 9 s in all" in sentence
    assert "1 of 2 runs started NOT quiet" in sentence


def test_without_pressure_the_notes_give_the_create_cost_alone() -> None:
    settled = quiet.Settling((quiet.Reading(30.0),), 0.0, ())
    assert quiet.describe([settled], LEVELS, pressure=False).endswith("(quiet ≤ 100): 30")
    sentence = quiet.summary([settled, settled], LEVELS, pressure=False)
    assert "pressure" not in sentence and "every run started quiet (2 in all)" in sentence


def _psi(directory: Path, io_us: int, cpu_us: int) -> None:
    directory.mkdir(exist_ok=True)
    for name, total in (("io", io_us), ("cpu", cpu_us)):
        (directory / name).write_text(f"some avg10=99.00 avg60=99.00 avg300=99.00 total={total}\n"
                                      f"full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", "ascii")


def test_pressure_is_the_share_of_the_window_some_task_stalled_not_the_kernels_average(tmp_path: Path) -> None:
    psi = tmp_path / "pressure"
    _psi(psi, io_us=5_000_000, cpu_us=7_000_000)
    now = [100.0]

    def sleep(seconds: float) -> None:  # in the 2 s window, 0.5 s of I/O stall and 0.1 s of CPU wait
        now[0] += seconds
        _psi(psi, io_us=5_500_000, cpu_us=7_100_000)

    shares = pressure.shares(2.0, psi, sleep=sleep, clock=lambda: now[0])
    assert shares == {"io": pytest.approx(25.0), "cpu": pytest.approx(5.0)}  # avg10 says 99 in both
    assert pressure.unavailable(psi) is None


def test_a_kernel_without_pressure_information_is_said_and_skipped(tmp_path: Path) -> None:
    assert "No such file" in (pressure.unavailable(tmp_path / "pressure") or "")
    (tmp_path / "pressure").mkdir()
    (tmp_path / "pressure" / "io").write_text("full avg10=0.00 total=0\n", "ascii")
    assert "no 'some' line" in (pressure.unavailable(tmp_path / "pressure") or "")


def test_a_probe_times_its_creates_and_deletes_nothing(tmp_path: Path) -> None:
    first = create_cost.probe(tmp_path)
    second = create_cost.probe(tmp_path)
    assert first > 0 and second > 0
    trees = sorted(tmp_path.iterdir())
    assert len(trees) == 2  # the first probe's tree is still there
    per_tree = create_cost.DIRECTORIES * (1 + create_cost.FILES_EACH)
    assert all(sum(1 for _ in tree.rglob("*")) == per_tree for tree in trees)
    assert all(p.stat().st_mode & 0o077 == 0 for p in trees[0].rglob("*"))


def test_the_pressure_over_each_run_is_recorded_beside_the_look_before_it(tmp_path: Path) -> None:
    if pressure.unavailable() is not None:
        pytest.skip(f"no pressure information here: {pressure.unavailable()}")
    watch = quiet.Quiet(tmp_path, quiet.Levels(create_us=1e9, io=100, cpu=100), most_wait=0.0, window=0.05)
    _, settlings = bench.in_rotation([lambda: _run(1.0)], 2, watch, before_each=lambda: None)
    for settled in settlings:
        assert settled.during is not None and settled.during.io is not None and settled.during.cpu is not None
        assert 0 <= settled.during.io <= 100.5 and 0 <= settled.during.cpu <= 100.5
        assert settled.ran_at.io is not None  # and the look before it, over its own window
    assert "during each run, I/O % / CPU %: " in quiet.describe(settlings, watch.levels, pressure=True)
