"""The entry-point cache: a hit gives what ``importlib.metadata`` gives, and installing, removing
or editing a distribution's metadata on ``sys.path`` is a miss."""

from __future__ import annotations

import os
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from asz_core import entrypoints
from asz_core.entrypoints import EntryPointSpec
from asz_core.host import ADAPTER_GROUP, PLUGIN_GROUP, PluginHost

GROUPS = (ADAPTER_GROUP, PLUGIN_GROUP)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "asz" / "entry-points"


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory on ``sys.path`` to install fake distributions into."""
    directory = tmp_path / "site"
    directory.mkdir()
    monkeypatch.syspath_prepend(str(directory))
    return directory


def _install(site: Path, dist: str, version: str, adapters: dict[str, str]) -> Path:
    info = site / f"{dist}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n", "utf-8")
    lines = [f"{name} = {value}" for name, value in adapters.items()]
    (info / "entry_points.txt").write_text(f"[{ADAPTER_GROUP}]\n" + "\n".join(lines) + "\n", "utf-8")
    return info


def _names(found: list[EntryPointSpec]) -> set[str]:
    return {ep.name for ep in found if ep.group == ADAPTER_GROUP}


def _uncached(groups: tuple[str, ...] = GROUPS) -> list[EntryPointSpec]:
    return [EntryPointSpec(ep.name, group, ep.value, ep.dist.name if ep.dist else "",
                           ep.dist.version if ep.dist else "")
            for group in groups for ep in entry_points(group=group)]


def test_a_hit_gives_what_importlib_metadata_gives(cache: Path) -> None:
    first = entrypoints.discover(GROUPS)
    (entry,) = cache.glob("*.json")
    assert oct(entry.stat().st_mode & 0o777) == oct(0o600)
    second = entrypoints.discover(GROUPS)
    assert first == second == _uncached()
    assert {"claude-code-local", "claude-code-provider", "kiro"} <= _names(second)
    local = next(ep for ep in second if ep.name == "claude-code-local")
    assert (local.distribution, local.value) == ("asz", "asz_adapters.claude_code_local.adapter")


def test_installing_upgrading_editing_and_removing_a_distribution_is_a_miss(cache: Path, site: Path) -> None:
    assert "fake" not in _names(entrypoints.discover(GROUPS))
    info = _install(site, "fake_adapter", "1.0", {"fake": "fake_pkg.adapter"})
    found = entrypoints.discover(GROUPS)
    assert "fake" in _names(found) and found == _uncached()
    # an upgrade: the old metadata directory goes, a new one comes
    for child in info.iterdir():
        child.unlink()
    info.rmdir()
    info = _install(site, "fake_adapter", "2.0", {"fake": "fake_pkg.adapter2"})
    fake = next(ep for ep in entrypoints.discover(GROUPS) if ep.name == "fake")
    assert (fake.value, fake.version) == ("fake_pkg.adapter2", "2.0")
    # entry_points.txt edited in place (same directory, same length): still a miss
    text = (info / "entry_points.txt").read_text("utf-8")
    (info / "entry_points.txt").write_text(text.replace("adapter2", "adapter3"), "utf-8")
    stat = (info / "entry_points.txt").stat()
    os.utime(info / "entry_points.txt", ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert next(ep for ep in entrypoints.discover(GROUPS) if ep.name == "fake").value == "fake_pkg.adapter3"
    for child in info.iterdir():
        child.unlink()
    info.rmdir()
    assert "fake" not in _names(entrypoints.discover(GROUPS))
    assert entrypoints.discover(GROUPS) == _uncached()


def test_another_sys_path_is_another_key(cache: Path, tmp_path: Path) -> None:
    assert entrypoints.cache_key([*sys.path]) != entrypoints.cache_key([str(tmp_path), *sys.path])


def test_a_finder_that_supplies_distributions_turns_the_cache_off(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class Finder:
        @staticmethod
        def find_spec(*args: object) -> None:
            return None

        @staticmethod
        def find_distributions(*args: object) -> list[object]:
            return []

    monkeypatch.setattr(sys, "meta_path", [Finder, *sys.meta_path])
    assert entrypoints.cache_key() is None
    assert entrypoints.discover(GROUPS) == _uncached()
    assert not cache.exists() or not list(cache.glob("*.json"))


def test_an_unreadable_entry_is_a_miss(cache: Path) -> None:
    entrypoints.discover(GROUPS)
    (entry,) = cache.glob("*.json")
    entry.write_text("{not json", "utf-8")
    assert entrypoints.discover(GROUPS) == _uncached()
    entry.write_text('{"key": "x", "groups": [], "entry_points": 3}', "utf-8")
    assert entrypoints.discover(GROUPS) == _uncached()


def test_the_host_loads_a_newly_installed_adapter(cache: Path, site: Path) -> None:
    PluginHost().load_entry_points()
    package = site / "fake_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("", "utf-8")
    (package / "adapter.py").write_text(
        "from asz_core import hookimpl\nfrom asz_core.plugin import AdapterInfo\n\n"
        "@hookimpl\ndef asz_adapter_info():\n    return AdapterInfo(version='1', runtime='Fake')\n", "utf-8")
    _install(site, "fake_adapter", "1.0", {"fake": "fake_pkg.adapter"})
    record = PluginHost().load_entry_points().adapter("fake")
    assert record.loaded and record.info is not None and record.info.runtime == "Fake"
    assert (record.distribution, record.version, record.entry_point) == ("fake_adapter", "1.0", "fake_pkg.adapter")


def test_an_attribute_value_loads_the_attribute(site: Path) -> None:
    (site / "fake_mod.py").write_text("class Holder:\n    hooks = 'the hooks'\n", "utf-8")
    assert EntryPointSpec("x", ADAPTER_GROUP, "fake_mod:Holder.hooks").load() == "the hooks"
    with pytest.raises(ValueError, match="malformed"):
        EntryPointSpec("x", ADAPTER_GROUP, "not a value!").load()


def test_an_adapter_registered_by_name_takes_the_place_of_the_installed_one(cache: Path) -> None:
    import types

    from asz_core import hookimpl
    from asz_core.plugin import AdapterInfo

    module = types.ModuleType("replacement")

    @hookimpl
    def asz_adapter_info() -> AdapterInfo:
        return AdapterInfo(version="9", runtime="Replacement")

    module.asz_adapter_info = asz_adapter_info  # type: ignore[attr-defined]
    host = PluginHost().load_entry_points()
    record = host.register("kiro", module)
    assert record.loaded and host.adapter("kiro") is record
    assert record.info is not None and record.info.runtime == "Replacement"
    assert host.adapters["claude-code-local"].loaded  # the others import when listed
