"""Paths inside a storage root, opened without ever following a link.

Nothing inside the root is trusted: a link planted at any name in it (the lock, a state file, a
session directory, ``streams/``, ``index/``, ``_provider/``) must not make a pass read, write,
truncate, delete or chmod anything outside it. So:

1. The root is *entered* once (:func:`enter`): its own path is the user's choice and is resolved
   like any path, and its directory stays open for the process (forked workers inherit it).
2. Every path below an entered root is opened relative to that directory with no link followed
   at any component: ``openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`` where Linux has it (one
   system call), else a walk of ``openat(O_NOFOLLOW | O_DIRECTORY)`` one component at a time.
   A link met on the way is :class:`LinkRefused`. A name at the root's top (a session's
   directory, the root's own tables) is one component: it is opened through the root's
   descriptor (``openat``, ``O_NOFOLLOW``), as a name in a held directory is (rule 3).
3. Every other operation (make a directory, list, unlink, rename, chmod) goes through a
   descriptor of the directory so opened, and names only the last component, which the system
   calls used never follow (``mkdirat``, ``unlinkat``, ``renameat``, ``fchmod``). A writer
   holding a session keeps the descriptors of its directories open while it holds it
   (:func:`hold`), so each landed file's rename, directory fsync and cursor rename costs one
   system call, not an open and a close around it; a file whose directory is held is opened
   through that descriptor (``openat`` of its last component, ``O_NOFOLLOW``).
4. A directory a writer has just made and holds (a new session's, and those made inside it
   while it is held) is *known*: the names made, renamed and removed in it through this module
   are noted, so listing it, or opening a name that is not there, costs no system call
   (:func:`known`). Nothing else writes there: the writer holds the session's lock, and every
   write below the root goes through this module. A name found there all the same (a create
   or ``mkdir`` refused as existing) makes the directory unknown again.
5. A path below no entered root (a test of one function, a scratch directory) is the caller's
   own: a directory is reached as ``os.open`` reaches it, and only a file's last component is
   never followed (``O_NOFOLLOW``).
6. Nothing is opened to wait: every open is ``O_NONBLOCK``, so a fifo planted at a name reads as
   an empty file (and one opened to write fails), where ``open(2)`` would wait for its other end
   for good. A regular file or a directory does not see the flag.

:func:`check_owner` refuses a root that another user could plant links in before any of this
runs: one not owned by the running user, or writable by its group or by others.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

from asz_core.root import libc

__all__ = ["Entry", "LinkRefused", "RootRefused", "check_owner", "dir_descriptor", "enter", "entered", "held_count",
           "hold", "know", "known", "listdir", "make_held", "mkdir", "open_dir", "open_path", "release_held", "rename",
           "rename_noreplace_at", "scandir", "unlink", "walk"]

_SEP = os.sep
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
_SYS_OPENAT2 = 437  # the same number on every Linux architecture (the unified syscall table)

#: each entered root's path (as given and resolved, as strings with a trailing separator) → its
#: directory's descriptor
_roots: dict[str, int] = {}


class LinkRefused(OSError):
    """A link (or something else than was expected) where a pass was to open a path in the root."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(errno.ELOOP, f"{path} is a link (or lies under one) inside the storage root; "
                                      f"a pass never follows a link there: remove the link", str(path))

    def __str__(self) -> str:
        return str(self.strerror)


class RootRefused(OSError):
    """A root another user could plant links in."""

    def __str__(self) -> str:
        return str(self.strerror)


def check_owner(root: Path) -> None:
    """``RootRefused`` unless ``root`` (a directory, its own path's links followed) is owned by
    the running user and writable by nobody else."""
    st = os.stat(root)
    uid = os.geteuid()
    if st.st_uid != uid:
        raise RootRefused(errno.EPERM, f"the storage root {root} is owned by uid {st.st_uid}, not by you "
                                       f"(uid {uid}): its owner could plant links in it that a pass would "
                                       f"write through; use a root of your own (storage.root or $ASZ_ROOT)")
    if st.st_mode & 0o022:
        raise RootRefused(errno.EPERM, f"the storage root {root} is writable by its group or by others "
                                       f"(mode {stat.S_IMODE(st.st_mode):04o}): any of them could plant links "
                                       f"in it; make it yours alone (chmod 700 {root})")


