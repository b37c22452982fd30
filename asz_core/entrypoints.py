"""The installed entry points of asz's groups, cached so start-up does not import
``importlib.metadata`` (and ``email``, ``zipfile``, ``csv``, ... with it) on every run.

``importlib.metadata`` finds entry points by listing every directory on ``sys.path`` for
``*.dist-info`` and ``*.egg-info`` and reading each one's ``entry_points.txt`` (and its
``METADATA`` or ``PKG-INFO`` for the distribution's name and version). What it finds is
therefore a function of those listings and files, so the result is stored under a key made of
them: ``sys.path`` itself; for each directory on it, the name and ``stat`` of every metadata
directory in it and the ``stat`` of those two files in each (a file edited in place); for
anything else on the path (a zip file), its ``stat``; and the Python running. ``pip install``,
``pip uninstall``, an upgrade or an editable reinstall each add, remove or replace a metadata
directory, hence another key, hence a miss, hence a full lookup. (A directory's own mtime is
left out: the working directory is on ``sys.path`` under ``python -m``, and a pass writing
there must not make the next one miss.) When a finder on
``sys.meta_path`` other than the standard path finder can supply distributions, what it finds
cannot be keyed from here, and nothing is cached.

The cache lives beside the validated configurations (:mod:`asz_core.configcache`), under
``entry-points/``, one owner-only file per key, keyed and named as they are (the key is the
inputs' text, compared whole on a hit). It is disposable: an entry that cannot be read or
written is a miss, never an error.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import sys
from collections.abc import Sequence
from functools import reduce
from typing import Any

from asz_core import configcache

__all__ = ["EntryPointSpec", "cache_key", "discover"]

#: 2: keyed by the inputs' text (1: by their SHA-256)
_FORMAT = 2
_METADATA_SUFFIXES = (".dist-info", ".egg-info")
#: ``module``, ``module:attr`` or ``module:attr.attr``, with optional extras, as
#: ``importlib.metadata.EntryPoint`` reads a value
_VALUE = re.compile(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$")


class EntryPointSpec:
    """One entry point, as installed metadata declares it, and the distribution declaring it."""

    __slots__ = ("distribution", "group", "name", "value", "version")

    def __init__(self, name: str, group: str, value: str, distribution: str = "", version: str = "") -> None:
        self.name = name
        self.group = group
        self.value = value
        self.distribution = distribution
        self.version = version

    def load(self) -> Any:
        """Import the module the value names and return it, or the attribute it names."""
        match = _VALUE.match(self.value)
        if match is None:
            raise ValueError(f"entry point {self.name!r} has a malformed value {self.value!r}")
        module = importlib.import_module(match.group("module"))
        attrs = [a for a in (match.group("attr") or "").split(".") if a]
        return reduce(getattr, attrs, module)

    def as_list(self) -> list[str]:
        return [self.name, self.group, self.value, self.distribution, self.version]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EntryPointSpec) and self.as_list() == other.as_list()

    def __hash__(self) -> int:
        return hash(tuple(self.as_list()))

    def __repr__(self) -> str:
        return f"EntryPointSpec({self.name!r}, {self.group!r}, {self.value!r}, {self.distribution!r})"


def _stat(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]


def _path_entry(entry: str) -> list[Any]:
    """What ``importlib.metadata`` would read from one ``sys.path`` entry, as stats."""
    try:
        listing = os.scandir(entry or ".")
    except OSError:  # a zip file, or nothing: its own stat says when it changes
        return [entry, _stat(entry or ".")]
    metadata: list[Any] = []
    with listing:
        for child in listing:
            low = child.name.lower()
            if low.endswith(_METADATA_SUFFIXES) or low == "egg-info":
                described = "METADATA" if low.endswith(".dist-info") else "PKG-INFO"
                metadata.append([child.name, _stat(child.path),
                                 _stat(os.path.join(child.path, "entry_points.txt")),
                                 _stat(os.path.join(child.path, described))])
    metadata.sort()
    return [entry, metadata]


def _keyable() -> bool:
    """Whether every finder that can supply distributions is the standard path finder."""
    from importlib.machinery import PathFinder

    return all(finder is PathFinder or not hasattr(finder, "find_distributions") for finder in sys.meta_path)


def cache_key(path: Sequence[str] | None = None) -> str | None:
    """The key of everything the entry points on ``path`` (default ``sys.path``) depend on;
    ``None`` when they cannot be keyed (do not cache)."""
    if not _keyable():
        return None
    entries = list(sys.path if path is None else path)
    inputs = {"format": _FORMAT, "python": [sys.executable, sys.version],
              "path": [_path_entry(e) for e in entries]}
    return json.dumps(inputs, separators=(",", ":"))


def _lookup(groups: Sequence[str]) -> list[EntryPointSpec]:
    from importlib.metadata import entry_points

    found: list[EntryPointSpec] = []
    for group in groups:
        for ep in entry_points(group=group):
            dist = getattr(ep, "dist", None)
            found.append(EntryPointSpec(ep.name, group, ep.value, dist.name if dist else "",
                                        dist.version if dist else ""))
    return found


def _cache_dir() -> str:
    return os.path.join(configcache.cache_base(), "entry-points")


def _load(key: str, groups: Sequence[str]) -> list[EntryPointSpec] | None:
    value = configcache.read_entry(_cache_dir(), key)
    try:
        if value is None or value.get("groups") != list(groups):
            return None
        return [EntryPointSpec(*row) for row in value["entry_points"]]
    except (TypeError, KeyError):  # an entry of another shape: a miss
        return None


def discover(groups: Sequence[str]) -> list[EntryPointSpec]:
    """Every installed entry point of ``groups``, in the order ``importlib.metadata`` gives
    them: from the cache when nothing on ``sys.path`` changed, else looked up and stored."""
    key = cache_key()
    cached = _load(key, groups) if key is not None else None
    if cached is not None:
        return cached
    found = _lookup(groups)
    if key is not None:
        configcache.write_entry(_cache_dir(), key,
                                {"groups": list(groups), "entry_points": [ep.as_list() for ep in found]})
    return found
