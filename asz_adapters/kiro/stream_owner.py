"""One stream, one source: a stream's transcript chain must come from a single source.

A database conversation and a CLI session with the same id would both land in that session's
``streams/main``; two sources in one chain would break its ``ord``/``off`` run. The first to
land owns the stream (its cursor names it); another source is refused with a warning.
"""

from __future__ import annotations

from pathlib import Path

from asz_core.root.cursors import parse_pairs

__all__ = ["DB_MARK", "foreign_source", "same_source"]

#: What every database source's ``src`` holds before the conversation id.
DB_MARK = "#conversations_v2/"


def same_source(a: str, b: str) -> bool:
    """Whether two ``src`` values name one source. A database conversation stays itself when
    the database's path changes (``$KIRO_CLI_DB_PATH``, a moved home)."""
    if DB_MARK in a and DB_MARK in b:
        return a.partition(DB_MARK)[2] == b.partition(DB_MARK)[2]
    return a == b


def foreign_source(cursor_file: Path, src: str) -> str | None:
    """The source that owns the stream of ``cursor_file``, when it is not ``src``."""
    try:
        text = cursor_file.read_text("utf-8")
    except FileNotFoundError:
        return None
    owner = dict(parse_pairs(text)).get("source", "")
    return None if not owner or same_source(owner, src) else owner
