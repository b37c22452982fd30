"""Group commit: the durable steps of several sessions' landings, made together.

A session landed in a group lands as any other, under its lock, in the same order, except
that its files and cursors wait, and the group then makes every held session's steps at once
with two ``syncfs`` in all, where each session cost an ``fsync`` per file, per directory and per
cursor. The rules, and the code below in the same order:

1. A landed file's temporary copy is closed read-only without an ``fsync`` and not renamed; a
   cursor's new bytes are kept (:data:`~asz_core.root.durable.DEFERRED`), so whatever this
   process reads back meanwhile (an adapter's index, the next window's collector) reads the
   cursor as it will be. The session stays locked, so no other writer sweeps its temporaries.
2. The group commits every N sessions (or sooner, when its sessions hold many directories
   open), at the end of an adapter's sessions, in a worker process whenever it has no claim
   waiting (:mod:`asz_core.workers`), and whenever a landing asks for its files' names to be
   durable now (``SessionHandle.sync(created=True)``):
   a. one ``syncfs`` makes every temporary file durable (a file is durable before its rename);
   b. each is renamed to its final name, never replacing one, in the order it landed;
   c. the cursors' temporary copies are written;
   d. one ``syncfs`` makes the new names and the cursors' bytes durable (a cursor moves only
      after the files it covers are durable under their names, and its own bytes before it);
   e. each cursor's copy is renamed over the cursor.
3. Then each held session, still locked, is settled (its settled entry made from the cursors
   as they now are) and released, and its outcome goes to the pass, in claim order.

A failure in a session's steps stops that session's later steps only: its temporaries are
removed, its cursors stay where they were (a cursor that lags is brought forward from the landed
files), and the failure is the session's error. A failing ``syncfs`` stops every session whose
steps it covered. A kill at any instant leaves, per session, temporaries (removed by the next
holder of its lock), files landed ahead of their cursor, or a cursor replaced whole.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from asz_core.root import confined, faults
from asz_core.root.durable import can_sync_filesystem, sync_filesystem

if TYPE_CHECKING:
    from asz_core.root.storage import SessionHandle

__all__ = ["GROUP_DIRECTORIES", "GROUP_SESSIONS", "CommitGroup"]

#: sessions held before a group commits: enough that two ``syncfs`` cost little per session,
#: few enough that the descriptors held (a lock and a directory or three each) stay far below
#: the usual limit of 1,024
GROUP_SESSIONS = 32
#: ... or directories held open by its sessions (one per stream or run a file landed in): a
#: group of sessions with many subagents commits sooner, below that limit
GROUP_DIRECTORIES = 256


class CommitGroup:
    """Several sessions' durable steps, made together (see the module's rules)."""

    def __init__(self, root: Path) -> None:
        # opened before anything of the group is written: ``syncfs`` reports the write errors
        # that happened since the descriptor it is given was opened
        self._fd = confined.open_dir(root)
        self._queued: list[SessionHandle] = []  #: sessions with steps waiting
        self._held: list[SessionHandle] = []    #: sessions landed, waiting to be released

    @classmethod
    def open(cls, root: Path, *, dry_run: bool) -> CommitGroup | None:
        """A group for landings into ``root``; ``None`` in a dry run or where there is no
        ``syncfs`` (each session then makes its own steps as it lands)."""
        if dry_run or not can_sync_filesystem():
            return None
        return cls(root)

    def __len__(self) -> int:
        """Sessions held."""
        return len(self._held)

    def full(self) -> bool:
        """Whether the group should commit now: :data:`GROUP_SESSIONS` held, or
        :data:`GROUP_DIRECTORIES` directories open."""
        return len(self._held) >= GROUP_SESSIONS or confined.held_count() >= GROUP_DIRECTORIES

    def queued(self, session: SessionHandle) -> None:
        """``session`` has steps waiting (rule 1)."""
        if not session.queued:
            session.queued = True
            self._queued.append(session)

    def hold(self, session: SessionHandle) -> None:
        """``session`` has landed; it is released once the group has committed (rule 3)."""
        self._held.append(session)

    def flush(self) -> None:
        """Make every waiting step durable (rule 2)."""
        sessions, self._queued = self._queued, []
        if not sessions:
            return
        for session in sessions:
            session.queued = False
        if any(session.queued_files for session in sessions):
            try:
                for session in sessions:
                    for _ in session.queued_files:
                        faults.checkpoint("temp-fsync")
                sync_filesystem(self._fd)
            except OSError as exc:
                for session in sessions:
                    session.drop_queued(exc)
                return
        installed = [session for session in sessions if session.install_queued()]
        written = [session for session in installed if session.write_queued_states()]
        try:
            for session in installed:
                session.checkpoint_dirs()
            sync_filesystem(self._fd)
        except OSError as exc:
            for session in written:
                session.drop_queued(exc)
            return
        for session in written:
            session.move_queued_states()

    def commit(self) -> None:
        """Flush, then settle and release every session held (rule 3)."""
        self.flush()
        held, self._held = self._held, []
        for session in held:
            faults.checkpoint("group-release")
            session.release_after_commit()

    def close(self) -> None:
        """Commit what is held and let the root's descriptor go."""
        try:
            self.commit()
        finally:
            os.close(self._fd)
