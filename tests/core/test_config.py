"""asz.yaml: found in the documented order, merged over the defaults, every problem located."""

from __future__ import annotations

import textwrap
import types
from pathlib import Path

import pytest

from asz_core import hookimpl
from asz_core.config import ConfigError, find_config, load_config, parse_duration
from asz_core.host import PluginHost
from asz_core.plugin import AdapterInfo
from tests.helpers import REPO


def _adapter(schema: dict[str, object] | None = None) -> types.ModuleType:
    module = types.ModuleType("test_adapter")

    @hookimpl
    def asz_adapter_info() -> AdapterInfo:
        return AdapterInfo(version="1.0", runtime="Test")

    @hookimpl
    def asz_options_schema() -> dict[str, object]:
        return schema or {}

    module.asz_adapter_info = asz_adapter_info  # type: ignore[attr-defined]
    module.asz_options_schema = asz_options_schema  # type: ignore[attr-defined]
    return module


def _host(**adapters: types.ModuleType) -> PluginHost:
    host = PluginHost()
    for name, module in adapters.items():
        host.register(name, module)
    return host


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "asz.yaml"
    path.write_text(textwrap.dedent(text), "utf-8")
    return path


def _problems(host: PluginHost, path: Path) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(host, str(path))
    return info.value.problems