def enter(root: Path) -> None:
    """Confine every later open below ``root`` to it (nothing when it is not a directory yet).

    Called again for the same path, it checks the directory held is still the one there (a
    root removed and made again is entered anew). A process holds at most :data:`_MOST_ROOTS`
    (a test run passes through hundreds): the one entered longest ago is let go first."""
    given = os.path.join(os.path.abspath(root), "")
    held = _roots.get(given)
    try:
        st = os.stat(root)
    except (FileNotFoundError, NotADirectoryError):
        return
    if held is not None:
        now = os.fstat(held)
        if (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino):
            return
        _leave(held)
    try:
        fd = os.open(root, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return
    while len(set(_roots.values())) >= _MOST_ROOTS:
        _leave(next(iter(_roots.values())))
    _roots[given] = fd
    _roots.setdefault(os.path.join(os.path.realpath(root), ""), fd)


_MOST_ROOTS = 8


def entered(key: str) -> int:
    """The descriptor :func:`enter` holds of the root whose absolute path, with a trailing
    separator, is ``key`` (as it keys them), entering it when it holds none (never entered, or
    let go for a root entered since); ``FileNotFoundError`` when it is no directory."""
    fd = _roots.get(key)
    if fd is None:
        enter(Path(key))
        fd = _roots.get(key)
        if fd is None:
            raise FileNotFoundError(errno.ENOENT, "the storage root is not a directory", key)
    return fd


def _leave(fd: int) -> None:
    for prefix in [prefix for prefix, held in _roots.items() if held == fd]:
        del _roots[prefix]
    os.close(fd)


def _beneath(path: str | Path) -> tuple[int, str] | None:
    """The descriptor of the entered root ``path`` lies in and the path relative to it."""
    if not _roots:
        return None
    text = os.fspath(path)
    if not text.startswith(os.sep):  # an absolute path is taken as it is: a ``..`` in what is
        text = os.path.abspath(text)  # below the root is refused by the open itself
    for prefix, fd in _roots.items():
        if text.startswith(prefix):
            return fd, text[len(prefix):]
        if text + os.sep == prefix:
            return fd, "."
    return None


def split(text: str) -> tuple[str, str]:
    """``os.path.split(text)``: with one ``rpartition`` for the paths a pass names (absolute,
    no doubled separator), which it splits several times a session; any other path as
    ``os.path.split`` splits it."""
    head, _, tail = text.rpartition(_SEP)
    if head and head[-1] != _SEP:
        return head, tail
    return os.path.split(text)


def open_path(path: str | Path, flags: int, mode: int = 0o600) -> int:
    """``os.open`` with no link followed below the root (see the module's rules)."""
    flags |= _O_NOFOLLOW | _O_CLOEXEC | _O_NONBLOCK
    text = path if type(path) is str else os.fspath(path)
    if _known and not flags & os.O_CREAT and known(text) is False:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), text)
    where = None
    directory, name = split(text)
    try:
        held = _held.get(directory) if _held else None
        if held is None and _roots:  # a name at the top of an entered root: its descriptor
            held = _roots.get(directory + _SEP)
        if held is not None and name not in ("", ".", ".."):
            fd = os.open(name, flags, mode, dir_fd=held)  # the directory's own name
        else:
            where = _beneath(text)
            if where is None:
                fd = os.open(text, flags & ~_O_NOFOLLOW if flags & _O_DIRECTORY else flags, mode)
            elif where[1] == ".":
                fd = os.open(".", flags, mode, dir_fd=where[0])
            else:
                fd = _open_beneath(where[0], where[1], flags, mode)
    except OSError as exc:
        if exc.errno == errno.EEXIST and _known:
            _distrust(os.path.dirname(text))
        if exc.errno == errno.ELOOP or (exc.errno == errno.EXDEV and where is not None):
            raise LinkRefused(path) from None
        # a link where a directory was asked for says "not a directory" (``O_DIRECTORY`` is
        # checked before ``O_NOFOLLOW``): said as what it is
        if exc.errno == errno.ENOTDIR and _has_link(path, where):
            raise LinkRefused(path) from None
        raise
    if flags & os.O_CREAT and _known:
        _note(text, made=True, is_dir=False, parts=(directory, name))
    return fd


