"""Where a rewritten source's next version lands: the version rule for stream and run names.

An append stream's records run ``ord`` 1, 2, 3 from byte 0 of their source, across every file
of one kind in one place (``streams/<stream>`` or ``runs/<run>``): that is what ``verify`` and
any strict reader check. A source rewritten behind its cursor cannot go on in that place, since
its new bytes would restart the count or claim offsets the old bytes held. Once a person accepts
the rewrite (``asz-pipeline conflicts --accept``), the source lands again from its first byte in
a place of its own, named by this rule:

* version 1 is the place itself (``streams/main``); version ``N`` ≥ 2 is the place's name
  followed by ``.v`` and ``N`` (``streams/main.v2``, ``runs/wf_1a2b.v3``);
* no runtime id this project lands holds a ``.`` (Claude Code's agent and run ids, Kiro's
  session ids), so a real stream never reads as a version;
* a version's header names its place as any file does (``stream`` is ``main.v2``), so upstream's
  readers and ``sdcheck`` read it as one more stream; assembly folds it into its first version's
  stream (:func:`base_stream`), so the conversation goes on where it was.

The name is the only thing that travels with the landed files (a root rebuilt from a push has
no cursors), so assembly reads versions from it; which version a source lands in now is the
collectors' business, from the cursors (:mod:`asz_core.collect.versions`).
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["FIRST", "base_stream", "version_of", "version_place"]

#: the version of a place that carries no version suffix
FIRST: Final = 1
_VERSIONED: Final = re.compile(r"(.+)\.v([1-9][0-9]{0,8})")


def _split(name: str) -> tuple[str, int]:
    """``(base name, version)`` of a stream or run directory's name."""
    m = _VERSIONED.fullmatch(name)
    if m is None or int(m.group(2)) <= FIRST:
        return name, FIRST
    return m.group(1), int(m.group(2))


def version_of(subdir: str) -> int:
    """The version a place (``streams/main.v2``) holds: 1 for a place with no suffix."""
    return _split(subdir.rpartition("/")[2])[1]


def version_place(subdir: str, version: int) -> str:
    """The place of ``version`` of the source first landed in (any version of) ``subdir``:
    ``version_place("streams/main", 2) == version_place("streams/main.v4", 2) == "streams/main.v2"``."""
    group, _, name = subdir.rpartition("/")
    base = _split(name)[0]
    named = base if version <= FIRST else f"{base}.v{version}"
    return f"{group}/{named}" if group else named


def base_stream(stream: str) -> str:
    """The stream a version's records belong to (``main.v2`` → ``main``); any other name as it is."""
    return _split(stream)[0]
