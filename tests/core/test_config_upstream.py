"""asz.yaml as people bring it: upstream's own file, third-party adapters beside the built-in
ones, plugins switched off, and the default root in the user's data directory."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from asz_core.config import ConfigError, load_config
from asz_core.host import PluginHost

HERE = Path(__file__).resolve().parent
UPSTREAM = HERE / "data" / "upstream-asz.yaml"


@pytest.fixture
def host() -> PluginHost:
    return PluginHost().load_entry_points()


@pytest.fixture(autouse=True)
def _elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ASZ_ROOT", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "asz.yaml"
    path.write_text(textwrap.dedent(text), "utf-8")
    return path


def test_upstreams_own_asz_yaml_loads_with_one_warning_for_each_thing_it_skips(
        host: PluginHost, tmp_path: Path) -> None:
    config = load_config(host, str(UPSTREAM))
    assert config.root == tmp_path / "data"  # upstream: relative to the working directory
    assert [a.name for a in config.adapters] == ["claude-code-local", "changes", "claude-code-provider", "kiro"]
    text = "\n".join(config.warnings)
    for skipped in ("adapter 'claude-code-otlp'", "adapter 'langsmith-ingest'", "collector.mode"):
        assert text.count(skipped) == 1, (skipped, config.warnings)
    assert "'changes'" not in text  # upstream's changes adapter is this asz's too
    assert len(config.warnings) == 3
    assert f"{UPSTREAM}:18: adapter 'claude-code-otlp'" in text  # each with its file and line
    assert config.section("metrics") == {"enabled": True, "lookback": "72h"}  # derived here now
    assert config.section("parse")["max_round_bytes"] == 2097152  # a section this asz has now
    assert config.section("export.otlp")["metrics"] is True


@pytest.mark.parametrize(("lookback", "fine"), [("72h", True), ("3d", True), ("1d12h", True), ("0", True),
                                                ("none", True), ("72", False), ("soon", False), ("", False)])
def test_metrics_lookback_takes_a_duration_zero_or_none_and_refuses_anything_else(
        host: PluginHost, tmp_path: Path, lookback: str, fine: bool) -> None:
    path = _write(tmp_path, f"storage:\n  root: r\nmetrics:\n  enabled: false\n  lookback: '{lookback}'\n")
    if fine:
        assert load_config(host, str(path)).section("metrics")["lookback"] == lookback
    else:
        with pytest.raises(ConfigError) as info:
            load_config(host, str(path))
        assert "lookback" in str(info.value.problems)


def test_an_unknown_key_beside_upstreams_is_still_an_error_with_file_line_and_key(
        host: PluginHost, tmp_path: Path) -> None:
    text = UPSTREAM.read_text("utf-8").replace("  lookback: 72h\n", "  lookback: 72h\nparsing: {}\n")
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(host, str(path))
    (problem,) = info.value.problems
    assert problem.startswith(f"{path}:67: parsing: unknown key")


def test_an_unknown_key_in_an_adapter_entry_is_still_an_error(host: PluginHost, tmp_path: Path) -> None:
    path = _write(tmp_path, """\
        adapters:
          - name: claude-code-local
            listen: 127.0.0.1:4317
        """)
    with pytest.raises(ConfigError) as info:
        load_config(host, str(path))
    assert any(p.startswith(f"{path}:3: adapters[0].listen: unknown key") for p in info.value.problems)


def test_a_file_naming_one_adapter_leaves_the_built_in_ones_on_in_their_order(
        host: PluginHost, tmp_path: Path) -> None:
    path = _write(tmp_path, """\
        adapters:
          - name: claude-code-provider
            exclude: []
          - name: kiro
            enabled: false
        """)
    config = load_config(host, str(path))
    assert [(a.name, a.enabled) for a in config.adapters] == [
        ("claude-code-local", True), ("changes", True), ("claude-code-provider", True), ("kiro", False)]
    provider = config.adapters[2].options
    assert provider["exclude"] == [] and provider["collector"]["interval"] == "10m"


def test_a_third_party_adapter_runs_after_the_built_in_ones(host: PluginHost, tmp_path: Path) -> None:
    if "jsonl" not in host.adapter_names():
        pytest.skip("the example adapter (examples/asz-adapter-jsonl) is not installed")
    path = _write(tmp_path, "adapters:\n  - name: jsonl\n    source_root: ./logs\n")
    config = load_config(host, str(path))
    assert [a.name for a in config.adapters if a.enabled] == [
        "jsonl", "claude-code-local", "changes", "claude-code-provider", "kiro"]
    assert config.adapters[0].options["source_root"] == str(tmp_path / "logs")


def test_the_default_root_is_the_users_data_directory_never_the_working_directory(
        host: PluginHost, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path, "view:\n  hide: []\n")
    assert load_config(host, str(path)).root == tmp_path / "share" / "asz"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/is/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert load_config(host, str(path)).root == tmp_path / "home" / ".local" / "share" / "asz"


def test_the_default_root_on_macos_is_application_support(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from asz_core import userdirs

    monkeypatch.setattr(userdirs.sys, "platform", "darwin")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert userdirs.data_dir() == str(tmp_path / "Library" / "Application Support" / "asz")


def test_a_plugin_is_switched_off_by_name_and_an_unknown_one_is_named(host: PluginHost, tmp_path: Path) -> None:
    path = _write(tmp_path, "plugins:\n  otlp-push:\n    enabled: false\n  no-such:\n    enabled: false\n")
    config = load_config(host, str(path))
    assert not config.plugin_enabled("otlp-push") and config.plugin_enabled("anything-else")
    (warning,) = config.warnings
    assert warning.startswith(f"{path}: plugins.no-such: no plugin of that name is installed")


def test_an_adapter_named_under_plugins_is_told_where_it_is_switched_off(host: PluginHost, tmp_path: Path) -> None:
    path = _write(tmp_path, "plugins:\n  kiro:\n    enabled: false\n")
    (warning,) = load_config(host, str(path)).warnings
    assert warning == (f"{path}: plugins.kiro: kiro is an adapter, and this switches nothing off; "
                       f"list it under adapters: with `enabled: false` to skip it")
