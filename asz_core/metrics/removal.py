"""What a scenario session's removal takes out of the metrics (storage-root.md's steps 5 and 6).

Called once the session's directory is gone, so nothing derives it again: first the spool
files it owns are deleted (step 5), then its lines in ``metrics.state`` are dropped (step 6). A
stop between the two leaves lines that name files no longer there, which the next removal drops.
A root with no ``_metrics/`` has nothing of the session and gets none.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from asz_core.metrics.spool import SPOOL_DIR, spool_files_of
from asz_core.metrics.state import MetricsState
from asz_core.root import confined

__all__ = ["forget_sessions"]


def forget_sessions(root: Path, sessions: list[str], *, now_ns: int) -> None:
    """Steps 5 and 6 for ``sessions``; ``MetricsStateError`` when the state does not read."""
    spool = root / SPOOL_DIR
    if not spool.is_dir():
        return
    for session in sessions:
        for path in spool_files_of(root, session):
            with contextlib.suppress(FileNotFoundError):
                confined.unlink(path)
    state = MetricsState.load(spool)
    if any(session in state.sessions or session in state.pending_since
           or any(k.startswith(f"{session}/") for k in state.derived) for session in sessions):
        for session in sessions:
            state.forget(session)
        state.save(now_ns)
