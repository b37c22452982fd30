"""Upstream's own scenarios: the records claude-code/1 lands from the Claude Code files each one
builds are, field by field, the records the scenario's Session Data says (``records_match``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from asz_core.scenario.check import CheckOptions, check_scenario

SCENARIOS = ("assembly", "attachment-input", "discovery", "fixture", "growth", "lost-ends", "replay", "sdk-prompt",
             "string-tool-result", "synthetic", "system-records", "three-rounds", "tool-both-sides",
             "unfinished-tool")


#: the scenarios the default lane builds: a child and a reset, system records, an attached input;
#: every other one with ``--slow`` (each is two builds and two passes)
QUICK = ("fixture", "system-records", "attachment-input")


@pytest.mark.corpus
@pytest.mark.parametrize("name", [name if name in QUICK else pytest.param(name, marks=pytest.mark.slow)
                                  for name in SCENARIOS])
def test_every_upstream_scenario_lands_the_records_its_session_data_says(corpus: Path, name: str,
                                                                        tmp_path: Path) -> None:
    path = corpus / "upstream" / "tests" / "scenarios" / f"{name}.yaml"
    report = check_scenario(path, CheckOptions(out=tmp_path, properties=frozenset({"records_match"})))
    assert report.status_of("records_match") == {"pass"}, report.lines()
