"""One stream, one source: a stream's transcript chain must come from a single source.

A database conversation and a CLI session with the same id would both land in that session's
``streams/main``; two sources in one chain would break its ``ord``/``off`` run. The first to
land owns the stream (its cursor names it); another source is refused with a warning.
"""

from __future__ import annotations

from pathlib import Path

from asz_core.root.cursors import parse_pairs
from asz_core.root.durable import open_landed, read_small
from asz_core.root.layout import parse_file_name
from asz_core.root.storage import landed_files_in

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
        data = read_small(cursor_file)
        owner = dict(parse_pairs(data.decode("utf-8"))).get("source", "") if data is not None else ""
    except (OSError, UnicodeDecodeError):
        # a cursor that does not read: the stream's landed files say whose it is (the collector
        # then rebuilds the cursor from them)
        owner = _landed_source(cursor_file.parent)
    return None if not owner or same_source(owner, src) else owner


def _landed_source(stream: Path) -> str:
    """The ``src`` of the stream's newest landed transcript file ("" when there is none)."""
    from asz_core.sessiondata.errors import SessionDataError

    for _, path in sorted(landed_files_in(stream), reverse=True):
        name = parse_file_name(path.name)
        if name is None or name.kind != "transcript":
            continue
        try:
            with open_landed(path) as landed:
                src = landed.header.get("src")
        except SessionDataError:
            continue
        if isinstance(src, str):
            return src
    return ""
