"""The plugin host: loads adapters and plugins from entry points and calls their hooks.

Nothing else in asz touches ``pm.hook``. An adapter's module is imported when something first
asks for that adapter (the configuration names it, a pass runs it, ``plugins`` lists every one),
not at start-up: a pass imports only the adapters its configuration names. Only adapter hooks
are called on adapters (:mod:`asz_core.hookspecs`), so an adapter not imported misses nothing;
plugins (``asz.plugins``) observe every pass and are imported at start-up.

pluggy calls a hook's implementations newest first and entry points come in no set order,
while ``asz.yaml`` fixes the order adapters run in, so the adapter hooks are called one named
adapter at a time (``subset_hook_caller``), in the order the caller asks for. An entry point
that fails to import is kept as a load failure with its error, so that naming it in
``asz.yaml`` fails with that error, and listing plugins still works.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import pluggy

from asz_core import entrypoints, hookspecs
from asz_core.plugin import AdapterInfo, Found, SessionClaim

if TYPE_CHECKING:
    import argparse  # annotations only: a landing process never builds a parser
    from pathlib import Path

    from asz_core.collect import AppendSource
    from asz_core.context import AdapterContext, PassContext
    from asz_core.entrypoints import EntryPointSpec
    from asz_core.root.landing import LandedFile
    from asz_core.root.storage import SessionHandle
    from asz_core.session_report import Problem
    from asz_core.tally import PassSummary

__all__ = ["ADAPTER_GROUP", "PLUGIN_GROUP", "AdapterNotAvailable", "LoadedPlugin", "PluginHost"]

ADAPTER_GROUP = "asz.adapters"
PLUGIN_GROUP = "asz.plugins"


class AdapterNotAvailable(LookupError):
    """An adapter named in the configuration is not installed, or failed to import."""


class LoadedPlugin:
    """One entry point: what it is, where it came from, and whether it loaded.

    A plain class, not a dataclass: every command loads this module, and a dataclass is built at
    import by compiling the methods it writes."""

    __slots__ = ("distribution", "entry_point", "error", "group", "info", "module", "name", "version")

    def __init__(self, name: str, group: str, entry_point: str, distribution: str = "", version: str = "",
                 module: object | None = None, error: str = "", info: AdapterInfo | None = None) -> None:
        self.name = name
        self.group = group
        self.entry_point = entry_point
        self.distribution = distribution
        self.version = version
        #: the module (or object) whose hooks are registered; ``None`` when it did not load
        self.module = module
        self.error = error
        self.info = info

    @property
    def loaded(self) -> bool:
        return self.module is not None


class PluginHost:
    """Loads the ``asz.adapters`` and ``asz.plugins`` entry points and calls their hooks."""

    def __init__(self) -> None:
        self.pm = pluggy.PluginManager("asz")
        self.pm.add_hookspecs(hookspecs)
        self._adapters: dict[str, LoadedPlugin] = {}
        #: adapters found among the entry points and not imported yet
        self._pending: dict[str, EntryPointSpec] = {}
        self.plugins: dict[str, LoadedPlugin] = {}
        self._callers: dict[tuple[str, str], pluggy.HookCaller] = {}

    @property
    def adapters(self) -> dict[str, LoadedPlugin]:
        """Every installed adapter, each imported (any not imported yet is, now)."""
        for name in list(self._pending):
            self._load_adapter(name)
        return self._adapters

    # ---- loading ---------------------------------------------------------------------------

    def load_entry_points(self) -> PluginHost:
        """Import every plugin; note every adapter, to import when it is first asked for."""
        found = entrypoints.discover((ADAPTER_GROUP, PLUGIN_GROUP))
        for ep in sorted(found, key=lambda e: e.name):
            # the same name twice (one distribution seen twice on sys.path): the first is kept
            if ep.group == ADAPTER_GROUP and ep.name not in self._adapters:
                self._pending.setdefault(ep.name, ep)
            elif ep.group == PLUGIN_GROUP and ep.name not in self.plugins:
                self.plugins[ep.name] = self._load(ep, PLUGIN_GROUP)
        return self

    def adapter_names(self) -> list[str]:
        """The names of every installed adapter, imported or not (none is imported to answer)."""
        return sorted({*self._adapters, *self._pending})

    def _load_adapter(self, name: str) -> LoadedPlugin | None:
        """The adapter called ``name``, imported now if it was not yet; ``None`` if none is."""
        ep = self._pending.pop(name, None)
        if ep is not None:
            self._adapters[name] = self._load(ep, ADAPTER_GROUP)
        return self._adapters.get(name)

    def _load(self, ep: EntryPointSpec, group: str) -> LoadedPlugin:
        record = LoadedPlugin(name=ep.name, group=group, entry_point=ep.value,
                              distribution=ep.distribution, version=ep.version)
        try:
            module = ep.load()
        except Exception as exc:
            record.error = f"{type(exc).__name__}: {exc}"
            import logging  # only on this failure: logging costs every start-up a few ms

            logging.getLogger(__name__).debug("entry point %s failed to load", ep.name, exc_info=True)
            return record
        return self._register(record, module)

    def register(self, name: str, module: object, *, adapter: bool = True) -> LoadedPlugin:
        """Register an object directly (tests, embedding); as an entry point would be."""
        group = ADAPTER_GROUP if adapter else PLUGIN_GROUP
        record = LoadedPlugin(name=name, group=group,
                              entry_point=getattr(module, "__name__", repr(module)))
        if adapter:
            self._pending.pop(name, None)  # registered here: the entry point of that name is not imported
        record = self._register(record, module)
        (self._adapters if adapter else self.plugins)[name] = record
        return record

    def _register(self, record: LoadedPlugin, module: object) -> LoadedPlugin:
        plugin_name = f"{record.group}:{record.name}"
        self._callers.clear()  # a subset caller lists the plugins it leaves out
        try:
            self.pm.register(module, name=plugin_name)
        except Exception as exc:  # noqa: BLE001 - a malformed plugin is reported, not raised
            record.error = f"{type(exc).__name__}: {exc}"
            return record
        record.module = module
        if record.group == ADAPTER_GROUP:
            try:
                record.info = self._caller(record.name, "asz_adapter_info")()
            except Exception as exc:  # noqa: BLE001
                record.error = f"asz_adapter_info failed: {type(exc).__name__}: {exc}"
                record.module = None
                self.pm.unregister(name=plugin_name)
                return record
            if record.info is None:
                record.error = "it does not implement asz_adapter_info"
                record.module = None
                self.pm.unregister(name=plugin_name)
        return record

    def disable_plugin(self, name: str) -> None:
        """Let the plugin ``name`` go: none of its hooks is called again (``plugins.<name>.enabled:
        false`` in asz.yaml)."""
        record = self.plugins.get(name)
        if record is not None and record.loaded:
            self.pm.unregister(name=f"{PLUGIN_GROUP}:{name}")
            self._callers.clear()
            record.module = None
            record.error = "switched off in asz.yaml"

    # ---- adapters --------------------------------------------------------------------------

    def adapter(self, name: str) -> LoadedPlugin:
        """The loaded adapter called ``name``; ``AdapterNotAvailable`` says why not."""
        record = self._load_adapter(name)
        if record is None:
            installed = ", ".join(sorted(n for n, r in self.adapters.items() if r.loaded)) or "none"
            raise AdapterNotAvailable(f"adapter {name!r} is not installed (installed adapters: "
                                      f"{installed}); pip install the package that provides it, "
                                      f"or remove it from asz.yaml")
        if not record.loaded:
            raise AdapterNotAvailable(f"adapter {name!r} ({record.entry_point}) failed to load: "
                                      f"{record.error}")
        return record

    def _caller(self, name: str, hook: str) -> pluggy.HookCaller:
        self._load_adapter(name)  # its hooks registered before a caller of them is made
        return self._caller_of(f"{ADAPTER_GROUP}:{name}", hook)

    def _caller_of(self, plugin_name: str, hook: str) -> pluggy.HookCaller:
        """``hook`` as implemented by the one plugin registered as ``plugin_name``."""
        key = (plugin_name, hook)
        caller = self._callers.get(key)
        if caller is None:
            others = [p for n, p in self.pm.list_name_plugin() if n != plugin_name]
            caller = self.pm.subset_hook_caller(hook, remove_plugins=others)
            self._callers[key] = caller
        return caller

    def adapter_info(self, name: str) -> AdapterInfo | None:
        """What the installed adapter ``name`` says about itself; ``None`` if none loads."""
        record = self._load_adapter(name)
        return record.info if record is not None else None

    def options_schema(self, name: str) -> dict[str, Any]:
        schema: dict[str, Any] | None = self._caller(name, "asz_options_schema")()
        return schema or {}

    def discover(self, name: str, ctx: AdapterContext) -> Iterable[Found]:
        """What the adapter found: a list, or a generator that finds as it is walked."""
        found: Iterable[Found] | None = self._caller(name, "asz_discover")(ctx=ctx)
        return found or ()

    def claim(self, name: str, ctx: AdapterContext, found: Iterable[Found]) -> Iterable[SessionClaim]:
        """The adapter's claims: a list, or a generator that claims as it is walked (the pass
        lands each claim before it asks for the next)."""
        claims: Iterable[SessionClaim] | None = self._caller(name, "asz_claim")(ctx=ctx, found=found)
        return claims or ()

    def new_session(self, name: str, ctx: AdapterContext, claim: SessionClaim) -> AppendSource | None:
        """The one append source of ``claim``, for a session new to the root, when the adapter
        names one (``asz_new_session``); else ``None``."""
        source: AppendSource | None = self._caller(name, "asz_new_session")(ctx=ctx, claim=claim)
        return source

    def land(self, name: str, ctx: AdapterContext, claim: SessionClaim,
             session: SessionHandle) -> None:
        self._caller(name, "asz_land")(ctx=ctx, claim=claim, session=session)

    def verify(self, root: Path, sessions: frozenset[str] | None) -> list[Problem]:
        """What the ``asz_verify`` of every installed adapter finds in ``root``, adapter by
        adapter in the order of their names (each is imported: a root holds the tables of
        adapters the configuration no longer names too)."""
        from asz_core.failures import describe_failure
        from asz_core.session_report import Problem

        problems: list[Problem] = []
        for name, record in sorted(self.adapters.items()):
            if not record.loaded:
                continue
            try:
                for found in self._caller(name, "asz_verify")(root=root, sessions=sessions):
                    problems.extend(found or ())
            except Exception as exc:  # noqa: BLE001 - one adapter's failure is a problem said, not the end
                problems.append(Problem(name, "check failed", str(root),
                                        f"adapter {name}'s asz_verify failed ({describe_failure(exc)}); "
                                        f"its own tables were not checked: report it to its authors"))
        return problems

    # ---- observers -------------------------------------------------------------------------

    def pass_start(self, ctx: PassContext) -> None:
        self.pm.hook.asz_pass_start(ctx=ctx)

    def file_landed(self, ctx: PassContext, adapter: str, landed: LandedFile) -> None:
        self.pm.hook.asz_file_landed(ctx=ctx, adapter=adapter, landed=landed)

    def pass_end(self, ctx: PassContext, summary: PassSummary) -> None:
        self.pm.hook.asz_pass_end(ctx=ctx, summary=summary)

    def config_sections(self) -> dict[str, dict[str, Any]]:
        sections: dict[str, dict[str, Any]] = {}
        for contributed in self.pm.hook.asz_config_sections():
            sections.update(contributed or {})
        return sections

    def add_commands(self, subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
        self.pm.hook.asz_add_commands(subparsers=subparsers)

    def all_plugins(self) -> Iterable[LoadedPlugin]:
        yield from self.adapters.values()
        yield from self.plugins.values()