def _has_link(path: str | Path, where: tuple[int, str] | None) -> bool:
    """Whether ``path``, or a directory on the way to it below its root, is a link (asked only
    once an open failed, to say why)."""
    text = os.path.abspath(path)
    top = text[: len(text) - len(where[1])] if where is not None and where[1] != "." else os.path.dirname(text)
    while len(text) >= len(top) and text not in ("", os.sep):
        if os.path.islink(text):
            return True
        text = os.path.dirname(text)
    return False


def open_dir(path: str | Path) -> int:
    """A descriptor of the directory ``path`` (``NotADirectoryError`` if it is a file,
    ``LinkRefused`` if it is a link)."""
    return open_path(path, os.O_RDONLY | _O_DIRECTORY)


#: directories held open by the writer of a session (their path as a string → a descriptor
#: opened by :func:`open_dir`): only directories nothing removes while a session is held (the
#: session's own, those its files land in), so a descriptor always names the directory at its path
_held: dict[str, int] = {}
#: the names in each *known* directory (rule 4), each with whether it is a directory: the path
#: of each, as a string → its names
_known: dict[str, dict[str, bool]] = {}
#: each held directory with none held above it (a session's own) → the directories held or
#: known below it, so that letting a session go touches its own entries, not those of every
#: session a group holds
_below: dict[str, list[str]] = {}
#: no path shorter than these is a key of :data:`_known` / :data:`_below` (the shortest put
#: there since they were last empty): a look upwards for a known or held directory above a
#: path (a session's own, which has none) stops there, not at the file system's root
_shortest_known = _shortest_top = 1 << 30
#: ... and no key of :data:`_below` is longer than this one (since it was last empty): a
#: directory of its length has no other key below it, so letting it go looks at no other
#: session's entries (a group's sessions are directories of one length, side by side)
_longest_top = 0


def hold(directory: str | Path) -> int:
    """A descriptor of ``directory`` kept open until :func:`release_held`; later operations on
    names in it go through it."""
    key = directory if type(directory) is str else os.fspath(directory)
    fd = _held.get(key)
    if fd is None:
        fd = _held[key] = open_dir(key)
        if key not in _known:  # a known one was filed when it was made or known (:func:`_note`)
            _register(key)
    return fd


def _register(key: str) -> None:
    """File ``key`` under the nearest held directory above it with none held above that, or
    make it one."""
    global _shortest_top, _longest_top
    if key in _below:
        return
    directory, name = split(key)
    while name and len(directory) >= _shortest_top:
        inner = _below.get(directory)
        if inner is not None:
            inner.append(key)
            return
        directory, name = split(directory)
    _below[key] = []
    _shortest_top = min(_shortest_top, len(key))
    _longest_top = max(_longest_top, len(key))


def make_held(parent: str, name: str, mode: int) -> str:
    """Make the directory ``name`` in ``parent`` and hold it (:func:`hold`): one ``mkdirat`` and
    one ``openat`` through the parent's descriptor, what was made noted as :func:`mkdir` notes it,
    with no path split or looked up on the way. Its path, as a string. A name there all the same
    is ``FileExistsError``, and a known parent is no longer known (rule 4)."""
    fd, owned = dir_descriptor(parent)
    try:
        try:
            os.mkdir(name, mode, dir_fd=fd)
        except FileExistsError:
            if _known:
                _distrust(parent)
            raise
        names = _known.get(parent)
        if names is not None:
            names[name] = True
        held = os.open(name, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC | _O_NONBLOCK, dir_fd=fd)
    finally:
        if owned:
            os.close(fd)
    path = parent + _SEP + name
    _held[path] = held
    if names is not None:
        _known[path] = {}  # made here, inside a known directory: it holds nothing yet
    _register(path)
    return path