def test_defaults_fill_every_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ASZ_ROOT", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    path = _write(tmp_path, """\
        adapters:
          - name: t
            source_root: src
        """)
    config = load_config(_host(t=_adapter({"depth": {"type": "integer", "default": 3}})), str(path))
    (entry,) = config.adapters
    assert entry.options["collector"] == {"interval": "10m", "max_delta_bytes": 2097152}
    assert entry.options["exclude"] == ["/private/tmp/**"] and entry.options["depth"] == 3
    assert entry.options["source_root"] == str(tmp_path / "src")  # relative to the working directory
    assert config.root == tmp_path / "share" / "asz"  # the default root: the user's data directory


def test_a_relative_root_resolves_against_the_working_directory_as_upstream_and_asz_root_overrides(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path, "storage:\n  root: ./landed\nadapters: []\n")
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.delenv("ASZ_ROOT", raising=False)
    assert load_config(_host(), str(path)).root == elsewhere / "landed"
    monkeypatch.setenv("ASZ_ROOT", str(tmp_path / "elsewhere"))
    assert load_config(_host(), str(path)).root == tmp_path / "elsewhere"


def test_yaml_syntax_error_names_file_line_and_column(tmp_path: Path) -> None:
    path = _write(tmp_path, "storage:\n  root: [unclosed\nadapters: []\n")
    (problem,) = _problems(_host(), path)
    assert problem.startswith(f"{path}:") and "YAML syntax" in problem


@pytest.mark.parametrize("text", [
    "storage:\n  root: [unclosed\nadapters: []\n",
    "storage:\n  root: ./d\n bad: 1\n",
    "storage:\n  root: 'open\n",
    "storage: *nowhere\n",
    "storage: !!python/object:os.system x\n",
    "storage:\n  root: ./d\n  rooot: typo\nadapters: [{name: t, depth: 1.5}]\n",
])
def test_libyaml_and_the_pure_python_parser_place_every_problem_alike(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    # PyYAML built without libyaml parses in Python: the same problems at the same places
    # (libyaml words a few of them differently, so only where they are is compared)
    import yaml

    assert yaml.__with_libyaml__, "PyYAML's wheels carry libyaml; the C parser is the one users run"
    host = _host(t=_adapter({"properties": {"depth": {"type": "integer"}}}))
    (tmp_path / "c").mkdir()
    with_libyaml = _problems(host, _write(tmp_path / "c", text))
    monkeypatch.delattr(yaml, "CSafeLoader")
    (tmp_path / "py").mkdir()
    in_python = _problems(host, _write(tmp_path / "py", text))

    def places(problems: list[str], directory: Path) -> list[str]:
        return [p.removeprefix(str(directory)).partition(": YAML syntax")[0].split(" ")[0] for p in problems]
    assert places(with_libyaml, tmp_path / "c") == places(in_python, tmp_path / "py")
    assert all(":" in place for place in places(with_libyaml, tmp_path / "c"))


def test_unknown_key_wrong_type_each_with_line_and_path(tmp_path: Path) -> None:
    path = _write(tmp_path, """\
        storage:
          root: ./d
          rooot: typo
        adapters:
          - name: t
            enabled: "yes"
            collector:
              max_delta_bytes: lots
              interval: soon
            depth: 1.5
        """)
    problems = _problems(_host(t=_adapter({"depth": {"type": "integer"}})), path)
    text = "\n".join(problems)
    assert f"{path}:3: storage.rooot: unknown key" in text
    assert f"{path}:6: adapters[0].enabled: 'yes' is not of type 'boolean'" in text
    assert f"{path}:8: adapters[0].collector.max_delta_bytes: 'lots' is not of type 'integer'" in text
    assert f"{path}:9: adapters[0].collector.interval:" in text
    assert f"{path}:10: adapters[0].depth: 1.5 is not of type 'integer'" in text


def test_an_adapter_not_installed_lists_the_installed_ones(tmp_path: Path) -> None:
    path = _write(tmp_path, "adapters:\n  - name: t\n  - name: nope\n")
    (problem,) = _problems(_host(t=_adapter()), path)
    assert f"{path}:3: adapters[1].name: adapter 'nope' is not installed (installed adapters: t)" in problem


def test_an_adapter_whose_import_fails_says_why(tmp_path: Path) -> None:
    host = _host()
    from asz_core.host import ADAPTER_GROUP, LoadedPlugin
    host.adapters["broken"] = LoadedPlugin("broken", ADAPTER_GROUP, "broken_pkg.adapter",
                                           error="ModuleNotFoundError: No module named 'broken_dep'")
    path = _write(tmp_path, "adapters:\n  - name: broken\n")
    (problem,) = _problems(host, path)
    assert "failed to load: ModuleNotFoundError: No module named 'broken_dep'" in problem


def test_a_module_that_raises_on_import_is_a_load_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from asz_core.entrypoints import EntryPointSpec
    pkg = tmp_path / "explodes.py"
    pkg.write_text("raise RuntimeError('boom at import')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    record = PluginHost()._load(EntryPointSpec("explodes", "asz.adapters", "explodes"), "asz.adapters")
    assert not record.loaded and record.error == "RuntimeError: boom at import"


def test_an_adapter_listed_twice_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, "adapters:\n  - name: t\n  - name: t\n")
    (problem,) = _problems(_host(t=_adapter()), path)
    assert "listed twice" in problem


def test_lookup_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    explicit, env, local, user = (tmp_path / n for n in ("x.yaml", "env.yaml", "asz.yaml", "cfg"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(user))
    monkeypatch.delenv("ASZ_CONFIG", raising=False)
    assert find_config(None) is None
    (user / "asz").mkdir(parents=True)
    (user / "asz" / "asz.yaml").write_text("{}")
    assert find_config(None) == user / "asz" / "asz.yaml"
    local.write_text("{}")
    assert find_config(None) == Path("asz.yaml")
    monkeypatch.setenv("ASZ_CONFIG", str(env))
    assert find_config(None) == env
    assert find_config(str(explicit)) == explicit


def test_the_repository_asz_yaml_is_the_packaged_defaults() -> None:
    root_file = REPO / "asz.yaml"
    assert root_file.resolve() == (REPO / "asz_core" / "defaults" / "asz.yaml").resolve()
    text = root_file.read_text("utf-8")
    for name in ("claude-code-local", "changes", "claude-code-provider", "kiro"):
        assert f"- name: {name}" in text
    # upstream's order: the transcripts, then the change records, then the bodies
    assert (text.index("- name: claude-code-local") < text.index("- name: changes")
            < text.index("- name: claude-code-provider") < text.index("- name: kiro"))


@pytest.mark.parametrize(("text", "seconds"), [("10m", 600), ("1h30m", 5400), ("45s", 45), ("2h", 7200)])
def test_durations(text: str, seconds: int) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "10", "m", "1d", "10 m"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(ValueError):
        parse_duration(text)
