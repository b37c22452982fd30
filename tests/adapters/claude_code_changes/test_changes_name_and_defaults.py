"""``changes`` as upstream names and runs it: its name and its name before 0.5.0, on by default
reading Claude Code's plugin directory (quietly nothing while the plugin is not installed), the
plugin's data directories under either name it has had, and one directory per entry."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from asz_core.config import load_config
from asz_core.context import QuietReporter
from asz_core.errors import ConfigError
from asz_core.host import PluginHost
from asz_core.pipeline import run_pass
from asz_core.testing import PassRunner
from tests.adapters.claude_code_changes.test_cc_changes_landing import SESSION, change, landed, write


@pytest.fixture
def claude_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Claude Code's directory, as ``CLAUDE_CONFIG_DIR`` names it, with nothing in it yet."""
    home = tmp_path / "claude"
    home.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    return home


def _defaults_only(tmp_path: Path, root: Path) -> Path:
    """A configuration that keeps the built-in adapter list as it is, storage aside."""
    path = tmp_path / "asz.yaml"
    path.write_text(f"storage:\n  root: {root}\n", "utf-8")
    return path


def test_the_defaults_run_changes_after_the_transcripts_and_before_the_bodies(
        tmp_path: Path, claude_dir: Path) -> None:
    host = PluginHost().load_entry_points()
    config = load_config(host, str(_defaults_only(tmp_path, tmp_path / "root")))

    names = [a.name for a in config.adapters]
    assert names.index("claude-code-local") < names.index("changes") < names.index("claude-code-provider")
    [entry] = [a for a in config.adapters if a.name == "changes"]
    assert entry.enabled and entry.options["source_root"] == ""


def test_with_the_plugin_not_installed_the_default_pass_says_nothing_about_it(
        tmp_path: Path, claude_dir: Path) -> None:
    host = PluginHost().load_entry_points()
    reporter = QuietReporter()

    summary = run_pass(host, load_config(host, str(_defaults_only(tmp_path, tmp_path / "root"))), reporter=reporter)

    assert not summary.failed
    assert summary.by_adapter["changes"].found == 0
    assert not [w for w in reporter.warnings if "changes" in w or "plugins" in w]


def test_by_default_it_reads_the_plugins_data_under_claude_codes_directory(
        tmp_path: Path, claude_dir: Path, assert_root_verifies: Callable[[Path], None]) -> None:
    write(claude_dir / "plugins" / "data", "main", change("toolu_1") + b"\n", plugin="file-changes-skywalking")
    host = PluginHost().load_entry_points()
    root = tmp_path / "root"

    summary = run_pass(host, load_config(host, str(_defaults_only(tmp_path, root))), reporter=QuietReporter())

    assert (summary.by_adapter["changes"].records, summary.failed) == (1, False)
    [(header, _)] = landed(root)
    assert (header["adapter"], header["src"]) == (
        "changes/0.1.0", f"file-changes-skywalking/output/{SESSION}/main.jsonl")
    assert_root_verifies(root)


def test_the_plugins_earlier_name_and_its_current_one_are_both_its_data_directories(
        asz_pass: PassRunner, tmp_path: Path, assert_root_verifies: Callable[[Path], None]) -> None:
    source = tmp_path / "data"
    other = "00000001-0000-4000-8000-0000000000bb"
    write(source, "main", change("toolu_1") + b"\n", plugin="asz-changes-local")
    write(source, "main", change("toolu_2", session=other) + b"\n", plugin="file-changes", session=other)
    write(source, "main", change("toolu_3") + b"\n", plugin="file-changesque")  # another plugin's
    asz_pass.configure(adapters=[{"name": "changes", "source_root": str(source), "exclude": []}])

    summary = asz_pass.run()

    assert (summary.totals.records, summary.failed) == (2, False)
    assert [h["src"] for h, _ in landed(asz_pass.root)] == [f"asz-changes-local/output/{SESSION}/main.jsonl"]
    assert_root_verifies(asz_pass.root)


def test_a_configuration_naming_claude_code_changes_runs_changes_and_lands_under_its_name(
        asz_pass: PassRunner, tmp_path: Path, assert_root_verifies: Callable[[Path], None]) -> None:
    source = tmp_path / "data"
    write(source, "main", change("toolu_1") + b"\n", plugin="asz-changes-inline")
    asz_pass.configure(adapters=[{"name": "claude-code-changes", "source_root": str(source), "exclude": []}])

    config = asz_pass.config()
    summary = asz_pass.run()

    assert [a.name for a in config.adapters if a.enabled] == ["changes"]
    assert not config.warnings
    assert summary.by_adapter["changes"].records == 1
    [(header, _)] = landed(asz_pass.root)
    assert header["adapter"] == "changes/0.1.0"
    assert_root_verifies(asz_pass.root)


def test_two_entries_reading_one_directory_are_refused_and_named(asz_pass: PassRunner, tmp_path: Path) -> None:
    source = tmp_path / "data"
    asz_pass.configure(adapters=[{"name": "changes", "source_root": str(source)},
                                 {"name": "claude-code-changes", "source_root": f"{source}/"}])

    with pytest.raises(ConfigError) as refused:
        asz_pass.config()

    [problem] = refused.value.problems
    assert "adapters[1].name: 'changes' is listed twice reading one directory" in problem
    assert str(source) in problem and "a source_root of its own" in problem


def test_two_entries_each_reading_its_own_directory_both_land(
        asz_pass: PassRunner, tmp_path: Path, assert_root_verifies: Callable[[Path], None]) -> None:
    plugin_data, recorder = tmp_path / "plugins" / "data", tmp_path / "recorder"
    other = "00000001-0000-4000-8000-0000000000bb"
    write(plugin_data, "main", change("toolu_1") + b"\n", plugin="file-changes-inline")
    write(recorder, "main", change("toolu_2", session=other) + b"\n", plugin="file-changes", session=other)
    asz_pass.configure(adapters=[{"name": "changes", "source_root": str(plugin_data), "exclude": []},
                                 {"name": "changes", "source_root": str(recorder), "exclude": []}])

    summary = asz_pass.run()

    assert (summary.totals.records, summary.by_adapter["changes"].sessions, summary.failed) == (2, 2, False)
    assert {h["session"] for h, _ in landed(asz_pass.root)} == {SESSION}
    assert (asz_pass.root / other / "streams" / "main").is_dir()
    assert_root_verifies(asz_pass.root)
