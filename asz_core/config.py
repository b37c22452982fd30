"""Configuration: find ``asz.yaml``, merge it over the built-in defaults, validate it whole.

The first file found among ``--config``, ``$ASZ_CONFIG``, ``./asz.yaml`` and the user config
directory (``$XDG_CONFIG_HOME/asz/asz.yaml``, else ``~/.config/asz/asz.yaml``) is merged over the
built-in defaults (the packaged ``asz.yaml``, which the repository root shows): mappings merge
key by key, and a file's ``adapters`` merge into the default list by name
(:func:`_merge_adapters`), so listing a third-party adapter leaves the built-in ones on.
``$ASZ_ROOT`` overrides ``storage.root``; an empty root (the default) is the platform's data
directory (:func:`asz_core.userdirs.data_dir`). Relative paths resolve against the working
directory, as upstream resolves them, so one file lands in one place whoever reads it.

Upstream's own ``asz.yaml`` loads: its sections and adapters this implementation does not have
yet (:data:`UPSTREAM_ONLY_SECTIONS`, :data:`UPSTREAM_ONLY_ADAPTERS`) and ``collector.mode`` are
each named in one warning and skipped; anything else unknown is an error. An adapter upstream
renamed is read under its current name (:data:`RENAMED_ADAPTERS`). An adapter may be listed
more than once when each entry reads a directory of its own (``source_root``); two entries that
read one directory are refused, as upstream refuses them.

Everything is validated with ``jsonschema`` before anything runs. Each error names the file, the
line and the key path, found by walking the YAML node tree, and says what was expected. A
configuration that validated is kept in a cache under a key of everything its result depends
on (:mod:`asz_core.configcache`), so a pass that finds the same inputs again skips importing
``yaml`` and ``jsonschema`` (most of a no-op pass's start-up) and gets the same result.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from asz_core import __version__, configcache, userdirs
from asz_core.errors import ConfigError
from asz_core.host import AdapterNotAvailable, PluginHost
from asz_core.metrics.lookback import LOOKBACK_PATTERN
from asz_core.page.prices_schema import PRICES_SCHEMA
from asz_core.retention.schema import RETENTION_SCHEMA

if TYPE_CHECKING:
    import yaml

__all__ = ["RENAMED_ADAPTERS", "UPSTREAM_ONLY_ADAPTERS", "UPSTREAM_ONLY_SECTIONS", "AdapterEntry", "Config",
           "ConfigError", "load_config", "parse_duration"]

_DEFAULTS_NAME = "asz.yaml"
_DURATION = re.compile(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")  # matched whole

COLLECTOR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        # upstream's: whether ``asz collect`` keeps collecting. Read by nothing here (``run`` is
        # one pass; ``run --watch`` and ``schedule install`` repeat it), so it has no default and
        # a file that sets it is told so (:func:`_upstream_notes`)
        "mode": {"enum": ["watch", "once"]},
        "interval": {"type": "string", "pattern": r"^(?=.)(\d+h)?(\d+m)?(\d+s)?$",
                     "default": "10m"},
        "max_delta_bytes": {"type": "integer", "minimum": 4096, "default": 2097152},
        # no default: absent means as many as the CPUs for a pass with many sessions (asz_core.workers)
        "workers": {"type": "integer", "minimum": 1, "maximum": 64},
        # no default: absent means asz_core.collect.split's; 0: a source's lines are never
        # converted in worker processes
        "split_from_bytes": {"type": "integer", "minimum": 0},
    },
    "default": {},
}

#: The options every adapter entry has; an adapter's own schema adds to these.
ADAPTER_BASE_PROPERTIES: dict[str, Any] = {
    "name": {"type": "string", "minLength": 1},
    "enabled": {"type": "boolean", "default": True},
    "source_root": {"type": "string", "default": ""},
    "include": {"type": "array", "items": {"type": "string", "minLength": 1}, "default": []},
    "exclude": {"type": "array", "items": {"type": "string", "minLength": 1},
                "default": ["/private/tmp/**"]},
    "collector": COLLECTOR_SCHEMA,
}

CORE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "storage": {
            "type": "object",
            "additionalProperties": False,
            # "": the platform's data directory for asz (asz_core.userdirs.data_dir)
            "properties": {"root": {"type": "string", "default": ""},
                           # when landed files give way to skeletons (asz_core.retention)
                           "retention": RETENTION_SCHEMA},
            "default": {},
        },
        "view": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "hide": {"type": "array", "uniqueItems": True,
                         "items": {"enum": ["system_prompt", "tool_schemas"]}, "default": []},
            },
            "default": {},
        },
        # what `usage` and the page price tokens at, laid over the packaged table (asz_core.page.prices)
        "usage": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"prices": PRICES_SCHEMA},
            "default": {},
        },
        # installed plugins (``asz.plugins``) switched off by name: ``plugins: {otlp-push: {enabled: false}}``
        "plugins": {
            "type": "object",
            "additionalProperties": {
                "type": "object", "additionalProperties": False,
                "properties": {"enabled": {"type": "boolean", "default": True}},
            },
            "default": {},
        },
        # upstream's derived metrics (``asz_core.metrics``): derived at the end of each pass
        "metrics": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "enabled": {"type": "boolean", "default": True},
                "lookback": {"type": "string", "pattern": LOOKBACK_PATTERN, "default": "72h"},
            },
            "default": {},
        },
        "parse": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"max_round_bytes": {"type": "integer", "minimum": 1, "default": 2097152}},
            "default": {},
        },
        "adapters": {
            "type": "array",
            "items": {"type": "object", "required": ["name"],
                      "properties": {"name": ADAPTER_BASE_PROPERTIES["name"]}},
            "default": [],
        },
    },
}


#: upstream's sections this implementation does not have yet: what each is, for the warning
UPSTREAM_ONLY_SECTIONS: dict[str, str] = {}
#: upstream's adapters this implementation does not have yet (unless one is installed)
UPSTREAM_ONLY_ADAPTERS: dict[str, str] = {
    "claude-code-otlp": "a listener for Claude Code's own telemetry",
    "langsmith-ingest": "the LangSmith tracing client's receiver",
}

#: adapters upstream renamed: a configuration written before names the old, read as the new
#: (``claude-code-changes`` is ``changes`` since upstream's 0.5.0)
RENAMED_ADAPTERS: dict[str, str] = {
    "claude-code-changes": "changes",
}


def parse_duration(text: str) -> float:
    """Seconds in a duration such as ``10m``, ``1h30m`` or ``45s``."""
    m = _DURATION.fullmatch(text)
    if not text or m is None:
        raise ValueError(f"{text!r} is not a duration such as 10m, 1h30m or 45s")
    hours, minutes, seconds = (int(g) if g else 0 for g in m.groups())
    return hours * 3600 + minutes * 60 + seconds


# No class of this module is a dataclass: every command loads this module, and a dataclass is
# built at import by compiling the methods it writes.


class AdapterEntry(NamedTuple):
    """One adapter as ``asz.yaml`` lists it, validated, with defaults filled in."""

    name: str
    enabled: bool
    options: dict[str, Any]


class Config:
    """The effective configuration."""

    __slots__ = ("adapters", "data", "source", "warnings")

    def __init__(self, source: str, data: dict[str, Any], adapters: list[AdapterEntry] | None = None,
                 warnings: list[str] | None = None) -> None:
        self.source = source  #: the file it came from, or "built-in defaults"
        self.data = data
        self.adapters: list[AdapterEntry] = adapters if adapters is not None else []
        #: what was read and skipped (upstream's sections and adapters not implemented here), one each
        self.warnings: list[str] = warnings if warnings is not None else []

    @property
    def root(self) -> Path:
        return Path(self.data["storage"]["root"])

    def plugin_enabled(self, name: str) -> bool:
        """Whether the installed plugin ``name`` is on (``plugins.<name>.enabled``, default yes)."""
        return bool(self.data.get("plugins", {}).get(name, {}).get("enabled", True))

    def section(self, dotted: str) -> dict[str, Any]:
        """A plugin's section, such as ``export.otlp`` (empty when absent)."""
        node: Any = self.data
        for key in dotted.split("."):
            node = node.get(key, {}) if isinstance(node, dict) else {}
        return node if isinstance(node, dict) else {}


