"""A scenario written inline, built, collected and parsed: the root a property test reads."""

from __future__ import annotations

from pathlib import Path

from asz_core.scenario.check import DEFAULT_AT_MS
from asz_core.scenario.expect import load_expectations
from asz_core.scenario.model import load_scenario
from asz_core.scenario.workspace import Workspace


def parsed_workspace(tmp_path: Path, name: str, text: str, fmt: str) -> Workspace:
    """``text`` written as ``tmp_path/name``, built in ``fmt``, collected and parsed once."""
    path = tmp_path / name
    path.write_text(text)
    scenario = load_scenario(path)
    ws = Workspace(scenario, load_expectations(scenario), fmt, tmp_path / fmt, DEFAULT_AT_MS)
    ws.build()
    ws.collect()
    ws.parse()
    return ws
