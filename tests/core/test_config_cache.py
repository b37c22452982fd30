"""The validated-configuration cache: a hit gives what validation gave, any input change misses,
and a configuration with a problem is never stored."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

from asz_core import configcache, hookimpl
from asz_core.config import ConfigError, load_config
from asz_core.host import PluginHost
from asz_core.plugin import AdapterInfo

CONFIG = """\
    storage:
      root: ./landed
    adapters:
      - name: claude-code-local
        source_root: projects
        exclude: []
      - name: claude-code-provider
        enabled: false
      - name: kiro
        enabled: false
    """


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ASZ_ROOT", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "asz" / "config"


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "asz.yaml"
    path.write_text(textwrap.dedent(text), "utf-8")
    return path


def test_a_hit_gives_what_validation_gave(tmp_path: Path, cache: Path) -> None:
    host = PluginHost().load_entry_points()
    path = _write(tmp_path, CONFIG)
    first = load_config(host, str(path))
    (entry,) = cache.glob("*.json")
    second = load_config(host, str(path))
    assert (second.source, second.data, second.adapters) == (first.source, first.data, first.adapters)
    assert second.adapters[0].options["source_root"] == str(tmp_path / "projects")
    assert second.root == tmp_path / "landed"
    assert oct(entry.stat().st_mode & 0o777) == oct(0o600)


def test_every_input_change_is_a_miss(tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    host = PluginHost().load_entry_points()
    path = _write(tmp_path, CONFIG)
    load_config(host, str(path))
    path.write_text(path.read_text("utf-8").replace("projects", "elsewhere"), "utf-8")
    assert load_config(host, str(path)).adapters[0].options["source_root"] == str(tmp_path / "elsewhere")
    monkeypatch.setenv("ASZ_ROOT", str(tmp_path / "moved"))
    assert load_config(host, str(path)).root == tmp_path / "moved"
    assert len(list(cache.glob("*.json"))) == 3


def test_a_problem_is_reported_every_time_and_never_stored(tmp_path: Path, cache: Path) -> None:
    host = PluginHost().load_entry_points()
    path = _write(tmp_path, CONFIG.replace("exclude: []", "exclude: 3"))
    for _ in range(2):
        with pytest.raises(ConfigError, match=r"adapters\[0\]\.exclude"):
            load_config(host, str(path))
    assert not cache.exists() or not list(cache.glob("*.json"))


def test_an_unreadable_entry_is_a_miss(tmp_path: Path, cache: Path) -> None:
    host = PluginHost().load_entry_points()
    path = _write(tmp_path, CONFIG)
    first = load_config(host, str(path))
    (entry,) = cache.glob("*.json")
    entry.write_text("{not json", "utf-8")
    assert load_config(host, str(path)).data == first.data


def test_the_cache_keeps_a_bounded_number_of_entries(tmp_path: Path, cache: Path) -> None:
    for n in range(configcache.KEEP + 5):
        configcache.store(f"{n:064x}", {"n": n})
    assert len(list(cache.glob("*.json"))) == configcache.KEEP


def test_two_keys_that_share_an_entry_name_are_each_a_miss_for_the_other(cache: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(configcache, "entry_name", lambda key: "same")
    configcache.store('{"file":"a"}', {"n": 1})
    assert configcache.load('{"file":"b"}') is None
    configcache.store('{"file":"b"}', {"n": 2})
    assert configcache.load('{"file":"a"}') is None
    assert configcache.load('{"file":"b"}') == {"n": 2, "key": '{"file":"b"}'}
    assert [p.name for p in cache.glob("*.json")] == ["same.json"]


def test_a_configuration_whose_bytes_are_not_utf8_is_keyed_by_every_byte(tmp_path: Path, cache: Path) -> None:
    host = PluginHost().load_entry_points()
    path = tmp_path / "asz.yaml"
    first = configcache.key({"file": b"# \xff\n".decode("utf-8", "surrogateescape")})
    second = configcache.key({"file": b"# \xfe\n".decode("utf-8", "surrogateescape")})
    assert first is not None and second is not None and first != second
    path.write_bytes(textwrap.dedent(CONFIG).encode() + b"# \xff\n")
    with pytest.raises(ConfigError):  # not UTF-8: refused by validation, and never stored
        load_config(host, str(path))
    assert not cache.exists() or not list(cache.glob("*.json"))


def test_a_pass_once_validated_loads_neither_jsonschema_nor_grpc(tmp_path: Path, cache: Path) -> None:
    path = _write(tmp_path, CONFIG)
    heavy = ("sorted(m for m in ('yaml', 'jsonschema', 'grpc', 'google.protobuf', 'importlib.metadata', "
             "'hashlib', "
             "'importlib.resources', 'asz_core.view', 'asz_core.verify', 'asz_core.providerbody', "
             "'asz_adapters.claude_code_local.sources', 'asz_adapters.claude_code_provider.land', "
             "'asz_adapters.kiro.land', 'sqlite3', 'asz_adapters.kiro.adapter', "
             "'asz_adapters.claude_code_provider.adapter', 'asz_adapter_jsonl') if m in sys.modules)")
    in_process = ("import sys; from asz_core.host import PluginHost; from asz_core.config import load_config; "
                  "from asz_core.pipeline import run_pass; host = PluginHost().load_entry_points(); "
                  f"run_pass(host, load_config(host, sys.argv[1])); print({heavy})")
    command = f"import sys; from asz_core.cli import main; main(['run', '--config', sys.argv[1]]); print({heavy})"
    env = {**os.environ, "XDG_CACHE_HOME": str(cache.parent.parent)}

    def run(code: str) -> list[str]:
        done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, env=env,
                              cwd=tmp_path, check=True)
        loaded: list[str] = ast.literal_eval(done.stdout.splitlines()[-1])
        return loaded

    # the first validates, and lists the entry points (asz_core.entrypoints caches them)
    assert {"importlib.metadata", "jsonschema", "yaml"} <= set(run(in_process))
    # The second finds both cached; the commands that view, verify or print YAML load what
    # they need when they run, the adapters what they land with when a session lands, and
    # the host only the adapters the configuration names (here claude-code-local alone).
    assert run(in_process) == []
    # the first run of the command parses the root, which takes digests (hashlib, OpenSSL); a
    # run with nothing to land or parse takes none, and neither do its caches' keys
    assert set(run(command)) <= {"hashlib"}
    assert run(command) == []


def _adapter(default: int) -> types.ModuleType:
    module = types.ModuleType(f"adapter_{default}")

    @hookimpl
    def asz_adapter_info() -> AdapterInfo:
        return AdapterInfo(version="1.0", runtime="Test")

    @hookimpl
    def asz_options_schema() -> dict[str, object]:
        return {"depth": {"type": "integer", "default": default}}

    module.asz_adapter_info = asz_adapter_info  # type: ignore[attr-defined]
    module.asz_options_schema = asz_options_schema  # type: ignore[attr-defined]
    return module


def test_a_named_adapter_whose_options_changed_or_that_is_gone_is_a_miss(tmp_path: Path, cache: Path) -> None:
    path = _write(tmp_path, "adapters:\n  - name: t\n")
    host = PluginHost()
    host.register("t", _adapter(1))
    assert load_config(host, str(path)).adapters[0].options["depth"] == 1
    assert load_config(host, str(path)).adapters[0].options["depth"] == 1  # a hit
    changed = PluginHost()
    changed.register("t", _adapter(2))
    assert load_config(changed, str(path)).adapters[0].options["depth"] == 2
    with pytest.raises(ConfigError, match="adapter 't' is not installed"):
        load_config(PluginHost(), str(path))


def test_an_adapter_the_configuration_switches_off_is_not_imported(tmp_path: Path, cache: Path) -> None:
    path = _write(tmp_path, CONFIG)
    for _ in range(2):  # a miss, then a hit
        host = PluginHost().load_entry_points()
        assert load_config(host, str(path)).adapters[0].name == "claude-code-local"
        assert host.adapter("claude-code-local").loaded
        assert "kiro" in host._pending and "claude-code-provider" in host._pending
    assert host.adapters["kiro"].loaded and not host._pending  # listing every adapter imports them