# ---- finding and reading -------------------------------------------------------------------


def _user_config() -> Path:
    return Path(userdirs.config_dir()) / "asz.yaml"


def config_candidates(explicit: str | None) -> list[Path]:
    """Where the configuration may come from, in the documented order: the file named, else
    ``$ASZ_CONFIG`` (either is used whether it exists or not: its absence is reported), else
    ``./asz.yaml`` and then the user's, the first that is a file."""
    if explicit:
        return [Path(explicit)]
    env = os.environ.get("ASZ_CONFIG")
    if env:
        return [Path(env)]
    return [Path("asz.yaml"), _user_config()]


def find_config(explicit: str | None) -> Path | None:
    """The file to load, by the documented order; ``None`` means built-in defaults only."""
    candidates = config_candidates(explicit)
    if len(candidates) == 1:
        return candidates[0]
    return next((c for c in candidates if c.is_file()), None)


class _Document:
    """A YAML document: its values, its node tree (for line numbers) and its name."""

    __slots__ = ("data", "name", "node")

    def __init__(self, name: str, data: Any, node: yaml.Node | None) -> None:
        self.name = name
        self.data = data
        self.node = node

    def line_of(self, path: tuple[Any, ...], *, key: bool = False) -> int | None:
        """1-based line of the value at ``path`` (or of its key), the nearest known ancestor's
        when the path goes where the document does not."""
        import yaml  # loaded already: this document was parsed with it

        node = self.node
        line = node.start_mark.line + 1 if node is not None else None
        for step in path:
            found = None
            if isinstance(node, yaml.MappingNode):
                for k, v in node.value:
                    if k.value == step:
                        found = (k, v)
            elif isinstance(node, yaml.SequenceNode) and isinstance(step, int) and step < len(node.value):
                found = (node.value[step], node.value[step])
            if found is None:
                return line
            key_node, node = found
            line = (key_node if key else node).start_mark.line + 1
        return line


