"""The scenario runner's ``view`` key on a small parsed session: what it compares, and that it fails
by name on what differs, on a count it is not given, and on a key it does not know."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import asz_core.scenario.check  # noqa: F401 - registers every key, as the runner does
from asz_core.scenario.keys import KEY_CHECKERS
from asz_core.view.walk import walk
from tests.core.view.view_helpers import SESSION, land, note, prompt, reply, view_of


def _check(root: Path, want: Any) -> str | None:
    return KEY_CHECKERS["view"](SimpleNamespace(out=root, session=SESSION), want)  # type: ignore[arg-type]


def test_the_view_key_compares_what_is_written_and_names_what_differs(tmp_path: Path) -> None:
    land(tmp_path, {"main": [prompt("P1", "run the build"), note("the rules", ["injected", "system_prompt"]),
                             reply("m1", text="Built.")]})
    doc = view_of(tmp_path)
    assert len(list(walk(doc))) > 3
    assert _check(tmp_path, {"state": "verified", "problems": 0, "talks": 1, "rounds": 1, "files": 2,
                             "first_talk": {"label": "run the build", "reply": "Built.", "runs": 1},
                             "flags": {"system_prompt": 1, "injected": 1}}) is None
    assert _check(tmp_path, {"talks": 2, "first_talk": {"label": "other"}}) == (
        "view.talks is 1, want 2; view.first_talk.label is 'run the build', want 'other'")
    assert _check(tmp_path, {"hide": ["system_prompt"],
                             "withheld": {"system_prompt": 1, "provider_bodies": 0}}) is None
    found = _check(tmp_path, {"hide": ["system_prompt"], "withheld": {"system_prompt": 0}})
    assert found == ("view.withheld.provider_bodies is 0, and the expectation lists nothing for it; "
                     "view.withheld.system_prompt is 1, want 0")
    assert _check(tmp_path, {"talkz": 1}) == "no such view key: talkz"