def held_count() -> int:
    """How many directories are held open."""
    return len(_held)


def know(directory: str | Path, files: Iterable[str]) -> None:
    """The held ``directory`` holds ``files`` and nothing else, and the caller is its only
    writer until it lets it go: it is *known* from now on (rule 4). For a directory the caller
    has just made and locked."""
    global _shortest_known
    key = os.fspath(directory)
    assert key in _held, "only a held directory is known"
    _known[key] = dict.fromkeys(files, False)
    _shortest_known = min(_shortest_known, len(key))


def release_held(under: str | Path) -> None:
    """Close the held descriptors of ``under`` and of the directories below it, which are no
    longer known either."""
    top = os.fspath(under)
    below = top + os.sep
    if top in _below:
        tops = [top]  # no key longer than it, none below it; else one filed before it was held may be
        if len(top) < _longest_top:
            tops += [key for key in _below if key.startswith(below)]
        for outer in tops:
            for key in (outer, *_below.pop(outer)):
                fd = _held.pop(key, None)
                if fd is not None:
                    os.close(fd)
                _known.pop(key, None)
    else:  # below a held directory, or none held: every entry is looked at
        for outer in [key for key in _below if key.startswith(below)]:
            del _below[outer]
        for key in [key for key in _held if key == top or key.startswith(below)]:
            os.close(_held.pop(key))
        for key in [key for key in _known if key == top or key.startswith(below)]:
            del _known[key]
    _forget_marks()


def _forget_marks() -> None:
    """Let the shortest and longest marks go once nothing is known or held below them."""
    global _shortest_known, _shortest_top, _longest_top
    if not _known:
        _shortest_known = 1 << 30
    if not _below:
        _shortest_top, _longest_top = 1 << 30, 0


def known(path: str | Path) -> bool | None:
    """Whether ``path`` is there, as far as a known directory above it says (rule 4): ``True``
    or ``False``, or ``None`` when no known directory says (then only the system knows)."""
    if not _known:
        return None
    text = path if type(path) is str else os.fspath(path)
    if text in _known:
        return True
    directory, name = split(text)
    while name and len(directory) >= _shortest_known:
        names = _known.get(directory)
        if names is not None:
            if name not in names:
                return False
            return True if len(directory) + len(os.sep) + len(name) == len(text) else None
        directory, name = split(directory)
    return None


def _note(path: str, *, made: bool, is_dir: bool, parts: tuple[str, str] | None = None) -> None:
    """Note in its known directory that ``path`` was made or removed (``parts``: ``path``
    split, when the caller has split it already)."""
    directory, name = split(path) if parts is None else parts
    names = _known.get(directory)
    if names is None:
        return
    if made:
        names[name] = is_dir
        if is_dir and path not in _known:  # made here, inside a known directory: it holds nothing yet
            _known[path] = {}  # longer than its known directory: the shortest mark stands
            _register(path)
    else:
        names.pop(name, None)
        _known.pop(path, None)


def dir_descriptor(directory: str | Path) -> tuple[int, bool]:
    """A descriptor of ``directory``, and whether the caller must close it (it is neither held
    nor an entered root)."""
    key = os.fspath(directory) or "."
    held = _held.get(key)
    if held is not None:
        return held, False
    root = _roots.get(key if key.endswith(os.sep) else key + os.sep)  # as :func:`enter` keys it
    if root is not None:
        return root, False
    return open_dir(key), True


def _parent(text: str) -> tuple[int, str, bool]:
    """The descriptor of ``text``'s directory, its last component, and whether the caller
    must close the descriptor (:func:`dir_descriptor`). A function, not a context manager:
    every landed file's rename and every ``mkdir`` of a session goes through it."""
    directory, name = split(text)
    fd, owned = dir_descriptor(directory)
    return fd, name, owned