def _read_bytes(path: Path, name: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ConfigError([f"{name}: cannot read: {exc.strerror or exc}"]) from None


def _parse_yaml(raw: bytes, name: str) -> _Document:
    import yaml  # only when the configuration is not in the cache

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError([f"{name}: not UTF-8 text ({exc.reason} at byte {exc.start})"]) from None
    try:
        # libyaml's parser where PyYAML was built with it (its wheels are): the same nodes and
        # marks, a tenth of the pure-Python parser's time, which a pass not in the cache paid
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
        try:
            node = loader.get_single_node()
            data = loader.construct_document(node) if node is not None else {}
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{name}:{mark.line + 1}:{mark.column + 1}" if mark else name
        raise ConfigError([f"{where}: YAML syntax: {exc.problem or exc}"]) from None
    except yaml.YAMLError as exc:
        raise ConfigError([f"{name}: YAML: {exc}"]) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError([f"{name}:1: the file must be a mapping of sections (storage, adapters, ...)"])
    return _Document(name, data, node)


_DEFAULTS_LABEL = "built-in defaults (asz_core/defaults/asz.yaml)"


def _defaults_path() -> Path:
    # a file of this package, beside this module (importlib.resources would cost a no-op pass
    # pathlib's and tempfile's imports and more; asz is never installed zipped)
    return Path(__file__).with_name("defaults") / _DEFAULTS_NAME


def _merge(base: Any, override: Any) -> Any:
    """``override`` over ``base``, mapping by mapping; ``adapters`` is merged by
    :func:`_merge_adapters`, which knows the entries' names."""
    if isinstance(base, dict) and isinstance(override, dict):
        out = dict(base)
        for key, value in override.items():
            out[key] = copy.deepcopy(value) if key == "adapters" else _merge(base.get(key), value)
        return out
    return copy.deepcopy(override)


class _Listed:
    """One adapter entry after the merge, and where its lines are: the document and the index
    of the entry there (the file's own when the file names it, else the defaults')."""

    __slots__ = ("doc", "entry", "index")

    def __init__(self, entry: Any, doc: _Document, index: int) -> None:
        self.entry = entry
        self.doc = doc
        self.index = index


def _merge_adapters(defaults: _Document, doc: _Document | None) -> list[_Listed]:
    """The file's adapter list merged into the built-in one, so that naming a third-party adapter
    does not switch the built-in ones off (``enabled: false`` does):

    1. an entry naming a built-in adapter is merged over its default entry;
    2. the file's entries run in the file's order;
    3. a built-in entry the file does not name keeps its place before the next built-in the file
       names (``claude-code-provider`` stays after ``claude-code-local``), else goes at the end.
    """
    base = defaults.data.get("adapters") or []
    listed = doc.data.get("adapters") if doc is not None else None
    builtin = {d["name"]: (i, d) for i, d in enumerate(base)}
    if doc is None or not isinstance(listed, list):
        return [_Listed(copy.deepcopy(d), defaults, i) for i, d in enumerate(base)]
    out: list[_Listed] = []
    named: list[Any] = []
    for index, entry in enumerate(listed):
        name = entry.get("name") if isinstance(entry, dict) else None
        merged = _merge(builtin[name][1], entry) if isinstance(name, str) and name in builtin else entry
        out.append(_Listed(copy.deepcopy(merged), doc, index))
        named.append(name)
    order = list(builtin)
    for position, name in enumerate(order):
        if name in named:
            continue
        later = [named.index(n) for n in order[position + 1:] if n in named]
        at = min(later) if later else len(named)
        index, entry = builtin[name]
        out.insert(at, _Listed(copy.deepcopy(entry), defaults, index))
        named.insert(at, name)
    return out


# ---- validating ----------------------------------------------------------------------------


def _fill_defaults(schema: Mapping[str, Any], instance: Any) -> None:
    """Set every ``default`` the schema gives for a key the instance leaves out."""
    if not isinstance(instance, dict):
        return
    for key, sub in schema.get("properties", {}).items():
        if key not in instance and "default" in sub:
            instance[key] = copy.deepcopy(sub["default"])
        if key in instance:
            _fill_defaults(sub, instance[key])


def _path_text(path: tuple[Any, ...]) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out or "(top level)"


def _problems(schema: dict[str, Any], instance: Any, doc: _Document,
              prefix: tuple[Any, ...] = ()) -> Iterator[tuple[int, str]]:
    import jsonschema  # only when the configuration is not in the cache

    validator = jsonschema.Draft202012Validator(schema)
    for error in validator.iter_errors(instance):
        path = prefix + tuple(error.absolute_path)
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            allowed = set(error.schema.get("properties", {}))
            for extra in sorted(k for k in error.instance if k not in allowed):
                line = doc.line_of((*path, extra), key=True) or 0
                known = ", ".join(sorted(allowed)) or "none"
                yield line, (f"{doc.name}:{line}: {_path_text((*path, extra))}: unknown key "
                             f"(known keys here: {known})")
            continue
        line = doc.line_of(path) or 0
        yield line, f"{doc.name}:{line}: {_path_text(path)}: {error.message}"


def _with_sections(sections: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """The core schema with the plugins' sections (``export.otlp``) added where they go."""
    schema = copy.deepcopy(CORE_SCHEMA)
    for dotted, section in sections.items():
        node = schema
        keys = dotted.split(".")
        for key in keys[:-1]:
            props = node.setdefault("properties", {})
            node = props.setdefault(key, {"type": "object", "additionalProperties": False,
                                          "properties": {}, "default": {}})
        node.setdefault("properties", {})[keys[-1]] = {"default": {}, **section}
    return schema


def adapter_entry_schema(host: PluginHost, name: str) -> dict[str, Any]:
    own = host.options_schema(name)
    return {"type": "object", "additionalProperties": False, "required": ["name"],
            "properties": {**ADAPTER_BASE_PROPERTIES, **own}}


def load_config(host: PluginHost, explicit: str | None = None) -> Config:
    """Find, merge, fill and validate the configuration; ``ConfigError`` lists every problem."""
    path = find_config(explicit)
    defaults_bytes = _read_bytes(_defaults_path(), _DEFAULTS_LABEL)
    file_bytes = _read_bytes(path, str(path)) if path is not None else None
    key = _cache_key(host, path, defaults_bytes, file_bytes)
    cached = configcache.load(key) if key is not None else None
    if cached is not None and _same_schemas(host, cached):
        entries = [AdapterEntry(name, enabled, options) for name, enabled, options in cached["adapters"]]
        config = Config(source=cached["source"], data=cached["data"], adapters=entries,
                        warnings=list(cached.get("warnings") or []))
        return _with_plugin_warnings(host, config)
    config = _validate(host, path, defaults_bytes, file_bytes)
    schemas = _adapter_schemas(host, [a.name for a in config.adapters if a.enabled])
    if key is not None and schemas is not None:
        configcache.store(key, {"source": config.source, "data": config.data, "schemas": schemas,
                                "warnings": config.warnings,
                                "adapters": [[a.name, a.enabled, a.options] for a in config.adapters]})
    return _with_plugin_warnings(host, config)


def _with_plugin_warnings(host: PluginHost, config: Config) -> Config:
    """``config`` with a warning for each plugin ``plugins`` names that is not installed (not
    cached: the plugins installed are not among what a cached configuration is keyed by)."""
    for name in config.data.get("plugins") or {}:
        if name in host.plugins:
            continue
        if name in host.adapter_names():
            config.warnings.append(f"{config.source}: plugins.{name}: {name} is an adapter, and this "
                                   f"switches nothing off; list it under adapters: with "
                                   f"`enabled: false` to skip it")
        else:
            config.warnings.append(f"{config.source}: plugins.{name}: no plugin of that name is installed "
                                   f"(`asz-pipeline plugins` lists them)")
    return config


def _same_schemas(host: PluginHost, cached: dict[str, Any]) -> bool:
    """Whether the adapters a cached configuration names are installed with the schemas it was
    validated against."""
    try:
        names = [entry[0] for entry in cached["adapters"] if entry[1]]
    except (KeyError, TypeError, IndexError):
        return False
    schemas = _adapter_schemas(host, names)
    return schemas is not None and cached.get("schemas") == schemas


def _adapter_schemas(host: PluginHost, names: list[str]) -> dict[str, Any] | None:
    """What a validated configuration takes from the adapters it names: each one's options
    schema (``None``: one of them is not available, or failed to say). The adapters it does
    not name play no part in it, and are not imported to check it."""
    try:
        return {name: host.options_schema(host.adapter(name).name) for name in names}
    except Exception:  # noqa: BLE001 - validating again reports it, uncached
        return None


def _cache_key(host: PluginHost, path: Path | None, defaults: bytes, data: bytes | None) -> str | None:
    """The key of everything :func:`_validate`'s result depends on but the schemas of the
    adapters it names (stored with the entry and compared on a hit: :func:`_adapter_schemas`);
    ``None``: do not cache."""
    try:
        sections = host.config_sections()
    except Exception:  # noqa: BLE001 - a plugin failing here fails the same way, uncached, below
        return None
    return configcache.key({
        "asz": __version__, "core": CORE_SCHEMA, "base": ADAPTER_BASE_PROPERTIES,
        "path": str(path.resolve()) if path is not None else None,
        "file": _text_of(data) if data is not None else None,
        "defaults": _text_of(defaults),
        "sections": sections, "asz_root": os.environ.get("ASZ_ROOT"), "data_dir": userdirs.data_dir(),
        "adapters": host.adapter_names(),
        "cwd": os.getcwd(), "home": os.path.expanduser("~")})


def _text_of(data: bytes) -> str:
    """``data`` as text for a key: any byte that is not UTF-8 kept as its own escape, so that
    different bytes are never the same text."""
    return data.decode("utf-8", "surrogateescape")


def _upstream_notes(host: PluginHost, doc: _Document) -> list[str]:
    """Take out of ``doc`` what upstream defines and this implementation does not have yet, and
    say so, one warning each: its sections, its adapters (when none of that name is installed),
    and ``collector.mode``."""
    warnings: list[str] = []
    for section, what in UPSTREAM_ONLY_SECTIONS.items():
        if section in doc.data:
            line = doc.line_of((section,), key=True) or 0
            warnings.append(f"{doc.name}:{line}: section {section!r} is {what}: skipped")
            del doc.data[section]
    listed = doc.data.get("adapters")
    if isinstance(listed, list):
        kept = []
        for index, entry in enumerate(listed):
            name = entry.get("name") if isinstance(entry, dict) else None
            if name in UPSTREAM_ONLY_ADAPTERS and not _installed(host, name):
                line = doc.line_of(("adapters", index, "name")) or 0
                warnings.append(f"{doc.name}:{line}: adapter {name!r} is upstream's "
                                f"({UPSTREAM_ONLY_ADAPTERS[name]}), not implemented by this asz yet: skipped")
                continue
            kept.append(entry)
        doc.data["adapters"] = kept
        modes = [doc.line_of(("adapters", i, "collector", "mode"), key=True) or 0
                 for i, e in enumerate(listed)
                 if isinstance(e, dict) and isinstance(e.get("collector"), dict) and "mode" in e["collector"]]
        if modes:
            lines = ", ".join(str(n) for n in modes)
            warnings.append(f"{doc.name}:{lines}: collector.mode is upstream's `asz collect` setting and "
                            f"read by nothing here: `asz-pipeline run` makes one pass, `run --watch` or "
                            f"`schedule install` repeats it")
    return warnings


def _current_names(doc: _Document) -> None:
    """An entry naming an adapter by its old name names it by its current one, as upstream reads
    it, so it merges with the built-in entry and lands under the current name."""
    listed = doc.data.get("adapters")
    for entry in listed if isinstance(listed, list) else []:
        if isinstance(entry, dict) and entry.get("name") in RENAMED_ADAPTERS:
            entry["name"] = RENAMED_ADAPTERS[entry["name"]]


def _installed(host: PluginHost, name: str) -> bool:
    try:
        host.adapter(name)
    except AdapterNotAvailable:
        return False
    return True


def _validate(host: PluginHost, path: Path | None, defaults_bytes: bytes, file_bytes: bytes | None) -> Config:
    defaults = _parse_yaml(defaults_bytes, _DEFAULTS_LABEL)
    doc = _parse_yaml(file_bytes, str(path)) if path is not None and file_bytes is not None else None
    if doc is not None:
        _current_names(doc)
    warnings = _upstream_notes(host, doc) if doc is not None else []
    data = _merge(defaults.data, doc.data) if doc is not None else copy.deepcopy(defaults.data)

    problems: list[tuple[int, str]] = []
    schema = _with_sections(host.config_sections())
    problems.extend(_problems(schema, (doc or defaults).data, doc or defaults))
    _fill_defaults(schema, data)

    adapters: list[AdapterEntry] = []
    # one entry reads one directory: an adapter listed again reads another (its own source_root)
    seen: dict[tuple[str, str], int] = {}
    merged = _merge_adapters(defaults, doc)
    for item in merged:
        raw, origin, entry_path = item.entry, item.doc, ("adapters", item.index)
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
            continue  # reported by the core schema
        name = raw["name"]
        line = origin.line_of((*entry_path, "name")) or 0
        source = raw.get("source_root")
        reads = _resolve(source) if isinstance(source, str) and source else ""
        if (name, reads) in seen:
            problems.append((line, f"{origin.name}:{line}: adapters[{item.index}].name: {name!r} is listed twice "
                                   f"reading one directory ({reads or 'its default source_root'}, as "
                                   f"adapters[{seen[name, reads]}] does); one entry reads one directory: give this "
                                   f"one a source_root of its own, or remove it"))
            continue
        seen[name, reads] = item.index
        if origin is defaults and name not in host.adapter_names():
            continue  # a built-in this host does not have (embedded, or a test's host): nothing to run
        if raw.get("enabled") is False:
            # switched off: not imported (a broken or unwanted adapter is switched off so), so
            # only the options every adapter has are checked
            entry_schema = {"type": "object", "required": ["name"], "properties": ADAPTER_BASE_PROPERTIES}
        else:
            try:
                host.adapter(name)
            except AdapterNotAvailable as exc:
                problems.append((line, f"{origin.name}:{line}: adapters[{item.index}].name: {exc}"))
                continue
            entry_schema = adapter_entry_schema(host, name)
        found = list(_problems(entry_schema, raw, origin, entry_path))
        if found:
            problems.extend(found)
            continue
        options = copy.deepcopy(raw)
        _fill_defaults(entry_schema, options)
        if options.get("source_root"):
            options["source_root"] = _resolve(options["source_root"])
        adapters.append(AdapterEntry(name=name, enabled=options["enabled"], options=options))
    data["adapters"] = [item.entry for item in merged
                        if item.doc is not defaults or item.entry.get("name") in host.adapter_names()]
    if problems:
        raise ConfigError([p for _, p in sorted(problems)])
    root = os.environ.get("ASZ_ROOT") or data["storage"]["root"]
    data["storage"]["root"] = _resolve(root) if root else userdirs.data_dir()
    return Config(source=str(path) if path is not None else defaults.name, data=data,
                  adapters=adapters, warnings=warnings)


def _resolve(value: str) -> str:
    """A path as upstream resolves it: ``~`` expanded, a relative path against the working
    directory (never the file's own: one file must land in one place, whichever asz reads it)."""
    expanded = Path(os.path.expanduser(value))
    if not expanded.is_absolute():
        expanded = Path.cwd() / expanded
    return os.path.normpath(expanded)
