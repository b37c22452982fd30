"""Writing a cursor (or any state that refers to landed files) in the one safe order."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from asz_core.context import AdapterContext
from asz_core.root.cursors import SOURCE_GONE
from asz_core.root.storage import SessionHandle
from asz_core.sessiondata.times import format_instant

__all__ = ["SavableState", "mark_gone", "save_state"]


class SavableState(Protocol):
    updated_at: str
    state: str

    def save(self, path: Path) -> None: ...


def save_state(ctx: AdapterContext, session: SessionHandle, state: SavableState, path: Path) -> None:
    """Make what landed in ``session`` durable, then replace ``path`` with ``state``.

    The order is the guarantee: a cursor never names a file whose name could still vanish in a
    power loss. Nothing is written in a dry run.
    """
    if ctx.dry_run:
        return
    session.sync()
    state.updated_at = format_instant(ctx.now_ns())
    state.save(path)


def mark_gone(ctx: AdapterContext, session: SessionHandle, cursor: SavableState | None, path: Path) -> None:
    """A source that is no longer there. Counted ``gone`` when any of it ever landed (it has a
    cursor); the cursor says ``source_gone`` once. What landed stays as it is."""
    if cursor is None:
        return
    ctx.counters.gone += 1
    if cursor.state != SOURCE_GONE:
        cursor.state = SOURCE_GONE
        save_state(ctx, session, cursor, path)
