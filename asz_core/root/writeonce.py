"""Write-once files installed together: the parse's rounds, the derivation's receipts and spool.

Installed alone, a write-once file costs an ``fsync`` of itself, a rename and an ``fsync`` of its
directory (and of the parent of each directory made for it). The steps that run after a pass's
landing install one or more per session, so they stage them here and install them together, as
the landing's group commit does (:mod:`~asz_core.root.group`). The rules, and the code below in
the same order:

1. A staged file is written to a temporary name beside its final one (a dot name every reader
   skips), owner-only, made read-only and closed without an ``fsync``; the directories it needs
   are made. Its writer holds the lock that lets it sweep that directory's temporary files.
2. Each file has a *tier*: the commit names every file of a tier before any of the next, and
   makes those names durable in between, so a file that relies on another (a spool file on its
   receipt) is never named before that one is durable under its name.
3. :meth:`WriteOnceGroup.commit`:
   a. one ``syncfs`` makes every temporary file durable (a file is durable before its rename);
   b. for each tier in order, each of its files is renamed to its final name, never replacing
      one, then one ``syncfs`` makes the new names and the directories made durable.
   Only after it returns does the caller advance what relies on them (a state, an owed log).
4. Where there is no ``syncfs`` (not Linux), and in a group asked to sync file by file (a lone
   parse: three ``fsync``s cost less than two flushes of a whole file system that others may be
   writing to), each file is fsynced before it is closed, and after each tier's renames each
   directory it renamed into and each made directory's parent: the same order, file by file.

A failure is the staged file's (:attr:`Staged.error`) and its owner's: a name already taken (unless
the file may find its name taken, :attr:`Staged.keep_existing`) or a failed rename stops that file
and its owner's files of later tiers; a failed ``syncfs`` stops every file it covered and every
later tier. A kill at any instant leaves temporary files, swept by the directory's next writer,
or files named ahead of what relies on them, which the next run finds and keeps.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from asz_core.root import confined, faults
from asz_core.root.durable import (
    OWNER_FILE,
    can_sync_filesystem,
    fsync_dir,
    make_dirs,
    sync_filesystem,
    temp_name,
    write_whole,
)

__all__ = ["FaultSteps", "Staged", "WriteOnceGroup"]


@dataclass(frozen=True, slots=True)
class FaultSteps:
    """The fault points (:mod:`~asz_core.root.faults`) a group's steps are reached at: once per
    file before it is made durable, before each rename, once per tier before its names are made
    durable."""

    fsync: str
    install: str
    names: str


@dataclass(slots=True)
class Staged:
    """One file staged for installation (rule 1)."""

    final: Path
    temp: str
    owner: str                 #: whose files a failure stops (a session)
    tier: int
    made: list[Path]           #: directories made for it, outermost first
    #: a name already taken is an earlier writer's identical file, kept (not a failure)
    keep_existing: bool = False
    installed: bool = False
    error: OSError | None = None


@dataclass
class WriteOnceGroup:
    """Write-once files staged now and installed together (see the module's rules)."""

    root: Path
    steps: FaultSteps
    #: ``False``: each file is fsynced on its own (rule 4), even where ``syncfs`` is there
    whole_filesystem: bool = True
    staged: list[Staged] = field(default_factory=list)
    _fd: int | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.by_file = not (self.whole_filesystem and can_sync_filesystem())  #: rule 4

    def _open(self) -> None:
        # opened before anything is staged: ``syncfs`` reports the write errors that happened
        # since the descriptor it is given was opened; a group that stages nothing opens nothing
        if not self.by_file and self._fd is None:
            self._fd = confined.open_dir(self.root)

    def stage(self, path: Path, data: bytes, *, owner: str, tier: int = 0, keep_existing: bool = False) -> Staged:
        """Write ``data`` where it will be installed as ``path`` (rule 1; OSError when it cannot)."""
        self._open()
        made = make_dirs(path.parent)
        staged = Staged(path, temp_name(path), owner, tier, made, keep_existing)
        fd = confined.open_path(staged.temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, OWNER_FILE)
        try:
            try:
                write_whole(fd, data)
                if self.by_file:  # rule 4
                    faults.checkpoint(self.steps.fsync)
                    os.fsync(fd)
                os.fchmod(fd, 0o400)
            finally:
                os.close(fd)
        except BaseException:
            with contextlib.suppress(OSError):
                confined.unlink(staged.temp)
            raise
        self.staged.append(staged)
        return staged

    def __len__(self) -> int:
        """Files staged and not committed yet."""
        return len(self.staged)

    def commit(self) -> set[str]:
        """Install every staged file (rule 3); the owners a failure stopped."""
        staged, self.staged = self.staged, []
        failed: set[str] = set()
        if not staged:
            return failed
        if self._fd is not None:  # rule 3a
            try:
                for _ in staged:
                    faults.checkpoint(self.steps.fsync)
                sync_filesystem(self._fd)
            except OSError as exc:
                return self._drop(staged, exc, failed)
        for tier in sorted({s.tier for s in staged}):
            named = [s for s in staged if s.tier == tier and s.owner not in failed]
            for s in staged:
                if s.tier == tier and s.owner in failed:
                    self._drop([s], None, failed)
            for s in named:
                try:
                    faults.checkpoint(self.steps.install)
                    confined.rename(s.temp, s.final, replace=False)
                    s.installed = True
                except FileExistsError as exc:
                    self._drop([s], None if s.keep_existing else exc, failed)
                except OSError as exc:
                    self._drop([s], exc, failed)
            try:
                faults.checkpoint(self.steps.names)
                self._names_durable([s for s in named if s.installed])
            except OSError as exc:
                for s in named:
                    s.installed, s.error = False, exc
                    failed.add(s.owner)
                return self._drop([s for s in staged if s.tier > tier], exc, failed)
        return failed

    def _names_durable(self, named: list[Staged]) -> None:
        if self._fd is not None:
            if named:  # a tier whose every file failed names nothing
                sync_filesystem(self._fd)
            return
        directories: dict[Path, None] = {}
        for s in named:
            for made in s.made:
                directories[made.parent] = None
            directories[s.final.parent] = None
        for directory in directories:
            fsync_dir(directory)

    def _drop(self, staged: list[Staged], error: OSError | None, failed: set[str]) -> set[str]:
        """Remove these files' temporary copies; ``error`` stops their owners."""
        for s in staged:
            with contextlib.suppress(OSError):
                confined.unlink(s.temp)
            if error is not None or s.error is not None:
                s.error = s.error or error
                failed.add(s.owner)
        return failed

    def close(self) -> None:
        """Let the root's descriptor go (what is staged and not committed is the caller's to drop)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
