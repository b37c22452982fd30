"""A pass that finds everything as the last two quiet passes left it repeats their report,
without importing a plugin, reading a cursor or opening the root's tables.

Most passes land nothing: a timer runs ``asz-pipeline run`` every few minutes and the agents are
idle. Such a pass still starts the plugin host, validates the configuration, imports its
adapters, lists every project and compares every session with the settled table. What it finds
is decided by a few things only, so a pass that *changed nothing* (it landed nothing, and
counted nothing pending, busy or failed) records them, and the next ``run`` checks them before
it imports anything:

* every file and directory under the paths the adapters said they read (``AdapterContext.watch``;
  each tree walked, a link below it stamped with what it points at but not followed, as the
  adapters do not follow it), once the pass is over;
* the names at the top of the storage root, its tables and each session's ``session.state``
  (a session created or removed, a file landed in it by any pass, a table rewritten), stamped
  under the pass's lock once the pass is over;
* every configuration file the search could pick (the one named, ``asz.yaml`` here, the user's,
  the built-in defaults) and every Python file the pass had imported;
* the command line's options, the environment, the working directory and the interpreter (the
  record's key);
* the earliest instant at which an adapter or plugin said the outcome would change by time alone
  (``PassContext.recheck_at``: a provider body too young to judge).

A record is repeated only once *confirmed*: the pass after it found the same stamps and
reported the same counts and warnings. That settles two things at once. A pass may change what
the next one finds without landing anything (the first pass after a source is deleted marks its
cursor; the next reports it differently). And a source may move while a pass reads it (a line
appended after its file was read, before the stamps were taken): the stamps taken at the end of
two passes in a row bracket every read of the second, so when they are the same, so was every
file it read, and its report is what those files give. From then on, while every stamp is the
same and the instant is not reached, a pass would read no byte it did not read before and decide
the same from the same cursors: the report is printed again (``repeated``) and nothing is
imported, locked or written. Anything else is a miss, and the pass runs as always; a miss costs
only the check (a walk of the same trees), and a pass that changed nothing one walk more.

Each stamp is an ``lstat`` (device, inode, size, mtime, ctime, mode); the record keeps a SHA-256
of them. Taking part is opt-in: an enabled adapter, or a plugin observing passes, that does not
implement ``asz_pass_repeatable`` (or answers anything but ``True``) keeps every pass a full one.

The records are derived and disposable, in ``$XDG_CACHE_HOME/asz/quiet`` (owner-only, one file
per command line and environment, at most ``configcache.KEEP``). ``run --full`` ignores them.
"""

from __future__ import annotations

# Only what a bare interpreter has loaded already, or nearly: this module decides, before
# anything else is imported, whether anything else need be (``orjson`` alone would take longer
# than the whole check: it imports ``dataclasses``, ``uuid`` and ``inspect``).
import contextlib
import hashlib
import json
import os
import sys
from stat import S_ISDIR

from asz_core import __version__
from asz_core.configcache import cache_base, write_entry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

__all__ = ["PassStamps", "QuietRecord", "forget", "imported_files", "record", "replay",
           "run_key", "stamp_files", "stamp_root", "stamp_tree", "stamp_trees"]

_FORMAT = 1
#: environment variables that change between two runs of the same command in one shell
_VOLATILE_ENV = frozenset({"_", "OLDPWD", "SHLVL"})


def _table_dir() -> str:
    return os.path.join(cache_base(), "quiet")


