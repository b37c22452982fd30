"""A cache of validated configurations, so a pass does not parse YAML and load a JSON Schema
validator on every run when nothing it depends on has changed.

Validating ``asz.yaml`` costs little; loading what validates it (``yaml``, ``jsonschema`` and
its dependencies) costs most of a no-op pass's start-up. The result of
:func:`asz_core.config.load_config` is a function of a few inputs only, so it is stored under a
key made of them: the text of the file and of the built-in defaults, the file's resolved path,
the schemas (the core's, the plugins' sections), ``$ASZ_ROOT``, the working directory and the
home directory (relative paths and ``~`` resolve against them), and asz's version; and with it
the options schema of each adapter it names, compared on a hit (an adapter named is loaded to
run anyway; one not named plays no part and is not imported). Any change to any of them is
another key or a schema that differs, hence a miss, hence a full validation. Only
configurations that validated are stored; a problem is always reported by the full path.

The key is the inputs' JSON text itself, stored in the entry and compared whole on a hit; the
entry's file is named by a CRC-32 of it (:func:`entry_name`), which two keys may share, and
then one misses and replaces the other. No digest is taken: ``hashlib`` loads OpenSSL, 2 to 3
ms of a no-op pass's start-up, for names that need not be secure.

The cache lives in ``$XDG_CACHE_HOME/asz/config`` (else ``~/.cache/asz/config``), one owner-only
file per key, at most :data:`KEEP` of them. It is disposable: an entry that cannot be read or
written is a miss, never an error.
"""

from __future__ import annotations

import contextlib
import json
import os
import zlib

TYPE_CHECKING = False  # not ``typing``'s: this module is on the path of every start-up
if TYPE_CHECKING:
    from typing import Any

__all__ = ["KEEP", "cache_base", "cache_dir", "entry_name", "key", "load", "read_entry", "store", "write_entry"]

#: entries kept; the oldest go first
KEEP = 64
#: 2: keyed by the inputs' text (1: by their SHA-256)
_FORMAT = 2


def cache_base() -> str:
    """asz's cache directory: ``$XDG_CACHE_HOME/asz``, else ``~/.cache/asz``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "asz")


def cache_dir() -> str:
    return os.path.join(cache_base(), "config")


def key(inputs: dict[str, Any]) -> str | None:
    """The key of a configuration's inputs: their JSON text, keys sorted; ``None`` when they
    cannot be written as JSON."""
    try:
        return json.dumps({"format": _FORMAT, **inputs}, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError):
        return None


def entry_name(key: str) -> str:
    """The name of the file that holds the entry of ``key``, without its ``.json``: a CRC-32 of
    it, which the entry's own copy of the key makes safe to share (see the module)."""
    return f"{zlib.crc32(key.encode('utf-8', 'surrogatepass')):08x}"


def load(key: str) -> dict[str, Any] | None:
    """The stored configuration for ``key``, or ``None``."""
    return read_entry(cache_dir(), key)


def store(key: str, value: dict[str, Any]) -> None:
    """Store ``value`` under ``key``, quietly giving up when the cache cannot be written."""
    write_entry(cache_dir(), key, value)


def read_entry(directory: str, key: str) -> dict[str, Any] | None:
    """The value stored under ``key`` in ``directory``, or ``None``: no entry, one that cannot
    be read, or the entry of another key of the same name."""
    try:
        with open(os.path.join(directory, f"{entry_name(key)}.json"), "rb") as f:
            value = json.loads(f.read())
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) and value.get("key") == key else None


def write_entry(directory: str, key: str, value: dict[str, Any]) -> None:
    """Write ``value`` under ``key`` (with the key) as ``<directory>/<entry name>.json``
    (owner-only, replaced whole) and keep the newest :data:`KEEP` entries there; quietly give up
    when the cache cannot be written."""
    name = entry_name(key)
    try:
        text = json.dumps({**value, "key": key}, separators=(",", ":"))
    except (TypeError, ValueError):
        return  # a value YAML gave that JSON cannot hold: never cached, always validated
    with contextlib.suppress(OSError):
        os.makedirs(directory, mode=0o700, exist_ok=True)
        temp = os.path.join(directory, f".tmp-{os.getpid()}-{name}")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(temp, os.path.join(directory, f"{name}.json"))
        _prune(directory)


def _prune(directory: str) -> None:
    entries = []
    for entry in os.scandir(directory):
        if entry.name.endswith(".json"):
            with contextlib.suppress(OSError):
                entries.append((entry.stat().st_mtime_ns, entry.path))
    for _, path in sorted(entries)[:-KEEP]:
        with contextlib.suppress(OSError):
            os.unlink(path)
