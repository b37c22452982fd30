"""The ``fixture`` scenario's tool changes a file: both builds land the plugin's record through
``claude-code-changes``, and the view lists it joined to the tool step."""

from __future__ import annotations

from pathlib import Path

import pytest

from asz_core.scenario.check import CheckOptions, check_scenario
from asz_core.testing import run_sdcheck

_PROPERTIES = frozenset({"every_line_a_record", "parts_keep_source_bytes", "cross_format", "records_match",
                         "changes_leave_the_fold"})


@pytest.mark.corpus
def test_the_fixtures_change_is_listed_joined_to_its_step_in_both_formats(corpus: Path, tmp_path: Path) -> None:
    report = check_scenario(corpus / "upstream" / "tests" / "scenarios" / "fixture.yaml",
                            CheckOptions(out=tmp_path, properties=_PROPERTIES))

    assert report.status_of("view") == {"pass"}, report.lines()
    for name in _PROPERTIES:
        assert report.status_of(name) == {"pass"}, (name, report.lines())
    roots = [p.parent for p in tmp_path.rglob("streams/main/changes-*.sd")]
    assert len(roots) >= 2  # a change file in each format's root
    for root in {r.parents[2] for r in roots}:
        verdict = run_sdcheck(root)
        assert verdict is None or verdict["ok"], verdict
