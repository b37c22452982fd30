"""``benchmarks/workers_budget.py``: a landing with workers is marked at each step it names, in
the order a pass takes them, every worker reports as it ends, and the budget is read from them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.benchmarks import load_script, three_sessions

workers_budget = load_script("workers_budget")
session_phases = load_script("session_phases")

#: the marks of a landing, in the order a pass reaches them
IN_ORDER = ("configuration read", "discovered (the claims begin)", "multiprocessing imported",
            "landing's modules imported", "a worker forked", "last worker forked", "first task sent",
            "last outcome merged", "pass done", "process exited")


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_a_landing_with_two_workers_is_marked_in_order_and_each_worker_reports(corpus: Path, tmp_path: Path) -> None:
    projects = three_sessions(corpus, tmp_path)
    config = session_phases.write_config(tmp_path / "asz.yaml", tmp_path / "root", projects, workers=2)
    landing = workers_budget.one_landing(config, tmp_path / "report.jsonl")
    marks = landing["marks"]
    assert [marks[label] for label in IN_ORDER] == sorted(marks[label] for label in IN_ORDER)
    assert marks["last worker ended"] <= marks["process exited"] == landing["wall"]
    assert len(landing["workers"]) == 2 and all(w["cpu"] > 0 and w["faults"] > 0 for w in landing["workers"])
    assert landing["pass"]["main"] > 0 and landing["pass"]["before"] > 0
    assert len(landing["phases"]) == len(landing["idle"]) == 3
    assert all(ms >= 0 for ms in landing["phases"]) and all(0 <= idle <= 100 for idle in landing["idle"])
    printed = workers_budget.summary([landing, landing])
    assert "a worker (2 a landing)" in printed and "idle % of" in printed
    assert len(list((tmp_path / "root").glob("*/streams/main/*.sd"))) == 3  # it landed for real


def test_each_phase_is_idle_as_the_samples_around_it_say() -> None:
    # (ms, idle jiffies, all jiffies): half idle up to 10 ms, none to 30, all of it after
    samples = [(0.0, 0, 0), (10.0, 5, 10), (20.0, 5, 20), (30.0, 5, 30), (40.0, 15, 40)]
    assert workers_budget._idle_by_phase(samples, [0.0, 10.0, 30.0, 40.0]) == [50.0, 0.0, 100.0]
