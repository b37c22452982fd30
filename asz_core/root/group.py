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
3. A group that fills may commit *behind* the next, when its landing asks
   (:meth:`CommitGroup.commit_behind`): each of its ``syncfs`` runs in a thread of its own,
   which waits in the kernel while the process lands the next group's sessions, and the steps
   between them run in the process's own thread, after a landing, once the ``syncfs`` before
   them has returned. The next group does not start its own steps until the one behind
   has finished; any other commit (rule 2) finishes the group behind, then makes its own steps
   at once. Each group syncs through a descriptor of the root of its own, opened before
   anything of it was written: ``syncfs`` reports a write error once to each descriptor opened
   before it, so a group's ``syncfs`` never takes an error from the next group's (at worst it
   fails for it too).
4. Then each held session, still locked, is settled (its settled entry made from the cursors
   as they now are) and released, and its outcome goes to the pass, in claim order: a group's
   after the group's behind it.

A failure in a session's steps stops that session's later steps only: its temporaries are
removed, its cursors stay where they were (a cursor that lags is brought forward from the landed
files), and the failure is the session's error. A failing ``syncfs`` stops every session whose
steps it covered. A kill at any instant leaves, per session, temporaries (removed by the next
holder of its lock), files landed ahead of their cursor, or a cursor replaced whole.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Generator, Iterator, Sequence
from pathlib import Path
from typing import Protocol

from asz_core.root import confined, faults
from asz_core.root.durable import can_sync_filesystem, sync_filesystem

__all__ = ["GROUP_DIRECTORIES", "GROUP_SESSIONS", "CommitGroup", "Member"]

#: sessions held before a group commits: enough that two ``syncfs`` cost little per session
#: (their waits are filled by other workers, their kernel work is the caller's CPU: fewer calls
#: are what a larger group saves), few enough that the descriptors held (a lock and a directory
#: or three each, for this group and the one committing behind it, whose directories
#: :data:`GROUP_DIRECTORIES` bounds) stay below half the usual limit of 1,024 (figures:
#: benchmarks/README.md, "Figures behind the code's constants")
GROUP_SESSIONS = 64
#: ... or directories held open by its sessions (one per stream or run a file landed in), the
#: group's behind it included: a group of sessions with many subagents commits sooner, below
#: that limit
GROUP_DIRECTORIES = 256


class Member(Protocol):
    """A session a group holds, and the steps the group asks of it, in rule 2's order: a
    ``SessionHandle``, or a session new to the root landed in one place
    (:class:`~asz_core.collect.fresh.NewSession`). Each step returns whether the session goes
    on; a failure drops what is left of it and is the session's error."""

    queued: bool  #: in its group's list of sessions with steps waiting

    @property
    def queued_files(self) -> Sequence[object]:
        """Its files closed, not yet durable nor renamed (one ``temp-fsync`` checkpoint each)."""

    def install_queued(self) -> bool:
        """b: rename each durable file to its name, never replacing one."""

    def write_queued_states(self) -> bool:
        """c: write each cursor's temporary copy."""

    def checkpoint_dirs(self) -> None:
        """d's checkpoints: one ``dir-fsync`` for each directory it named a file in."""

    def move_queued_states(self) -> None:
        """e: rename each durable cursor copy over its cursor."""

    def drop_queued(self, exc: BaseException) -> None:
        """Remove what is left of its steps; ``exc`` is its error."""

    def release_after_commit(self) -> None:
        """Rule 4: every step is durable or dropped: settle it and let it go."""


class CommitGroup:
    """Several sessions' durable steps, made together (see the module's rules)."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._fd = confined.open_dir(root)  #: this group's descriptor of the root (rule 3)
        self._queued: list[Member] = []  #: sessions with steps waiting
        self._held: list[Member] = []    #: sessions landed, waiting to be released
        self._behind: _Behind | None = None     #: the group committing behind this one's landing

    @classmethod
    def open(cls, root: Path, *, dry_run: bool) -> CommitGroup | None:
        """A group for landings into ``root``; ``None`` in a dry run or where there is no
        ``syncfs`` (each session then makes its own steps as it lands)."""
        if dry_run or not can_sync_filesystem():
            return None
        return cls(root)

    def __len__(self) -> int:
        """Sessions held (not counting the group behind)."""
        return len(self._held)

    def full(self) -> bool:
        """Whether the group should commit now: :data:`GROUP_SESSIONS` held, or
        :data:`GROUP_DIRECTORIES` directories open."""
        return len(self._held) >= GROUP_SESSIONS or confined.held_count() >= GROUP_DIRECTORIES

    def queued(self, session: Member) -> None:
        """``session`` has steps waiting (rule 1)."""
        if not session.queued:
            session.queued = True
            self._queued.append(session)

    def hold(self, session: Member) -> None:
        """``session`` has landed; it is released once the group has committed (rule 4)."""
        self._held.append(session)

    def commit_behind(self) -> None:
        """Commit this group behind the next one's landing (rule 3): the group behind finishes
        first; this one's first ``syncfs`` starts in its thread; the next group starts empty,
        with a descriptor of its own."""
        self.finish_behind(wait=True)
        fd = confined.open_dir(self._root)
        fd, self._fd = self._fd, fd
        held, self._held = self._held, []
        self._behind = _Behind(_steps(fd, self._take_queued(), threaded=True), held, fd)
        self.finish_behind(wait=False)  # its steps up to the first ``syncfs``, which starts

    def finish_behind(self, *, wait: bool) -> bool:
        """Take the group behind on through every step its ``syncfs`` have let through by now
        (through all of them, waiting, with ``wait``), and release its sessions once it is done;
        whether there is no group behind any more."""
        behind = self._behind
        if behind is None:
            return True
        if not behind.advance(wait=wait):
            return False
        self._behind = None
        try:
            _release(behind.held)
        finally:
            os.close(behind.fd)
        return True

    def flush(self) -> None:
        """Make every waiting step durable at once (rule 2), the group behind's first."""
        self.finish_behind(wait=True)
        for syncfs in _steps(self._fd, self._take_queued(), threaded=False):
            syncfs.wait()

    def commit(self) -> None:
        """Flush, then settle and release every session held (rule 4)."""
        self.flush()
        held, self._held = self._held, []
        _release(held)

    def close(self) -> None:
        """Commit what is held and let the root's descriptors go."""
        try:
            self.commit()
        finally:
            behind, self._behind = self._behind, None
            try:
                if behind is not None:  # only after a failure
                    behind.abandon()
            finally:
                os.close(self._fd)

    def _take_queued(self) -> list[Member]:
        sessions, self._queued = self._queued, []
        for session in sessions:
            session.queued = False
        return sessions


