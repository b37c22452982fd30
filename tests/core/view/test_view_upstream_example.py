"""The document of upstream's fixture scenario against ``formats/asz-view-example.yaml``, the whole
document upstream's own code printed for it: node for node, key for key, in the same order.

An ``sd`` build lands upstream's files byte for byte, so its document is the example's but for
the summary's ``withheld`` (the spec's text adds it) and the order of the relations (compared as
a set: the example lists them by id, where the spec's text orders them as they happened). A
``claude-code`` build lands the asz plugin's change record after the transcripts, so there a
position in an id or a reference is compared by row and part only, and ``changes`` (the step's
change record ids) is not compared; nor is the compaction boundary's ``text`` and ``bytes``,
which are the runtime's line there.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from asz_core.scenario.expect import load_expectations
from asz_core.scenario.model import load_scenario
from asz_core.scenario.workspace import Workspace
from asz_core.view import build_view

pytestmark = pytest.mark.corpus

AT_MS = 1_767_225_600_000  #: 2026-01-01T00:00:00Z, the example's base time
_POSITION = re.compile(r"/\d+/(\d+)")


def _same_place(value: Any) -> Any:
    """``value`` with every landed sequence left out: ids keep their row, references row and part."""
    if isinstance(value, str):
        return _POSITION.sub(r"/@/\1", value)
    if isinstance(value, list):
        return [_same_place(v) for v in value]
    if isinstance(value, dict):
        if "seq" in value and "row" in value:
            return {k: v for k, v in value.items() if k != "seq"}
        return {k: _same_place(v) for k, v in value.items() if k != "changes"}
    return value


def _nodes(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out, stack = {}, [*doc["talks"], *doc["loose"]]
    while stack:
        node = stack.pop()
        out[_same_place(node["id"])] = node
        stack.extend(node.get("children", []))
    return out


@pytest.mark.parametrize("fmt", ["sd", "claude-code"])
def test_the_fixture_document_is_upstreams_example_node_for_node(shared: Path, tmp_path: Path, fmt: str) -> None:
    scenario = shared / "corpus" / "upstream" / "tests" / "scenarios" / "fixture.yaml"
    example = yaml.safe_load((shared / "spec" / "upstream" / "formats" / "asz-view-example.yaml").read_text())
    loaded = load_scenario(scenario)
    ws = Workspace(loaded, load_expectations(loaded), fmt, tmp_path / fmt, AT_MS)
    ws.build()  # the whole scenario at once, then one parse: one round, as the example was made
    ws.collect()  # a runtime's files go through its adapter; an sd build is landed already
    assert ws.parse().rounds
    doc = build_view(ws.out, ws.session)

    assert list(doc) == list(example)
    assert list(doc["summary"]) == [*example["summary"], "withheld"]  # the spec's text adds withheld
    for key in ("conversation", "sessions", "parser", "policy", "streams", "segments", "unresolved"):
        assert doc[key] == example[key], key
    summary = {k: v for k, v in doc["summary"].items() if k not in ("changes", "withheld")}
    assert summary == {k: v for k, v in example["summary"].items() if k != "changes"}
    assert [r["round"] for r in doc["rounds"]] == [1] and doc["rounds"][0]["verified"]
    ours, theirs = _nodes(doc), _nodes(example)
    assert list(ours) == list(theirs)
    for id, node in ours.items():
        mine, want = _same_place(node), _same_place(theirs[id])
        mine.pop("children", None), want.pop("children", None)
        if node["kind"] == "epoch.boundary":
            for key in ("text", "bytes"):
                mine.pop(key), want.pop(key)
        assert list(mine) == list(want), id
        assert mine == want, id
    assert sorted(_same_place(doc["relations"]), key=str) == sorted(_same_place(example["relations"]), key=str)


def test_an_sd_build_of_the_fixture_prints_upstreams_example_document(shared: Path, tmp_path: Path) -> None:
    scenario = shared / "corpus" / "upstream" / "tests" / "scenarios" / "fixture.yaml"
    example = yaml.safe_load((shared / "spec" / "upstream" / "formats" / "asz-view-example.yaml").read_text())
    loaded = load_scenario(scenario)
    ws = Workspace(loaded, load_expectations(loaded), "sd", tmp_path, AT_MS)
    ws.build()
    assert ws.parse().rounds
    doc = build_view(ws.out, ws.session)

    # the same landed files and the same round, digest for digest
    for key in ("head", "rounds", "files", "talks", "loose", "workspace_changes"):
        assert doc[key] == example[key], key
    assert {k: v for k, v in doc["summary"].items() if k != "withheld"} == example["summary"]
    assert sorted(doc["relations"], key=str) == sorted(example["relations"], key=str)
