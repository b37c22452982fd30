"""Names inside a storage root, and the checks that keep a source from naming a path outside it.

The layout is the upstream's (its "Storage Root" format, ``formats/storage-root.md``)::

    <root>/<session>/streams/<stream>/<kind>-<stamp>-<seq>.sd
    <root>/<session>/runs/<run>/<kind>-<stamp>-<seq>.sd
    <root>/<session>/provider_body/provider_body-<stamp>-<seq>.sd

A few kinds are filed under a shorter prefix (``meta``, ``manifest``, ``script``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final, NamedTuple

__all__ = [
    "CURSOR_SUFFIX",
    "FILE_NAME",
    "KIND_PREFIX",
    "PREFIX_KIND",
    "FLAT_PLACE",
    "PLACE_GROUPS",
    "LandedName",
    "RefusedId",
    "check_id",
    "check_kind",
    "check_place",
    "cursor_file",
    "cursor_name",
    "file_name",
    "parse_file_name",
]

KIND_PREFIX: Final = {
    "agent_meta": "meta",
    "workflow_manifest": "manifest",
    "workflow_script": "script",
}
PREFIX_KIND: Final = {prefix: kind for kind, prefix in KIND_PREFIX.items()}
#: a cursor's file name is its place's prefix for the kind (``transcript``, ``meta``) and this
CURSOR_SUFFIX: Final = ".cursor"

# Matched whole (``fullmatch``), never anchored with ``$``: ``$`` also matches before a trailing
# newline, so ``"<id>\n"`` would pass for an id and name a directory with a line break.
FILE_NAME: Final = re.compile(r"([a-z_]+)-(\d{8}T\d{6}(?:\.\d+)?Z)-(\d{6,})\.(sd|sk)")
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
_KIND = re.compile(r"[a-z][a-z_]{0,63}")


class RefusedId(ValueError):
    """An identifier from a source that cannot name a directory in the root."""


def check_id(value: str, what: str) -> str:
    """Return ``value`` if it is safe as one path segment of the root, else raise ``RefusedId``.

    Adapters check their runtime's own id forms first; this is the host's last line, so nothing
    from a source ever names ``..``, an absolute path, a NUL, a separator or a hidden or
    underscore name (names starting with ``_`` belong to the host).
    """
    if not isinstance(value, str) or not _SAFE_ID.fullmatch(value) or ".." in value:
        raise RefusedId(f"{what} {value!r} cannot name a directory in the storage root")
    return value


def check_kind(kind: str) -> str:
    """Return ``kind`` if it is a lower-case word, as a landed file's name begins with one, else
    raise ``RefusedId``."""
    if not isinstance(kind, str) or not _KIND.fullmatch(kind):
        raise RefusedId(f"kind {kind!r} is not a lower-case word")
    return kind


#: the groups of a session's places whose files lie one directory down (``streams/<stream>``)
PLACE_GROUPS: Final = ("streams", "runs")
#: the place whose files lie directly in it
FLAT_PLACE: Final = "provider_body"


def check_place(subdir: str) -> str:
    """Return ``subdir`` if it is a place a landed file may lie in (``provider_body``,
    ``streams/<stream>``, ``runs/<run>``, a version's too), else raise ``RefusedId``: a place an
    adapter names is never a path of its own, deeper, upwards or elsewhere in the session."""
    group, _, place = subdir.partition("/")
    if subdir == FLAT_PLACE or (group in PLACE_GROUPS and _SAFE_ID.fullmatch(place) and ".." not in place):
        return subdir
    raise RefusedId(f"place {subdir!r} is not {FLAT_PLACE}, streams/<stream> or runs/<run>")


def file_name(kind: str, stamp: str, seq: int) -> str:
    """``<kind>-<stamp>-<seq>.sd`` with the upstream's prefixes and a seq of at least 6 digits."""
    return f"{KIND_PREFIX.get(kind, kind)}-{stamp}-{seq:06d}.sd"


def cursor_name(kind: str) -> str:
    """The file name of the cursor of a place's ``kind`` of source: ``transcript.cursor``,
    ``meta.cursor`` (upstream's prefixes, as landed files use)."""
    return f"{KIND_PREFIX.get(kind, kind)}{CURSOR_SUFFIX}"


def cursor_file(session_dir: Path, subdir: str, kind: str) -> Path:
    """Where the cursor of ``kind`` in the place ``subdir`` (``streams/main``) of a session is."""
    return session_dir / subdir / cursor_name(kind)


class LandedName(NamedTuple):
    """A landed file's name, in its parts (a named tuple, not a dataclass: every pass imports
    it)."""

    kind: str
    stamp: str
    seq: int
    skeleton: bool


def parse_file_name(name: str) -> LandedName | None:
    """The parts of a landed file's name, or ``None`` for anything else."""
    m = FILE_NAME.fullmatch(name)
    if m is None:
        return None
    prefix, stamp, seq, ext = m.groups()
    return LandedName(PREFIX_KIND.get(prefix, prefix), stamp, int(seq), ext == "sk")