def _steps(fd: int, sessions: list[Member], *, threaded: bool) -> Iterator[_Syncfs]:
    """Rule 2's steps a to e for ``sessions``, through ``fd``: suspended at each ``syncfs``,
    which is yielded started (in a thread, if ``threaded``), and resumed once it has returned."""
    if not sessions:
        return
    if any(session.queued_files for session in sessions):
        def before_files() -> None:
            for session in sessions:
                for _ in session.queued_files:
                    faults.checkpoint("temp-fsync")

        if not (yield from _synced(fd, sessions, before_files, threaded=threaded)):  # a
            return
    installed = [session for session in sessions if session.install_queued()]  # b
    written = [session for session in installed if session.write_queued_states()]  # c

    def before_names() -> None:
        for session in installed:
            session.checkpoint_dirs()

    if not (yield from _synced(fd, written, before_names, threaded=threaded)):  # d
        return
    for session in written:  # e
        session.move_queued_states()


def _synced(fd: int, covered: list[Member], before: Callable[[], None], *,
            threaded: bool) -> Generator[_Syncfs, None, bool]:
    """``before`` (the faults' checkpoints of the steps it covers), then one ``syncfs`` through
    ``fd``, yielded started; whether ``covered``'s steps stand: a failure drops each of them."""
    try:
        before()
    except OSError as exc:
        failure = exc
    else:
        syncfs = _Syncfs(fd, threaded=threaded)
        yield syncfs
        if syncfs.error is None:
            return True
        failure = syncfs.error
    for session in covered:
        session.drop_queued(failure)
    return False


def _release(held: list[Member]) -> None:
    """Rule 4, for ``held`` in the order they landed."""
    for session in held:
        faults.checkpoint("group-release")
        session.release_after_commit()


class _Syncfs:
    """One ``syncfs`` of the root through ``fd``, made at once or in a thread of its own (it
    waits in the kernel, without the interpreter's lock). Its ``error`` is read after
    :meth:`wait`; anything but an ``OSError`` is raised there, in the caller's thread."""

    __slots__ = ("_fd", "_raised", "_thread", "error")

    def __init__(self, fd: int, *, threaded: bool) -> None:
        self._fd = fd
        self.error: OSError | None = None
        self._raised: BaseException | None = None
        self._thread: threading.Thread | None = None
        if threaded:
            self._thread = threading.Thread(target=self._run, name="asz-group-syncfs")
            self._thread.start()
        else:
            self._run()

    def _run(self) -> None:
        try:
            sync_filesystem(self._fd)
        except OSError as exc:
            self.error = exc
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread by wait()
            self._raised = exc

    def returned(self) -> bool:
        """Whether it has returned (:meth:`wait` will not wait)."""
        return self._thread is None or not self._thread.is_alive()

    def wait(self) -> None:
        """Wait until it has returned."""
        if self._thread is not None:
            self._thread.join()
        if self._raised is not None:
            raise self._raised


class _Behind:
    """A full group committing behind the next group's landing (rule 3): its steps, suspended at
    a ``syncfs``; the sessions it releases once they are done; its descriptor of the root."""

    __slots__ = ("_done", "_steps", "_syncfs", "fd", "held")

    def __init__(self, steps: Iterator[_Syncfs], held: list[Member], fd: int) -> None:
        self._steps = steps
        self.held = held
        self.fd = fd
        self._syncfs: _Syncfs | None = None  #: the ``syncfs`` the steps are suspended at
        self._done = False

    def advance(self, *, wait: bool) -> bool:
        """Run the steps on (the first call starts them) from each ``syncfs`` that has returned,
        or wait for it, with ``wait``; whether every step is done."""
        while not self._done:
            if self._syncfs is not None:
                if not (wait or self._syncfs.returned()):
                    return False
                self._syncfs.wait()
            self._syncfs = next(self._steps, None)
            self._done = self._syncfs is None
        return True

    def abandon(self) -> None:
        """After a failure: let a ``syncfs`` in flight return, then the descriptor go (the
        sessions' steps left undone are what a kill would leave)."""
        try:
            if self._syncfs is not None:
                with contextlib.suppress(Exception):
                    self._syncfs.wait()
        finally:
            os.close(self.fd)
