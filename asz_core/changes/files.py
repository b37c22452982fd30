"""One changed file's sides and diff, as every ``changes/1`` producer writes them.

1. a side that is absent is ``present`` false and ``bytes`` null; one that is there gives its
   size, its SHA-256 and, when it is not empty and does not end in a newline,
   ``no_newline_at_end`` (a hunk cannot show that on its own);
2. the diff of two texts is ``binary`` when either holds a NUL, ``too_large`` when the differ
   gives up (:mod:`.linediff`), else ``available`` with its hunks and the counts of ``+`` and
   ``-`` lines; the counts are null unless the diff is ``available``.
"""

from __future__ import annotations

import hashlib
from typing import Any

from asz_core.changes.linediff import diff_lines, split_lines

__all__ = ["FileDiff", "endpoint", "line_diff"]


def endpoint(data: bytes | None) -> dict[str, Any]:
    """Rule 1: one side of a file, from its bytes (``None``: the file is absent)."""
    if data is None:
        return {"present": False, "bytes": None}
    out: dict[str, Any] = {"present": True, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    if data and not data.endswith(b"\n"):
        out["no_newline_at_end"] = True
    return out


class FileDiff:
    """A file's diff by rule 2: ``available`` with its hunks and counts, else ``binary`` or
    ``too_large``. A plain class (every landing imports this module, through
    claude-code-local's dialect: docs/architecture.md, "Classes a pass imports")."""

    __slots__ = ("additions", "deletions", "diff", "hunks")

    def __init__(self, diff: str, hunks: list[dict[str, Any]] | None = None, additions: int | None = None,
                 deletions: int | None = None) -> None:
        self.diff = diff  #: available, binary or too_large
        self.hunks: list[dict[str, Any]] = [] if hunks is None else hunks
        self.additions = additions
        self.deletions = deletions


def line_diff(before: str, after: str) -> FileDiff:
    """Rule 2: the diff between two texts (an absent side is the empty text)."""
    if "\x00" in before or "\x00" in after:
        return FileDiff("binary")
    found = diff_lines(split_lines(before), split_lines(after))
    if found is None:
        return FileDiff("too_large")
    hunks, additions, deletions = found
    return FileDiff("available", [{"old_start": h.old_start, "old_lines": h.old_lines, "new_start": h.new_start,
                                   "new_lines": h.new_lines, "lines": h.lines} for h in hunks], additions, deletions)