def listdir(path: str | Path) -> list[str]:
    if _known:
        names = _known_names(path)
        if names is not None:
            return list(names)
    fd = open_dir(path)
    try:
        return os.listdir(fd)
    finally:
        os.close(fd)


def _known_names(path: str | Path) -> dict[str, bool] | None:
    """The names of a known directory (``FileNotFoundError`` when a known one says it is not
    there); ``None`` when that is for the system to say."""
    text = os.fspath(path)
    names = _known.get(text)
    if names is None and known(text) is False:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), text)
    return names


class Entry(NamedTuple):
    """A name in a directory and what it is itself (a link is not looked through). A named tuple
    (docs/architecture.md, "Classes a pass imports")."""

    name: str
    is_dir: bool
    is_link: bool


def scandir(path: str | Path) -> list[Entry]:
    """The entries of ``path``: what each is comes with the listing where the file system says
    so, else from an ``lstat`` relative to the open directory."""
    if _known:
        names = _known_names(path)
        if names is not None:  # only directories and regular files are made there
            return [Entry(name, is_dir, False) for name, is_dir in names.items()]
    fd = open_dir(path)
    try:
        with os.scandir(fd) as entries:
            return [Entry(e.name, e.is_dir(follow_symlinks=False), e.is_symlink()) for e in entries]
    finally:
        os.close(fd)


def walk(top: str | Path) -> list[tuple[str, list[str], list[str]]]:
    """``os.walk(top)``, top-down, with every directory opened and listed as :func:`scandir`
    does (rule 3): ``(directory, its directories, its other names)`` for each directory of the
    tree. A ``top`` that is not there, or not a directory, has none. A link at ``top``, on the
    way to it or anywhere in the tree is :class:`LinkRefused` naming it, never descended nor
    left out; the whole tree is listed before any of it is returned, so a caller never acts on
    part of a tree that has a link in it."""
    text = os.fspath(top)
    try:
        entries = scandir(text)
    except (FileNotFoundError, NotADirectoryError):
        return []
    out: list[tuple[str, list[str], list[str]]] = []
    pending = [(text, entries)]
    while pending:
        directory, entries = pending.pop()
        dirs: list[str] = []
        names: list[str] = []
        for entry in entries:
            if entry.is_link:
                raise LinkRefused(os.path.join(directory, entry.name))
            (dirs if entry.is_dir else names).append(entry.name)
        out.append((directory, dirs, names))
        for name in reversed(dirs):
            inner = os.path.join(directory, name)
            try:
                pending.append((inner, scandir(inner)))
            except (FileNotFoundError, NotADirectoryError):  # removed, or replaced, meanwhile
                continue
    return out


def mkdir(path: str | Path, mode: int) -> None:
    text = path if type(path) is str else os.fspath(path)
    directory, name = split(text)
    fd, owned = dir_descriptor(directory)
    try:
        os.mkdir(name, mode, dir_fd=fd)
    except FileExistsError:
        if _known:
            _distrust(os.path.dirname(text))
        raise
    finally:
        if owned:
            os.close(fd)
    if _known:
        _note(text, made=True, is_dir=True, parts=(directory, name))


def _distrust(directory: str) -> None:
    """A name was there that a known ``directory`` did not list: something else wrote there,
    so it, and what is below it, is for the system to say from now on."""
    below = directory + os.sep
    for key in [key for key in _known if key == directory or key.startswith(below)]:
        del _known[key]


def unlink(path: str | Path) -> None:
    text = path if type(path) is str else os.fspath(path)
    fd, name, owned = _parent(text)
    try:
        os.unlink(name, dir_fd=fd)
    finally:
        if owned:
            os.close(fd)
    if _known:
        _note(text, made=False, is_dir=False)


