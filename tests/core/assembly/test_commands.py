"""``parse``, ``conversation`` and the parse at the end of ``run``, through the command line."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import yaml

from asz_core.cli.app import App
from asz_core.cli.main import main

from .conftest import build_sd

pytestmark = pytest.mark.corpus


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), App(out=out, err=err)), out.getvalue(), err.getvalue()


def test_parse_writes_a_round_once_and_conversation_prints_its_fold_and_its_document(scenarios: Path,
                                                                                tmp_path: Path) -> None:
    session = build_sd(scenarios / "fixture.yaml", tmp_path)
    config = str(tmp_path / "asz.yaml")
    code, out, _ = _cli("parse", "--config", config)
    assert code == 0 and f"parse: {session}: 1 round(s)" in out and "rounds=1" in out
    code, out, _ = _cli("parse", "--config", config, "--json")
    assert code == 0 and json.loads(out)["sessions"][0]["rounds"] == []
    code, plain, _ = _cli("conversation", "--config", config, session)
    assert code == 0 and plain.startswith(f"conversation {session}") and "talk talk/main/" in plain
    assert "follows epoch/main/" in plain
    code, as_json, _ = _cli("conversation", "--config", config, session, "--json")
    doc = json.loads(as_json)  # the conversation's asz.view document, as upstream's -json prints it
    assert doc["format"] == "asz.view" and doc["head"]["round"] == 1 and len(doc["talks"]) == 3
    code, as_yaml, _ = _cli("conversation", "--config", config, session, "--yaml")
    assert yaml.safe_load(as_yaml) == doc


def test_conversation_says_what_to_do_when_there_is_no_chain(tmp_path: Path) -> None:
    (tmp_path / "asz.yaml").write_text(f"storage: {{root: {tmp_path / 'root'}}}\nadapters: []\n")
    code, _, err = _cli("conversation", "--config", str(tmp_path / "asz.yaml"), "nope")
    assert code == 1 and "asz-pipeline parse" in err


def test_a_run_ends_with_a_parse_of_what_it_landed(corpus: Path, tmp_path: Path) -> None:
    projects = corpus / "claude-code" / "projects"
    slug = sorted(p.name for p in projects.iterdir() if p.is_dir())[0]
    (tmp_path / "asz.yaml").write_text(yaml.safe_dump({
        "storage": {"root": str(tmp_path / "root")},
        "adapters": [{"name": "claude-code-local", "source_root": str(projects), "include": [slug],
                      "exclude": []}]}))
    code, _, err = _cli("run", "--config", str(tmp_path / "asz.yaml"))
    assert code == 0, err
    sessions = [p.name for p in (tmp_path / "root").iterdir() if p.is_dir() and not p.name.startswith("_")]
    assert sessions
    chains = {p.name for p in (tmp_path / "root" / "_conversations").iterdir()}
    assert chains == set(sessions)
