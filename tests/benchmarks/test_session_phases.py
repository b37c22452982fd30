"""``benchmarks/session_phases.py``: each seam it times is still where a landing calls it, every
seam is timed once a session, and the wrappers go when it is done."""

from __future__ import annotations

import importlib
from pathlib import Path

from tests.benchmarks import load_script, three_sessions

session_phases = load_script("session_phases")


def test_every_seam_is_timed_once_a_new_session_and_let_go_after(corpus: Path, tmp_path: Path) -> None:
    projects = three_sessions(corpus, tmp_path)
    assert all(len(p.read_bytes().splitlines()) <= 2 for p in projects.glob("*/*.jsonl"))
    originals = {label: _resolve(module, attribute) for _, module, attribute, label in session_phases.SEAMS}
    config = session_phases.write_config(tmp_path / "asz.yaml", tmp_path / "root", projects)
    with session_phases.timed_seams() as (spent, calls):
        cpu, sessions, seams = session_phases.land_once(config, spent)
    assert sessions == 3
    assert {label: calls[label] for label in originals} == dict.fromkeys(originals, 3)
    assert all(seams[label] > 0 for label in originals) and cpu > max(seams.values())
    assert all(_resolve(module, attribute) is originals[label]
               for _, module, attribute, label in session_phases.SEAMS)


def _resolve(module: str, attribute: str) -> object:
    owner: object = importlib.import_module(module)
    for name in attribute.split("."):
        owner = getattr(owner, name)
    return owner
