"""Writing a cursor (or any state that refers to landed files) in the one safe order, and the
outcomes a source meets before it is read (gone, not a regular file)."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Protocol, TypeVar

from asz_core.context import AdapterContext
from asz_core.root.cursors import SOURCE_GONE, Cursor, CursorUnreadable
from asz_core.root.storage import SessionHandle
from asz_core.sessiondata.times import format_instant

__all__ = ["SavableState", "load_cursor", "mark_gone", "save_state", "stat_source"]

C = TypeVar("C", bound=Cursor)


class SavableState(Protocol):
    updated_at: str
    state: str

    def encode(self) -> bytes: ...


def save_state(ctx: AdapterContext, session: SessionHandle, state: SavableState, path: Path) -> None:
    """Make what landed in ``session`` durable, then replace ``path`` with ``state``
    (:meth:`~asz_core.root.storage.SessionHandle.save_state`; in a group commit, the group does
    both, in that order).

    The order is the guarantee: a cursor never names a file whose name could still vanish in a
    power loss. Nothing is written in a dry run.
    """
    if ctx.dry_run:
        return
    state.updated_at = format_instant(ctx.now_ns())
    session.save_state(path, state.encode())


def load_cursor(ctx: AdapterContext, cls: type[C], path: Path) -> C | None:
    """The cursor at ``path`` for a collector: one that does not read is derived state gone
    bad, so it is dropped with one warning and the collector rebuilds it from the landed files
    (an append source's reconciliation, a snapshot's adoption of its last landed version), as
    after a crash; it never stops the session."""
    try:
        return cls.read(path)
    except CursorUnreadable as exc:
        ctx.warn(f"{exc.path} does not read ({exc.reason}); it is rebuilt from the landed files")
        return None


def mark_gone(ctx: AdapterContext, session: SessionHandle, cursor: SavableState | None, path: Path) -> None:
    """A source that is no longer there. Counted ``gone`` when any of it ever landed (it has a
    cursor); the cursor says ``source_gone`` once. What landed stays as it is."""
    if cursor is None:
        return
    ctx.counters.gone += 1
    if cursor.state != SOURCE_GONE:
        cursor.state = SOURCE_GONE
        save_state(ctx, session, cursor, path)


def stat_source(ctx: AdapterContext, session: SessionHandle, cursor: SavableState | None, path: Path,
                source: Path) -> os.stat_result | None:
    """``source``'s ``lstat`` when it is a regular file to read, counted in ``sources``; else
    ``None``, its outcome already given: gone (:func:`mark_gone`, the cursor at ``path``) or
    unreadable (a symlink, a directory or a device is never followed or read)."""
    try:
        st = os.lstat(source)
    except FileNotFoundError:
        mark_gone(ctx, session, cursor, path)
        return None
    if not stat.S_ISREG(st.st_mode):
        ctx.counters.unreadable += 1
        ctx.warn(f"{source} is not a regular file (a symlink or device?); it is not read")
        return None
    ctx.counters.sources += 1
    return st