def rename(source: str | Path, target: str | Path, *, replace: bool) -> None:
    """Rename within one directory; ``replace=False`` never replaces (``FileExistsError``)."""
    text = source if type(source) is str else os.fspath(source)
    new = split(target if type(target) is str else os.fspath(target))[1]
    directory, old = split(text)
    fd, owned = dir_descriptor(directory)
    try:
        if replace:
            os.replace(old, new, src_dir_fd=fd, dst_dir_fd=fd)
        else:
            rename_noreplace_at(fd, old, new)
    finally:
        if owned:
            os.close(fd)
    if _known:
        _note(text, made=False, is_dir=False, parts=(directory, old))
        _note(os.path.join(directory, new), made=True, is_dir=False, parts=(directory, new))


_UNLOADED: Any = object()
_openat2_fn: Any = _UNLOADED
_renameat2_fn: Any = _UNLOADED
_hows: dict[tuple[int, int], Any] = {}
_RENAME_NOREPLACE = 1


def _renameat2() -> Any:
    """libc's ``renameat2``, loaded on the first install (``None`` where there is none)."""
    global _renameat2_fn
    if _renameat2_fn is _UNLOADED:
        _renameat2_fn = _load_renameat2()
    return _renameat2_fn


def _load_renameat2() -> Any:
    import ctypes

    return libc.function("renameat2", [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint])


def rename_noreplace_at(dir_fd: int, old: str, new: str) -> None:
    """Rename ``old`` to ``new`` in the directory ``dir_fd``; ``FileExistsError`` if ``new``
    exists."""
    renameat2 = _renameat2()
    if renameat2 is not None:
        if renameat2(dir_fd, os.fsencode(old), dir_fd, os.fsencode(new), _RENAME_NOREPLACE) == 0:
            return
        import ctypes

        err = ctypes.get_errno()
        if err not in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
            raise OSError(err, os.strerror(err), new)
    os.link(old, new, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)  # never replaces
    os.unlink(old, dir_fd=dir_fd)




def _openat2() -> Any:
    """libc's ``syscall`` for ``openat2``, or ``None`` where the kernel has none."""
    global _openat2_fn
    if _openat2_fn is _UNLOADED:
        _openat2_fn = None
        if os.uname().sysname == "Linux":
            import ctypes

            _openat2_fn = libc.function("syscall", [ctypes.c_long, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p,
                                                    ctypes.c_size_t], ctypes.c_long)
    return _openat2_fn


def _open_beneath(root_fd: int, rel: str, flags: int, mode: int) -> int:
    fn = _openat2()
    if fn is not None:
        import ctypes

        key = (flags, mode if flags & os.O_CREAT else 0)
        how = _hows.get(key)
        if how is None:  # ``struct open_how``: flags, mode, resolve; one per kind of open
            how = _hows[key] = (ctypes.c_uint64 * 3)(*key, _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS
                                                      | _RESOLVE_NO_MAGICLINKS)
        fd = fn(_SYS_OPENAT2, root_fd, os.fsencode(rel), how, 24)
        if fd >= 0:
            return int(fd)
        err = ctypes.get_errno()
        if err not in (errno.ENOSYS, errno.EPERM):  # EPERM: a seccomp filter that forbids it
            raise OSError(err, os.strerror(err), rel)
        global _openat2_fn
        _openat2_fn = None
    return _walk(root_fd, rel, flags, mode)


def _walk(root_fd: int, rel: str, flags: int, mode: int) -> int:
    """``openat2``'s rules one component at a time (where there is no ``openat2``)."""
    parts = [part for part in rel.split(os.sep) if part not in ("", ".")]
    if ".." in parts:
        raise OSError(errno.EXDEV, "a path that leaves the storage root", rel)
    fd = root_fd
    try:
        for part in parts[:-1]:
            inner = os.open(part, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC, dir_fd=fd)
            if fd != root_fd:
                os.close(fd)
            fd = inner
        return os.open(parts[-1] if parts else ".", flags, mode, dir_fd=fd)
    finally:
        if fd != root_fd:
            os.close(fd)
