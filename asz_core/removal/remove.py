"""Removing one marked session, in the order that lets a stop at any instant be finished later.

A removal deletes only the files its marker lists, and only while each still holds the bytes
the build wrote. It never follows a link: the source is walked by descriptor, and the session
directory and the chain go into ``_removed/`` in one rename each. A stop anywhere leaves a marker
saying ``removing``, and the next pass goes on from wherever this one stopped without deciding
again. The steps, in this order (each with the reason it comes where it does):

1. The marker is rewritten to say ``removing``: from then on no pass decides again, and a build
   refuses to write the session.
2. The source files the marker lists are deleted (one that is already gone was deleted by a
   stopped removal), then the empty directories named for the session; a project directory,
   which every session of a feed shares, never. The source goes first because the cursors live
   in the session directory: a source that outlived them would be read again from byte 0.
3. ``<root>/<session>/`` is renamed to ``_removed/<session>/`` and deleted there. The landed
   files go before the chain, so nothing parses the session again.
4. ``_conversations/<session>/`` is renamed to ``_removed/<session>.chain/`` and deleted there.
   (5. The metrics spool files the session owns go with step 6, by the sending plugin's
   ``asz_sessions_removed``: :func:`asz_core.metrics.removal.forget_sessions`.)

Steps 6 (the state lines) and 7 (the marker) run once for every session a pass finished, in
:mod:`asz_core.removal.pass_end`: a line is dropped only once its file is gone, so nothing is
sent twice, and the marker goes last, so whatever stopped a pass the next one finishes it.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from asz_core.assembly.chain import CONVERSATIONS
from asz_core.removal.marker import REMOVING, Marker
from asz_core.removal.scenario_root import delete_in_removed, move_to_removed, open_nofollow_dir
from asz_core.root import faults
from asz_core.root.locks import FileLock, LockBusy

__all__ = ["POINTS", "RemovalStopped", "SessionBusy", "remove_session"]

#: every point a removal reaches, in order: where the crash tests stop it (``ASZ_FAULT``)
POINTS = ("remove-marked", "remove-source-file", "remove-source-dirs", "remove-session-moved",
          "remove-session-deleted", "remove-chain-moved", "remove-chain-deleted", "remove-state",
          "remove-unmarked")


class RemovalStopped(Exception):
    """A check inside a removal refused (a source file changed since the build wrote it): the
    session is left for a person, its marker still saying ``removing``."""


class SessionBusy(Exception):
    """Another process holds the session's or the chain's lock: the removal waits a pass."""


def remove_session(root: Path, source: Path, marker: Marker, marker_file: Path) -> None:
    """Steps 1 to 4 for one session, under its lock and its chain's."""
    with _locked(root / marker.session), _locked(root / CONVERSATIONS / marker.session):
        if marker.state != REMOVING:                                           # step 1
            marker.state = REMOVING
            marker.save(marker_file)
        faults.checkpoint("remove-marked")
        _delete_sources(source, marker)                                        # step 2
        faults.checkpoint("remove-source-dirs")
        _move_and_delete(root, marker.session, marker.session, "session")      # step 3
        _move_and_delete(root, f"{CONVERSATIONS}/{marker.session}", f"{marker.session}.chain", "chain")  # step 4


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """The directory's ``.lock`` held, when the directory is there (taking a lock would create it)."""
    try:
        st = os.lstat(directory)
    except FileNotFoundError:
        yield
        return
    if not stat.S_ISDIR(st.st_mode):
        raise RemovalStopped(f"{directory} is a symbolic link or not a directory")
    lock = FileLock(directory / ".lock", describe=True)
    try:
        lock.acquire()
    except LockBusy as exc:
        raise SessionBusy(f"{exc}; the removal goes on at a later pass") from None
    try:
        yield
    finally:
        lock.release()


def _delete_sources(source: Path, marker: Marker) -> None:
    dirs: set[str] = set()
    with open_nofollow_dir(None, str(source)) as source_fd:
        for f in marker.files:
            parent, _, name = f.path.rpartition("/")
            try:
                with open_nofollow_dir(source_fd, parent) as dir_fd:
                    _delete_if_unchanged(dir_fd, name, f.size, f.sha256, source / f.path)
                    os.fsync(dir_fd)
            except FileNotFoundError:
                pass  # its directory went with a stopped removal
            except NotADirectoryError:
                raise RemovalStopped(f"a directory above {source / f.path} is not one; nothing was deleted "
                                     f"through it") from None
            except OSError as exc:
                if exc.errno != errno.ELOOP:
                    raise
                raise RemovalStopped(f"a directory above {source / f.path} is a symbolic link; nothing was "
                                     f"deleted through it") from None
            faults.checkpoint("remove-source-file")
            parts = parent.split("/")
            if marker.session in parts[1:]:  # a directory named for the session, below its project
                cut = parts.index(marker.session, 1)
                dirs.update("/".join(parts[:i]) for i in range(cut + 1, len(parts) + 1))
        for rel in sorted(dirs, key=lambda d: d.count("/"), reverse=True):
            parent, _, name = rel.rpartition("/")
            with contextlib.suppress(FileNotFoundError), open_nofollow_dir(source_fd, parent) as dir_fd:
                try:
                    os.rmdir(name, dir_fd=dir_fd)
                    os.fsync(dir_fd)
                except OSError as exc:
                    if exc.errno not in (errno.ENOENT, errno.ENOTEMPTY, errno.EEXIST):
                        raise


def _delete_if_unchanged(dir_fd: int, name: str, size: int, sha256: str, shown: Path) -> None:
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    except FileNotFoundError:
        return  # deleted by a stopped removal
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise RemovalStopped(f"{shown} is a symbolic link; nothing was deleted through it") from None
        raise
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise RemovalStopped(f"{shown} is not a regular file")
        h = hashlib.sha256()
        while chunk := f.read(1 << 20):
            h.update(chunk)
        if os.fstat(fd).st_size != size or h.hexdigest() != sha256:
            raise RemovalStopped(f"{shown} changed after the build wrote it; nothing more of the session "
                                 f"is deleted")
    os.unlink(name, dir_fd=dir_fd)


def _move_and_delete(root: Path, rel: str, new_name: str, what: str) -> None:
    move_to_removed(root, rel, new_name)
    faults.checkpoint(f"remove-{what}-moved")
    delete_in_removed(root, new_name)
    faults.checkpoint(f"remove-{what}-deleted")