def run_key(options: Mapping[str, Any]) -> str:
    """The key of a command line: its options and everything a pass may read besides files
    (environment, working directory, interpreter, module path, asz's version)."""
    env = {k: v for k, v in os.environ.items() if k not in _VOLATILE_ENV}
    text = json.dumps({"format": _FORMAT, "asz": __version__, "options": dict(options),
                       "env": env, "cwd": os.getcwd(), "python": sys.executable,
                       "version": sys.version, "path": sys.path}, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def _stamp(name: bytes, st: os.stat_result | None) -> bytes:
    """One line of a digest: ``name`` and what changes when its file is written, replaced,
    touched or chmodded (``-``: it does not exist, so appearing is a change)."""
    if st is None:
        return b"%s\0-\n" % name
    return b"%s\0%d %d %d %d %d %d\n" % (name, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns,
                                         st.st_ctime_ns, st.st_mode)


def _lstat_line(path: str) -> bytes:
    try:
        st: os.stat_result | None = os.lstat(path)
    except OSError:
        st = None
    return _stamp(os.fsencode(path), st)


def stamp_files(paths: Iterable[str]) -> str:
    """The digest of the ``lstat`` of each of ``paths`` (one that does not exist included)."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(_lstat_line(path))
    return digest.hexdigest()


def _walk_dir(path: str, digest: Any, seen: set[tuple[int, int]]) -> None:
    """Stamp every entry of the directory ``path`` and, through it, everything below."""
    try:
        # in the directory's own order, not sorted: a directory lists the same entries in the
        # same order until it changes, and then its mtime changes too (any other order is a
        # miss, never a wrong repeat)
        with os.scandir(path) as listing:
            entries = list(listing)
    except OSError as exc:
        digest.update(b"! %d\n" % (exc.errno or 0))
        return
    for entry in entries:
        try:
            st = entry.stat(follow_symlinks=False)  # the listing's type needs no other call
        except OSError:
            digest.update(_stamp(os.fsencode(entry.path), None))
            continue
        digest.update(_stamp(os.fsencode(entry.path), st))
        if entry.is_symlink():
            _through_link(entry.path, digest, seen, descend=False)
        elif entry.is_dir(follow_symlinks=False) and (st.st_dev, st.st_ino) not in seen:
            seen.add((st.st_dev, st.st_ino))
            _walk_dir(entry.path, digest, seen)


def _through_link(path: str, digest: Any, seen: set[tuple[int, int]], *, descend: bool) -> None:
    """What a link points at counts too (a file read through it, a directory that gains an
    entry). Only a watched path itself is walked through (``descend``: a home or ``projects``
    that is a link, which adapters resolve); below it, adapters do not follow a link to a
    directory, and walking one could walk a whole disk (a link to ``/``)."""
    try:
        st = os.stat(path)
    except OSError:
        digest.update(_stamp(b"->", None))
        return
    digest.update(_stamp(b"->", st))
    if descend and S_ISDIR(st.st_mode) and (st.st_dev, st.st_ino) not in seen:
        seen.add((st.st_dev, st.st_ino))
        _walk_dir(path, digest, seen)


def stamp_tree(path: str) -> str:
    """The digest of ``path`` and, when it is a directory (or a link to one), of every file and
    directory under it."""
    digest = hashlib.sha256(_lstat_line(path))
    seen: set[tuple[int, int]] = set()
    if os.path.islink(path):
        _through_link(path, digest, seen, descend=True)
        return digest.hexdigest()
    try:
        st = os.stat(path)
    except OSError:
        return digest.hexdigest()  # not there (its line says so) or not to be read
    if S_ISDIR(st.st_mode):
        seen.add((st.st_dev, st.st_ino))
        _walk_dir(path, digest, seen)
    return digest.hexdigest()


def stamp_trees(digests: Iterable[str]) -> str:
    """One digest for several trees' (each from :func:`stamp_tree`, in path order)."""
    return hashlib.sha256("".join(digests).encode("ascii")).hexdigest()


def stamp_root(root: str) -> str:
    """The digest of the names at the root's top (a session created or removed), of each table
    there (a dot file, ``_provider``) and of each session's ``session.state``, which every
    landing in the session rewrites, whoever lands. Not the root directory's own mtime: each
    pass changes it, probing that the root can be written."""
    try:
        names = sorted(n for n in os.listdir(root) if not n.startswith((".lock", ".probe-")))
    except OSError:
        names = []
    # not the root's lock: each pass rewrites its holder note as it lets go of it
    paths = [os.path.join(root, n) if n[0] in "._" else os.path.join(root, n, "session.state") for n in names]
    return stamp_files(paths)


class PassStamps:
    """What a pass that changed nothing stamped, under its lock, for :class:`QuietRecord`."""

    def __init__(self, *, trees: list[str], trees_digest: str, root: str, root_digest: str,
                 recheck_ns: int | None, paths: list[str]) -> None:
        self.trees = trees
        #: watched for themselves, not what is under them: stamped with the files
        self.paths = paths
        self.trees_digest = trees_digest
        self.root = root
        self.root_digest = root_digest
        #: the outcome may change by time alone from this instant on
        self.recheck_ns = recheck_ns

    @classmethod
    def take(cls, watched: Iterable[tuple[str, bool]], root: str, recheck_ns: int | None) -> PassStamps:
        """The stamps of a pass now ending: of the ``watched`` paths (``(path, all under it?)``;
        those without what is under them go with the files :func:`record` stamps), and of the
        ``root``."""
        trees: list[str] = []
        for path in sorted({path for path, tree in watched if tree}):
            if not any(path.startswith(outer.rstrip(os.sep) + os.sep) for outer in trees):
                trees.append(path)  # not one walked already as part of another
        return cls(trees=trees, trees_digest=stamp_trees(stamp_tree(p) for p in trees), root=root,
                   root_digest=stamp_root(root), recheck_ns=recheck_ns,
                   paths=sorted({path for path, tree in watched if not tree}))


class QuietRecord(PassStamps):
    """What a quiet pass left: its stamps, those of the files it depended on, and its report.

    (Plain classes, not dataclasses: ``dataclasses`` costs more to import than the check.)
    """

    def __init__(self, *, files: list[str], files_digest: str, report: dict[str, Any], exit_code: int,
                 confirmed: bool, **stamps: Any) -> None:
        super().__init__(**stamps)
        #: configuration candidates, imported Python files, paths watched without their trees
        self.files = files
        self.files_digest = files_digest
        #: what the pass printed: ``json`` (its object and warnings), ``fields`` (the line's
        #: counts) and ``started_ns``
        self.report = report
        self.exit_code = exit_code
        #: the pass before this one found the same stamps and reported the same
        self.confirmed = confirmed

    def same_as(self, other: dict[str, Any]) -> bool:
        """Whether ``other`` (a record as stored) stamped and reported what this one does."""
        mine = vars(self)
        same_stamps = all(other.get(k) == mine[k] for k in _COMPARED)
        return same_stamps and _counts(other.get("report")) == _counts(self.report)


#: what two quiet passes in a row must have in common for the second to be repeated
_COMPARED = ("trees", "trees_digest", "root", "root_digest", "files", "files_digest", "exit_code")


def _counts(report: Any) -> Any:
    """A report less what differs between two runs of the same pass."""
    if not isinstance(report, dict) or not isinstance(report.get("json"), dict):
        return None
    return {k: v for k, v in report["json"].items() if k != "elapsed_s"}, report.get("fields")


def imported_files() -> list[str]:
    """Every file this process has imported a module from (asz, plugins, libraries, the
    standard library: a few hundred ``lstat`` calls, cheaper than telling them apart)."""
    files = {getattr(m, "__file__", None) for m in list(sys.modules.values())}
    return sorted(f for f in files if isinstance(f, str) and os.path.isabs(f))


def record(key: str, stamps: PassStamps, config_files: Iterable[str], report: dict[str, Any],
           exit_code: int) -> None:
    """Keep what a quiet pass left for the next run of the same command line (quietly giving up
    if it cannot be kept): its ``stamps``, those of ``config_files`` and of every file imported,
    and its ``report``."""
    files = sorted({*config_files, *imported_files(), *stamps.paths})
    quiet = QuietRecord(**vars(stamps), files=files, files_digest=stamp_files(files), report=report,
                        exit_code=exit_code, confirmed=False)
    previous = _load(key)
    quiet.confirmed = previous is not None and quiet.same_as(previous)
    write_entry(_table_dir(), key, {"format": _FORMAT, "key": key, **vars(quiet)})


def forget(key: str) -> None:
    """Drop what the last quiet pass of this command line left (this one changed something)."""
    with contextlib.suppress(OSError):
        os.unlink(os.path.join(_table_dir(), f"{key}.json"))


def _load(key: str) -> dict[str, Any] | None:
    """The record of ``key`` as stored (less its format and key), or ``None``."""
    try:
        with open(os.path.join(_table_dir(), f"{key}.json"), "rb") as f:
            data = json.loads(f.read())
    except (OSError, ValueError):  # ValueError: JSON's errors
        return None
    if not isinstance(data, dict) or data.pop("format", None) != _FORMAT or data.pop("key", None) != key:
        return None
    return data


def replay(key: str, now_ns: int) -> QuietRecord | None:
    """The last quiet pass of this command line, if nothing it depends on has changed since."""
    data = _load(key)
    try:
        quiet = QuietRecord(**data) if data is not None else None
    except TypeError:
        return None  # a record this version did not write: a full pass
    if quiet is None or not quiet.confirmed:
        return None
    if quiet.recheck_ns is not None and now_ns >= quiet.recheck_ns:
        return None
    if (stamp_files(quiet.files) != quiet.files_digest or stamp_root(quiet.root) != quiet.root_digest
            or stamp_trees(stamp_tree(p) for p in quiet.trees) != quiet.trees_digest):
        return None
    return quiet
