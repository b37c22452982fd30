"""The demo configuration lands the Kiro CLI session written for it, and the root verifies."""

from __future__ import annotations

import io
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from asz_core.cli.app import App
from asz_core.cli.main import main
from asz_core.sessiondata import open_file

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo"
SESSION = "5d1e2c4a-7b3f-4e8a-9c61-0f2d8a4b6e17"


def test_the_demo_lands_its_kiro_session(tmp_path, monkeypatch, assert_root_verifies):
    if not any(ep.name == "jsonl" for ep in entry_points(group="asz.adapters")):
        pytest.skip("the demo also runs the example jsonl adapter, which is not installed here")
    monkeypatch.setenv("ASZ_ROOT", str(tmp_path / "root"))
    monkeypatch.chdir(DEMO.parent.parent)  # the demo's paths are the top directory's
    out = io.StringIO()
    assert main(["run", "--config", str(DEMO / "asz.yaml")], app=App(out=out, err=out)) == 0, out.getvalue()
    (transcript,) = (tmp_path / "root" / SESSION / "streams" / "main").glob("transcript-*.sd")
    with open_file(transcript) as reader:
        records = list(reader)
    assert [r.from_ for r in records] == ["external", "agent", "external", "agent", "external", "agent"]
    assert [p.k for r in records for p in r.parts] == ["text", "text", "call", "result", "call",
                                                      "result", "text"]
    assert records[0].time == "2026-09-10T09:40:00.125Z"
    assert_root_verifies(tmp_path / "root")


def test_the_dialect_names_the_adapter_gives_at_start_up_are_its_dialects() -> None:
    from asz_adapters.kiro.about import DIALECTS
    from asz_adapters.kiro.dialect_cli import CliEventDialect
    from asz_adapters.kiro.dialect_db import DatabaseTurnDialect
    from asz_adapters.kiro.dialect_ide import IdeMessageDialect
    from asz_adapters.kiro.dialect_meta import CliMetaDialect, IdeMetaDialect

    names = (CliEventDialect.name, CliMetaDialect.name, DatabaseTurnDialect.name, IdeMessageDialect.name,
             IdeMetaDialect.name)
    assert names == DIALECTS
