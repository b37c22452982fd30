"""Which sessions a step after the landing owes a look: a log the passes keep, so that the
parse that ends a ``run``, and the derivation of metrics, touch no session after a pass that
landed nothing.

Each such step has its own log, the same lines in each (:data:`PARSE`: ``<root>/.parse-owed``;
:data:`METRICS`: ``<root>/.metrics-owed``), so each settles what it has done without the other.
The rules, in order:

1. Its first line is its header (``asz-parse-owed 1``, ``asz-metrics-owed 1``), written only by
   its step once it has looked at every session. A log that is missing, does not read, has
   another first line or a line this module does not know owes **every** session (a root landed
   by an older version, a log removed or damaged, a step switched back on): the step then looks
   at all of them, as a parse run alone always does.
2. A pass, holding the root lock, appends ``start`` and fsyncs the log before its first landing
   (creating the log without its first line if there is none). So no landed file is durable
   before the log says a pass began; a pass that lands nothing writes nothing.
3. When the pass's landings are done, it appends ``owed <session>`` for every session that
   landed a file or failed (a worker that died may have landed files it never reported), then
   ``end``, in one write, fsynced.
4. A ``start`` with no ``end`` before the next ``start`` or the log's end (the pass was
   killed, or is running now) owes every session.
5. The step reads the log once (whole lines only), does what it owes, and then, holding the
   root lock (the parse only if it can take it at once, so no pass is writing the log; the
   derivation runs inside the pass, which holds it), replaces the log atomically with its first
   line, an ``owed`` line for each session it could not finish, and every line passes appended
   after it read. Without the lock it leaves the log as it is: the sessions are looked at again
   next time, which costs a head check each, and loses nothing.

A kill anywhere leaves the log saying at least what is owed: before rule 2's fsync nothing has
landed; between it and rule 3 the ``start`` is open (every session owed); a replacement in rule
5 is a rename of a complete, fsynced file.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from asz_core.root import faults
from asz_core.root.durable import fsync_dir, open_private, read_small, write_replace, write_whole
from asz_core.root.layout import RefusedId, check_id
from asz_core.root.locks import FileLock, LockBusy

__all__ = ["METRICS", "OWED_NAME", "PARSE", "Owed", "OwedLog", "PassOwed", "forget_log", "read_owed", "settle_owed"]


class OwedLog(NamedTuple):
    """One step's log: its file under the root and its first line (this and :class:`Owed` are
    named tuples, not frozen dataclasses: every pass imports them)."""

    name: str
    header: bytes


PARSE = OwedLog(".parse-owed", b"asz-parse-owed 1\n")
METRICS = OwedLog(".metrics-owed", b"asz-metrics-owed 1\n")
OWED_NAME = PARSE.name


class Owed(NamedTuple):
    """What the log owes: ``sessions`` (``None``: every session), and the log's bytes as they
    were read, so that a replacement keeps what passes appended after them, and replaces
    nothing when another parse replaced the log meanwhile."""

    sessions: frozenset[str] | None
    read: bytes


def read_owed(root: Path, log: OwedLog = PARSE) -> Owed:
    """The sessions ``log`` owes (rules 1 and 4)."""
    whole = _whole_lines(_read(root / log.name))
    if not whole.startswith(log.header):
        return Owed(None, whole)
    return Owed(_owed_lines(whole[len(log.header):]), whole)


def _read(path: Path) -> bytes:
    try:
        return read_small(path) or b""
    except OSError:  # a link or a directory planted there: owes everything, replaced later
        return b""


def _whole_lines(data: bytes) -> bytes:
    """``data`` up to its last line end: a line being appended is not read yet."""
    return data[: data.rfind(b"\n") + 1]


def _owed_lines(body: bytes) -> frozenset[str] | None:
    sessions: set[str] = set()
    open_pass = False
    for line in body.decode("utf-8", "replace").splitlines():
        word, _, value = line.partition(" ")
        if word == "start" and not value:
            if open_pass:  # the pass before never ended: it was killed
                return None
            open_pass = True
        elif word == "end" and not value and open_pass:
            open_pass = False
        elif word == "owed":
            try:
                sessions.add(check_id(value, "session id"))
            except RefusedId:
                return None
        else:
            return None
    return None if open_pass else frozenset(sessions)


def settle_owed(root: Path, owed: Owed, still_owed: Iterable[str], log: OwedLog = PARSE, *,
                holding_root: bool = False) -> bool:
    """Replace ``log`` once its sessions are done (rule 5); False when a pass held the root
    lock, and the log was left as it was. ``holding_root``: the caller holds the root lock (a
    step inside the pass)."""
    lock = None if holding_root else FileLock(root / ".lock")
    try:
        if lock is not None:
            lock.acquire()
    except (LockBusy, OSError):  # a pass holds it; a root not there, or not writable
        return False
    try:
        data = _read(root / log.name)
        if not data.startswith(owed.read):
            return False  # replaced by another parse since it was read: that one settled it
        kept = b"".join(f"owed {s}\n".encode() for s in sorted(set(still_owed)))
        new = log.header + kept + _whole_lines(data[len(owed.read):])
        if data != new:  # a step after a pass that landed nothing writes nothing
            faults.checkpoint("owed-replace")
            write_replace(root / log.name, new)
    except OSError:  # a full disk: the log stays as it was, and owes as much or more
        return False
    finally:
        if lock is not None:
            lock.release()
    return True


def forget_log(root: Path, log: OwedLog) -> None:
    """Remove ``log`` (its step is switched off), durably: when the step is on again it owes
    every session, not only those passes appended after."""
    try:
        os.unlink(root / log.name)
    except FileNotFoundError:
        return
    fsync_dir(root)


class PassOwed:
    """The pass's side of the logs (rules 2 and 3): the same lines to each of ``logs``. Nothing
    is written by a dry run, nor by a pass that lands nothing."""

    def __init__(self, root: Path, *, dry_run: bool, logs: tuple[OwedLog, ...] = (PARSE,)) -> None:
        self.paths = [root / log.name for log in logs]
        self.path = self.paths[0]  #: the log being written, named when an append fails
        self.dry_run = dry_run
        self.started = False
        self.sessions: list[str] = []

    def before_landing(self) -> None:
        """Called before each landing; the first one appends ``start``, durably."""
        if self.started or self.dry_run:
            return
        faults.checkpoint("owed-start")
        self._append(b"start\n")
        self.started = True

    def landed(self, session: str) -> None:
        """``session`` landed a file or failed: the parse owes it a look."""
        if self.started:
            self.sessions.append(session)

    def finish(self) -> None:
        """Append the sessions and ``end``, durably (after the last landing)."""
        if not self.started:
            return
        seen = dict.fromkeys(self.sessions)
        faults.checkpoint("owed-end")
        self._append(b"".join(f"owed {s}\n".encode() for s in seen) + b"end\n")
        self.started = False
        self.sessions = []

    def _append(self, data: bytes) -> None:
        for path in self.paths:
            self.path = path
            fd = open_private(path, os.O_WRONLY | os.O_APPEND)
            try:
                new = os.fstat(fd).st_size == 0
                write_whole(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            if new:  # the log's own name, durable before anything it covers
                fsync_dir(path.parent)
        self.path = self.paths[0]
