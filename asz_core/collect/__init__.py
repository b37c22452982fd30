"""Collectors: the shared mechanism by which adapters read sources into landed files.

An adapter says what its sources are and how a line reads in its dialect; the collectors apply
the cursor rules (upstream's ``formats/storage-root.md``, "Cursors"), cut files by written size, land them and move
the cursors — the same way for every runtime. A source in conflict stays stopped until a person
puts its bytes back or accepts the rewrite, which then lands as a new version in a place of its
own (:mod:`asz_core.collect.versions` says why there, :mod:`asz_core.collect.accept` how).
"""

from __future__ import annotations

from asz_core.collect.append import AppendSource, collect_append
from asz_core.collect.snapshot import SnapshotSource, collect_snapshot
from asz_core.collect.source import NOT_JSON, LineDialect, SourceLine, convert_encoded, convert_line, line_sha

__all__ = [
    "NOT_JSON",
    "AppendSource",
    "LineDialect",
    "SnapshotSource",
    "SourceLine",
    "collect_append",
    "collect_snapshot",
    "convert_encoded",
    "convert_line",
    "line_sha",
]
