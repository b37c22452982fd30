"""The storage root: sessions, their sequence numbers, their locks.

A session's sequence counter is taken from disk: on opening, one above the highest seq of any
file in the session, so the files are the authority and ``session.state`` is only a note of it.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable, Iterator
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from asz_core.root import confined, faults
from asz_core.root.cursors import format_pairs, parse_pairs
from asz_core.root.durable import (
    DEFERRED,
    OWNER_DIR,
    OWNER_FILE,
    fsync_dir,
    make_dirs_text,
    read_small,
    temp_name,
    write_note,
    write_replace,
    write_state_copy,
)
from asz_core.root.layout import FLAT_PLACE, PLACE_GROUPS, check_id, check_kind, check_place, parse_file_name
from asz_core.root.locks import FileLock, LockBusy
from asz_core.root.upstream_index import drop_upstream_index

if TYPE_CHECKING:
    from asz_core.root.group import CommitGroup
    from asz_core.root.landing import LandedFile, LandingFile
    from asz_core.sessiondata.model import Header

__all__ = ["LockBusy", "SessionHandle", "StorageRoot", "file_dirs", "landed_files", "landed_files_in", "place_dirs",
           "sweep_temporaries"]

#: directories of a session holding files of the root's own written through a temporary file
#: (``index/provider_bodies``), beside those of landed files and cursors: swept with them
_SESSION_NOTE_DIRS = ("index",)


def landed_files(session_dir: Path, links: list[Path] | None = None) -> Iterator[tuple[int, Path]]:
    """``(seq, path)`` of every landed file of a session, in no particular order. A name that is
    a link, or lies under one, is not a landed file (:mod:`~asz_core.root.confined`); given
    ``links``, each link found in the session's file directories is added to it (verify names
    them)."""
    for subdir in file_dirs(session_dir):
        yield from landed_files_in(subdir, links)


def noted_next_seq(session_dir: Path) -> int | None:
    """``next_seq`` from ``session.state``: written when a pass releases a session it landed
    into, so a hint of the highest seq, never the authority (a crash can leave it behind);
    ``None`` when there is none or it does not read."""
    try:
        data = read_small(session_dir / "session.state")
        pairs = dict(parse_pairs(data.decode("utf-8"))) if data is not None else {}
        return int(pairs["next_seq"])
    except (OSError, UnicodeDecodeError, ValueError, KeyError):
        return None


def landed_files_in(directory: Path, links: list[Path] | None = None) -> Iterator[tuple[int, Path]]:
    """``(seq, path)`` of every landed file in one directory of a session (and, given ``links``,
    each link in it added there)."""
    if confined.known(directory) is False:  # not made yet in a new session: nothing to raise
        return
    try:
        entries = confined.scandir(directory)
    except (FileNotFoundError, NotADirectoryError, confined.LinkRefused):
        return
    for entry in entries:
        if entry.is_link:
            if links is not None:
                links.append(directory / entry.name)
            continue
        parsed = parse_file_name(entry.name)
        if parsed is not None:
            yield parsed.seq, directory / entry.name


def file_dirs(session_dir: Path) -> Iterator[Path]:
    """Every directory a session's landed files lie in: ``provider_body``, then
    :func:`place_dirs`."""
    yield session_dir / FLAT_PLACE
    yield from place_dirs(session_dir)


def place_dirs(session_dir: Path) -> Iterator[Path]:
    """Each stream's and each run's directory of a session (``streams/<stream>``,
    ``runs/<run>``), where its files and cursors lie; none is listed through a link."""
    for group in PLACE_GROUPS:
        try:
            names = confined.listdir(session_dir / group)
        except (FileNotFoundError, NotADirectoryError, confined.LinkRefused):
            continue
        for name in names:
            yield session_dir / group / name


def sweep_temporaries(directory: Path) -> None:
    """Remove the ``.tmp-*`` files a killed writer left in ``directory``."""
    try:
        names = confined.listdir(directory)
    except (FileNotFoundError, NotADirectoryError, confined.LinkRefused):
        return
    for name in names:
        if name.startswith(".tmp-"):
            _remove_temporary(directory / name)


def _remove_temporary(path: Path) -> None:
    """Remove a temporary file a crash left; a directory of that name is not one of ours and
    is left alone (an ``unlink`` of it fails), so it never stops a session from landing."""
    with contextlib.suppress(FileNotFoundError, IsADirectoryError, PermissionError):
        confined.unlink(path)


class StorageRoot:
    """A storage root directory. Nothing here writes until a session is opened for landing."""

    def __init__(self, path: Path, *, pass_started_ns: int = 0, dry_run: bool = False) -> None:
        self.path = path
        self.dry_run = dry_run
        self.pass_started_ns = pass_started_ns
        #: in a dry run, the highest seq each session would hold (nothing is on disk to scan),
        #: so a later adapter's files number as the real pass numbers them
        self.dry_seq: dict[str, int] = {}
        self._entered = False

    def note_dry_landed(self, landed: LandedFile) -> None:
        """Remember a file a dry run would have landed (its seq, for the session's next file)."""
        if landed.seq > self.dry_seq.get(landed.session, 0):
            self.dry_seq[landed.session] = landed.seq

    # The pass's time as landed files name it, made when the first file lands: a pass that lands
    # nothing does not load the Session Data library for it.
    @cached_property
    def stamp(self) -> str:
        """The pass's start in landed file names."""
        from asz_core.sessiondata.times import stamp

        return stamp(self.pass_started_ns)

    @cached_property
    def at(self) -> str:
        """The pass's start as headers' ``at`` say it."""
        from asz_core.sessiondata.times import format_instant

        return format_instant(self.pass_started_ns)

    @cached_property
    def _key(self) -> str:
        """The root's absolute path with a trailing separator, as entered roots are keyed."""
        return os.path.join(os.path.abspath(self.path), "")

    def descriptor(self) -> int:
        """The root directory's descriptor (:func:`~asz_core.root.confined.entered`): what a
        session is made in by name, never following a link there."""
        return confined.entered(self._key)

    def ensure(self) -> None:
        """Create the root (owner-only) and check it is the running user's alone and can be
        written; ``OSError`` if not (:class:`~asz_core.root.confined.RootRefused` for a root
        another user could plant links in)."""
        # the root's own path is the user's to choose, links and all (a home on another disk):
        # only what is below it is confined
        os.makedirs(self.path, mode=OWNER_DIR, exist_ok=True)
        confined.check_owner(self.path)
        confined.enter(self.path)
        probe = self.path / f".probe-{os.getpid()}"
        try:
            fd = confined.open_path(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                # a byte, not an empty file: a full file system still has inodes for those
                os.write(fd, b"\n")
            finally:
                os.close(fd)
                confined.unlink(probe)
        except OSError as exc:
            if exc.errno == errno.ENOSPC:
                raise OSError(exc.errno, "no space left on its file system; nothing landed before was "
                                         "changed: free some space and run the pass again") from None
            raise

    def sweep(self) -> None:
        """Remove the temporary files a killed pass left at the top of the root (its own
        tables' ``.tmp-*``): called with the root lock held, when no other pass can be writing
        one."""
        sweep_temporaries(self.path)

    def lock(self, *, wait: bool = False) -> FileLock:
        """The root lock: held for a whole pass so two passes never interleave. Taking it
        sweeps what a killed holder left (:meth:`sweep`)."""
        confined.enter(self.path)
        return FileLock(self.path / ".lock", wait=wait, describe=True,
                        on_acquired=None if self.dry_run else self.sweep)

    def sessions(self) -> Iterator[str]:
        """Ids of the sessions in the root (names starting with ``_`` or ``.`` are not, nor is
        a link: a session directory is a directory of the root's own)."""
        confined.enter(self.path)
        try:
            entries = confined.scandir(self.path)
        except FileNotFoundError:
            return
        for entry in sorted(entries, key=lambda e: e.name):
            if not entry.name.startswith(("_", ".")) and entry.is_dir:
                yield entry.name

    def session_dir(self, session: str) -> Path:
        return self.path / check_id(session, "session id")

    def open_session(self, session: str, on_landed: Callable[[LandedFile], None] | None = None,
                     group: CommitGroup | None = None) -> SessionHandle:
        """Lock a session for landing. ``LockBusy`` if another writer holds it. In a ``group``,
        its durable steps wait for the group's commit, and so does the release of its lock."""
        if not self._entered:  # once a pass, not a stat and an fstat per session
            confined.enter(self.path)
            self._entered = True
        return SessionHandle(self, check_id(session, "session id"), on_landed, group)


class SessionHandle:
    """A session held for landing: allocates sequence numbers and lands files into it."""

    def __init__(self, root: StorageRoot, session: str,
                 on_landed: Callable[[LandedFile], None] | None, group: CommitGroup | None = None) -> None:
        self.root = root
        self.group = None if root.dry_run else group
        #: in a group: files closed, not yet durable nor installed, in the order they landed
        self.queued_files: list[LandingFile] = []
        #: in a group: state files' new bytes, by path (also in ``durable.DEFERRED``)
        self.queued_states: dict[str, bytes] = {}
        self.queued = False  #: in its group's list of sessions with steps waiting
        #: in a group: the cursors' temporary copies written, by final path
        self._state_temps: dict[str, str] = {}
        #: in a group: state files renamed into place, whose bytes ``durable.DEFERRED`` keeps
        #: while the session is held (what is read there is what was written: no read back)
        self._states_written: list[str] = []
        #: in a group: called once its steps are durable, still under the lock (a settled entry)
        self.after_commit: Callable[[], None] | None = None
        #: in a group: told what failed in its steps (the session's error)
        self.on_failure: Callable[[BaseException], None] | None = None
        #: this writer made the session's directory and its lock in this landing (never in a dry
        #: run): the directory holds nothing but what this landing writes, so no cursor, landed
        #: file, index or place is there to look for but those it wrote (:attr:`states_saved`)
        self.fresh = False
        #: every state file (cursor) :meth:`save_state` was given, in the order it was given
        self.states_saved: list[str] = []
        self.id = session
        self.dir = root.path / session
        #: :attr:`dir` as a string: what the session's own steps join, split and open
        self.dir_text = os.fspath(self.dir)
        self._on_landed = on_landed
        self._lock: FileLock | None = None
        self._next_seq = 0
        self._index_checked = False        #: upstream's ``index/`` looked for (see :meth:`begin`)
        self._unsynced: set[Path] = set()  #: directories holding names landed since the last sync
        #: parents of directories created this pass (only a session outside a group syncs
        #: them itself: a group's ``syncfs`` makes every name durable)
        self._created: set[Path] = set()
        self.landed: list[LandedFile] = []
        #: paths under the session, by ``(subdir, name)``: each is joined once per session, not
        #: at each of the five or six times a collector, the index and the settled table ask
        self._paths: dict[tuple[str, str], Path] = {}

    def __enter__(self) -> SessionHandle:
        fresh = False
        if not self.root.dry_run:
            created = make_dirs_text(self.dir_text)
            if self.group is None:
                self._created.update(Path(made).parent for made in created)
            fresh = bool(created) and created[-1] == self.dir_text
            # held from here on: the lock, what lands and the session's state are made through it
            fd = confined.hold(self.dir_text)
            try:
                if not fresh:
                    # made by an older version or by hand: owner-only from now on. One made here
                    # is already (``OWNER_DIR``, less what the umask takes away). Through a
                    # descriptor: a link planted at the session's name is refused, not chmodded
                    os.fchmod(fd, OWNER_DIR)
                self._lock = self._take_lock(fresh)
                fresh = fresh and self._lock.new
                if fresh:
                    # made and locked here: it holds its lock alone, and this writer knows each
                    # name it adds (nothing to list, nor any cursor or index to look for)
                    confined.know(self.dir_text, [".lock"])
            except BaseException:
                confined.release_held(self.dir_text)
                raise
        try:
            # a directory this writer has just made holds nothing but its lock: nothing to scan
            # (another writer's file there would only make an install refuse, never replace)
            on_disk = 0 if fresh else self._scan()
            self._index_checked = self.fresh = fresh  # nor an upstream ``index/`` to drop
            self._next_seq = max(on_disk, self.root.dry_seq.get(self.id, 0)) + 1
        except BaseException:
            self._release()
            raise
        return self

    def _take_lock(self, fresh: bool) -> FileLock:
        """The session's lock; in a directory this writer has just made, a lock file of its own
        (``O_EXCL``), unless another writer's is there already."""
        path = f"{self.dir_text}{os.sep}.lock"  # a string: it is only opened (and named, if busy)
        if fresh:
            lock = FileLock(path, new=True)
            try:
                lock.acquire()
                return lock
            except FileExistsError:
                pass
        lock = FileLock(path)
        lock.acquire()
        return lock

    def __exit__(self, *exc: object) -> None:
        if self.group is not None and self._lock is not None:
            self.group.hold(self)  # released once the group has committed
            return
        self._release()

    def release_after_commit(self) -> None:
        """(The group) every step is durable or dropped: settle the session and let it go."""
        try:
            if self.after_commit is not None:
                self.after_commit()
        finally:
            self._release()

    def _release(self) -> None:
        try:
            self.sync()
            if self.landed and not self.root.dry_run:
                # derived from the files on disk and never read back: written in place
                write_note(os.path.join(self.dir_text, "session.state"),
                           format_pairs([("next_seq", self._next_seq), ("updated_at", self.root.at)]))
        finally:
            for path in self._states_written:
                DEFERRED.pop(path, None)
            self._states_written.clear()
            confined.release_held(self.dir_text)
            if self._lock is not None:
                self._lock.release()
                self._lock = None

    def path(self, subdir: str, name: str = "") -> Path:
        """``<session>/<subdir>/<name>`` (``<session>/<subdir>`` without a name), joined once."""
        key = (subdir, name)
        path = self._paths.get(key)
        if path is None:
            path = self.dir / (f"{subdir}/{name}" if subdir and name else subdir or name)  # one join
            self._paths[key] = path
        return path

    def sync(self, *, created: bool = False) -> None:
        """Make every name landed since the last sync durable: one fsync per directory,
        however many files landed in it. This is what lets a cursor refer to the files, so it
        runs before every cursor write.

        A cursor lives in the directory of the files it covers: if that directory was new and
        its own entry is lost to a power loss, the cursor goes with the files, and they land
        again. State kept elsewhere (``_provider/seen.state``) has no such luck, so its writer
        asks for ``created=True``: the entries of directories created this pass too.
        """
        if self.group is not None:
            # the group's ``syncfs`` makes every name durable before a cursor moves; one that
            # state elsewhere is about to name (``created``) is made durable now
            if created:
                self.group.flush()
            return
        dirs = self._unsynced | self._created if created else self._unsynced
        for directory in sorted(dirs, key=lambda p: len(p.parts), reverse=True):
            faults.checkpoint("dir-fsync")
            fsync_dir(directory)
        self._unsynced.clear()
        if created:
            self._created.clear()

    def _scan(self) -> int:
        """The highest seq on disk; removes temporary files a crash left behind, in every
        directory of the session the root writes them in (its file directories, ``index/``).

        The session directory is listed first, and only the file directories it holds are
        looked into: a new session (only its ``.lock``) costs one listing, not a listing and
        three opens of directories that are not there.
        """
        try:
            top = confined.listdir(self.dir)
        except FileNotFoundError:
            return 0
        highest = self._scan_names(self.dir, top)
        for name in (FLAT_PLACE, *PLACE_GROUPS):
            if name not in top:
                continue
            if name == FLAT_PLACE:
                subdirs = [self.dir / name]
            else:
                try:
                    subdirs = [self.dir / name / inner for inner in confined.listdir(self.dir / name)]
                except (FileNotFoundError, NotADirectoryError):
                    continue
            for subdir in subdirs:
                try:
                    names = confined.listdir(subdir)
                except (FileNotFoundError, NotADirectoryError):
                    continue
                highest = max(highest, self._scan_names(subdir, names))
        if not self.root.dry_run:
            for name in _SESSION_NOTE_DIRS:
                if name in top:
                    sweep_temporaries(self.dir / name)
        return highest

    def _scan_names(self, subdir: Path, names: list[str]) -> int:
        highest = 0
        for name in names:
            if name.startswith(".tmp-"):
                if not self.root.dry_run:
                    _remove_temporary(subdir / name)
                continue
            parsed = parse_file_name(name)
            if parsed is not None and parsed.seq > highest:
                highest = parsed.seq
        return highest

    def begin(self, subdir: str, header: Header) -> LandingFile:
        """Start a file under ``<session>/<subdir>``; its seq and collection time are set here."""
        from asz_core.root.landing import LandingFile  # loads the writer: only once something lands

        # what names the file and its directory comes from an adapter: a word, and a place of
        # the session, before anything is made (a kind or place of another shape is refused)
        check_kind(header.kind)
        check_place(subdir)
        if not self._index_checked and not self.root.dry_run:
            self._index_checked = True
            drop_upstream_index(self.dir)  # before the first file is added, as the format says
        header.seq = self._next_seq
        header.at = self.root.at
        header.session = self.id
        self._next_seq += 1
        # held: its temporary file's creation, its rename, its directory's fsync and its
        # cursor's replacement each go through one descriptor
        landing = LandingFile(self.root.path, self.id, subdir, header, self.root.stamp,
                              dry_run=self.root.dry_run, directory=self.path(subdir), hold=True)
        if self.fresh and confined.known(landing.directory) is not True:
            # a name another writer made there, lock or not: the session holds more than this
            # landing wrote, and what is in it is looked for from now on
            self.fresh = False
        return landing

    def commit(self, landing: LandingFile) -> LandedFile:
        """Install a file begun with :meth:`begin` and report it.

        The file is durable, its name not yet: call :meth:`sync` before writing anything that
        refers to it (the collectors do, before each cursor write).
        """
        if self.group is not None:
            landed = landing.close(durable=False)
            self.queued_files.append(landing)
            self.group.queued(self)
        else:
            landed = landing.commit()
        if not landed.dry_run:
            self._unsynced.add(landing.directory)
            if self.group is None:
                self._created.update(Path(made).parent for made in landing.created_dirs)
        self.landed.append(landed)
        if self._on_landed is not None:
            self._on_landed(landed)
        return landed

    def save_state(self, path: Path, data: bytes) -> None:
        """Replace the state file ``path`` (a cursor) that refers to what landed: after every
        name landed is durable, through a temporary file fsynced before its rename. In a group,
        the group's commit writes it (this process reads ``data`` there meanwhile)."""
        key = os.fspath(path)
        if key not in self.states_saved:
            self.states_saved.append(key)
        if self.group is None:
            self.sync()
            write_replace(path, data, sync_dir=False)
            return
        self.queued_states[key] = DEFERRED[key] = data
        self.group.queued(self)

    # The group's steps for this session (:mod:`~asz_core.root.group`, rule 2). Each returns
    # whether the session goes on; a failure drops what is left of it and is the session's error.

    def install_queued(self) -> bool:
        """Rename each durable temporary file to its final name, in the order they landed."""
        try:
            while self.queued_files:
                self.queued_files[0].install()
                self.queued_files.pop(0)
        except OSError as exc:
            self.drop_queued(exc)
            return False
        return True

    def write_queued_states(self) -> bool:
        """Write each state file's temporary copy (no fsync: the group's ``syncfs`` follows)."""
        try:
            for path, data in self.queued_states.items():
                temp = temp_name(path)
                fd = confined.open_path(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, OWNER_FILE)
                self._state_temps[path] = temp
                write_state_copy(fd, data)
        except OSError as exc:
            self.drop_queued(exc)
            return False
        return True

    def checkpoint_dirs(self) -> None:
        """The directories whose new names the group's second ``syncfs`` makes durable."""
        for _ in self._unsynced:
            faults.checkpoint("dir-fsync")
        self._unsynced.clear()

    def move_queued_states(self) -> None:
        """Rename each durable state copy over its file."""
        try:
            for path in list(self._state_temps):
                faults.checkpoint("state-rename")
                confined.rename(self._state_temps.pop(path), path, replace=True)
                del self.queued_states[path]
                self._states_written.append(path)
        except OSError as exc:
            self.drop_queued(exc)

    def drop_queued(self, exc: BaseException) -> None:
        """Remove what is left of this session's steps; ``exc`` is its error."""
        for landing in self.queued_files:
            landing.abort()
        self.queued_files.clear()
        for temp in self._state_temps.values():
            _remove_temporary(Path(temp))
        self._state_temps.clear()
        for path in self.queued_states:
            DEFERRED.pop(path, None)
        self.queued_states.clear()
        if self.on_failure is not None:
            self.on_failure(exc)
