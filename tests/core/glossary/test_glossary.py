"""``asz-pipeline glossary``: each runtime's names for the model's, declared by the adapters."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from asz_core.cli.app import EXIT_CONFIG, EXIT_OK
from asz_core.glossary import Glossary, Term, gather
from asz_core.host import PluginHost
from tests.helpers import run_cli


def _glossary(*args: str) -> subprocess.CompletedProcess[str]:
    return run_cli("glossary", *args)


def test_claude_code_and_kiro_each_declare_the_glossary_of_every_dialect_they_read() -> None:
    host = PluginHost().load_entry_points()
    declared = {g.dialect: g for g in gather(host)}
    assert {"claude-code/1", "kiro-cli/1", "kiro-cli-db/1", "kiro-ide/1"} <= set(declared)
    for name in ("claude-code-local", "kiro"):
        info = host.adapter(name).info
        assert info is not None
        owned = [d for d in declared if d in info.dialects]
        assert owned, f"{name} declares no glossary"
        for dialect in owned:
            assert declared[dialect].runtime == info.runtime


def test_the_claude_code_glossary_names_the_fields_its_dialect_reads() -> None:
    (claude,) = [g for g in gather(PluginHost().load_entry_points()) if g.dialect == "claude-code/1"]
    native = {t.model: t.native for t in claude.terms}
    assert len(claude.terms) == 39
    assert native["run"] == "promptId" and native["parent"] == "parentUuid" and native["id"] == "uuid"
    assert native["call"] == "message.id" and native["continues"] == "logicalParentUuid"


def test_every_name_a_glossary_declares_is_a_name_of_the_model(shared: Path) -> None:
    text = (shared / "spec/upstream/concepts-and-designs/glossary.md").read_text()
    text += (shared / "spec/upstream/adapters/claude-code-glossary.md").read_text()
    model_names = set(re.findall(r"`([a-z_]+(?:\.[a-z_]+)?)`", text))
    model_names |= {m.lower() for m in re.findall(r"\*\*([A-Za-z ]+)\*\*", text)}
    for glossary in gather(PluginHost().load_entry_points()):
        unknown = [t.model for t in glossary.terms if t.model not in model_names]
        assert not unknown, f"{glossary.dialect}: {unknown} are not names of the model"


def test_a_glossary_that_names_one_model_name_twice_is_refused() -> None:
    try:
        Glossary("x/1", "X", (Term("id", "a", "b"), Term("id", "c", "d")))
    except ValueError as exc:
        assert "twice" in str(exc)
    else:
        raise AssertionError("a duplicate model name was accepted")


def test_the_command_prints_one_dialect_as_a_table_and_all_of_them_as_json() -> None:
    done = _glossary("--dialect", "kiro-ide/1")
    assert done.returncode == EXIT_OK, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("kiro-ide/1 (Kiro)") and lines[1].split()[:2] == ["model", "Kiro"]
    assert any(line.split()[:2] == ["run", "executionId"] for line in lines)
    assert "claude-code/1" not in done.stdout
    whole = json.loads(_glossary("--json").stdout)["glossaries"]
    dialects = [g["dialect"] for g in whole]
    assert dialects == sorted(dialects) and "claude-code/1" in dialects
    assert all({"model", "native", "where", "note"} == set(t) for g in whole for t in g["terms"])


def test_a_dialect_no_adapter_declares_is_refused_with_the_ones_that_are() -> None:
    done = _glossary("--dialect", "nobody/1")
    assert done.returncode == EXIT_CONFIG
    assert "nobody/1" in done.stderr and "claude-code/1" in done.stderr and not done.stdout
