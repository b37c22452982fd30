"""``push`` sends a session's rounds after its landed files, once each, saying what they are."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from asz_core.cli.app import App
from asz_core.cli.main import main
from asz_core.host import PluginHost
from asz_core.scenario import mock_adapter
from asz_core.scenario.receiver import make_receiver

from .conftest import build_sd

pytestmark = pytest.mark.corpus


def _push(config: Path) -> int:
    host = PluginHost().load_entry_points()
    host.register("mock", mock_adapter)
    return main(["push", "--config", str(config)], App(host=host, out=io.StringIO(), err=io.StringIO()))


def test_rounds_travel_after_their_files_once_each_and_a_new_round_alone(scenarios: Path, tmp_path: Path) -> None:
    session = build_sd(scenarios / "growth.yaml", tmp_path, through="turn1")
    config = tmp_path / "asz.yaml"
    assert main(["parse", "--config", str(config)], App(out=io.StringIO(), err=io.StringIO())) == 0
    with make_receiver("http") as rx:
        with config.open("a", encoding="utf-8") as f:
            f.write(f"export:\n  otlp:\n    protocol: http\n    endpoint: {rx.endpoint}\n    timeout: 10s\n")
        assert _push(config) == 0
        first = list(rx.records)
        kinds = [r.attributes.get("asz.file.kind") for r in first]
        assert kinds[-1] == "round" and kinds.count("round") == 1 and len(kinds) > 1
        head = first[-1]
        assert head.attributes.get("asz.format") == "sf" and head.attributes.get("asz.round") == 1
        assert head.attributes.get("asz.conversation") == session
        assert head.attributes.get("asz.conversation.talks") == 1
        assert head.body == (tmp_path / str(head.attributes.get("asz.file"))).read_bytes()
        assert _push(config) == 0 and len(rx.records) == len(first)  # nothing new, nothing sent
        build_sd(scenarios / "growth.yaml", tmp_path, through="turn2")
        assert main(["parse", "--config", str(config)], App(out=io.StringIO(), err=io.StringIO())) == 0
        assert _push(config) == 0
        later = list(rx.records)[len(first):]
        assert [r.attributes.get("asz.file.kind") for r in later][-1] == "round"
        assert [r.attributes.get("asz.round") for r in later if r.attributes.get("asz.format") == "sf"] == [2]
