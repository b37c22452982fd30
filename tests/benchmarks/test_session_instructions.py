"""``benchmarks/session_instructions.py``: the sets it lands are whole project directories in name
order, and a landing under callgrind counts the same instructions each time it runs, more for
more sessions."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.benchmarks import load_script, three_sessions

session_instructions = load_script("session_instructions")
session_phases = load_script("session_phases")


def test_a_set_is_the_project_directories_in_name_order_until_it_holds_enough_sessions(tmp_path: Path) -> None:
    projects = tmp_path / "projects"
    for project, sessions in (("b", 2), ("a", 1), ("c", 3)):
        for n in range(sessions):
            (projects / project).mkdir(parents=True, exist_ok=True)
            (projects / project / f"{project}{n}.jsonl").write_bytes(b"{}\n")
    chosen, held = session_instructions.subset(projects, 2, tmp_path / "two")
    assert held == 3 and sorted(p.name for p in chosen.iterdir() if p.is_dir()) == ["a", "b"]
    again, held = session_instructions.subset(projects, 2, tmp_path / "two")  # made once
    assert again == chosen and held == 3


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind (an OS package)")
def test_a_landing_counts_the_same_instructions_each_time_and_more_for_more_sessions(
        corpus: Path, tmp_path: Path) -> None:
    projects = three_sessions(corpus, tmp_path)
    one, held = session_instructions.subset(projects, 1, tmp_path / "one")
    assert held == 1
    counts = []
    for n, chosen in enumerate((one, one, projects)):
        config = session_phases.write_config(tmp_path / f"{n}.yaml", tmp_path / f"root-{n}", chosen)
        counts.append(session_instructions.instructions(config, tmp_path / f"root-{n}", tmp_path))
    assert abs(counts[1] - counts[0]) < counts[0] * 0.001
    assert counts[2] > counts[0]
