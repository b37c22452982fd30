"""Sessions that were settled when a pass left them, so a pass can tell from a stat alone that
one has nothing new, without locking it or reading its cursors.

A session is *settled* when every source of it has landed up to its end: each append cursor is
``active`` at the source's size, on the source's inode; each snapshot cursor is ``active`` on
the source's size, mtime and inode; and landing it counted no conflict, pending, unreadable,
waiting, busy or error. The adapter records such a session with the ``lstat`` of every file its
outcome depends on: its sources and every cursor in its ``streams/*`` and ``runs/*`` (those of
places whose sources are gone included), and the counters its landing added (``sources``,
``gone``).

The next pass asks :meth:`SettledSessions.unchanged` with the sources discovery found. When they
are the same list and every recorded file still has the same device, inode, size and mtime,
landing the session would read no cursor differently and no byte of a source: the collectors'
own rules (same size and inode: nothing to read; a snapshot with the same size, mtime and inode:
not read) say so from the same values. The pass then counts what landing it would have counted
and does not open the session. Anything else — a source grown, replaced or touched, a cursor
rewritten (or lost to a power cut, which gives it another inode), a source discovered or gone —
is a miss, and the session is landed as always. (A new place, a stream or run, only ever comes
from a source discovery lists, so the list of sources covers it.)

The table is derived: it lives in ``<root>/.settled-<adapter>.state``, is written without fsync
after each adapter's landing, and a table that is missing, unreadable, of another format or
written by another adapter version is empty.

The file is JSON lines: a first line ``{"format": N, "version": V}``, then objects of session ids,
each to its entry or to ``null`` (no longer settled), read in order, a later line's value
replacing an earlier one's. A save writes the table whole (the first line and one line of every
entry) when there is no file of this format to add to; otherwise it appends one line with what
the pass recorded and forgot (:meth:`SettledSessions.save`). Written whole after every change,
the table cost a pass that found a few sessions changed, of thousands, a rewrite of all of them
(a megabyte at 2,000 sessions). The file is written whole again once it has
:data:`_MOST_LINES` lines or a line to append would be more than half its size, so what lines
replaced keep stays bounded. A line a kill cut short (no newline) is not read, and the next save
writes the table whole.

Each entry is one JSON array (:data:`SettledEntry`): the counters as one text, the number of
sources, the sources, then each file's path and stamp, the stamp being the four numbers of its
``lstat`` (``[dev, ino, size, mtime_ns]``) or ``null`` for a file recorded absent. A pass that
finds nothing new asks the table about every session, so the entry is shaped for the question:
the stamp of a file as it is now is a list of four numbers taken from its ``lstat``, compared
with the loaded one as it is, with no text formatted, split or parsed per session (the
numbers as text cost more to make and compare than these do to load). An entry that is not of
this shape is a miss, like any other.

A cold pass records every session it lands, so what is recorded during a pass is not held in
memory: the entries, as JSON lines, go 64 KiB at a time to an unnamed temporary file in the root
(nothing is left of it after a crash), and :meth:`SettledSessions.save` writes the table from the
entries loaded, that file and the lines not yet in it, a session at a time. The pass holds one
small key per session recorded.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import orjson

from asz_core.root import confined, faults
from asz_core.root.cursors import ACCEPTED, ACTIVE, AppendCursor, SnapshotCursor
from asz_core.root.durable import read_small, write_replace, write_whole
from asz_core.root.layout import CURSOR_SUFFIX, PLACE_GROUPS
from asz_core.root.versions import version_of, version_place

__all__ = ["SETTLED_PREFIX", "SettledEntry", "SettledSessions", "Stamp", "entry_parts", "make_entry", "settled_entry"]

#: the table's name in the root is this, the adapter's name, ``.state``: a dot file, which no
#: reader takes for a session
SETTLED_PREFIX = ".settled-"
_FORMAT = 4
#: a save writes the table whole, not one line more, once its file holds this many lines
_MOST_LINES = 32
#: recorded entries are held up to this many bytes, then written to the pass's temporary file
_SPILL_BYTES = 1 << 16
#: one session's entry: ``[counters, n, source..., (path, stamp)...]`` (:func:`make_entry`)
SettledEntry = list[Any]
#: a file's ``[dev, ino, size, mtime_ns]``; ``None``: the file is absent (and must stay absent)
Stamp = list[int] | None


def make_entry(sources: Sequence[str], files: Iterable[tuple[str, Stamp]],
               counters: Mapping[str, int]) -> SettledEntry | None:
    """The entry of a session recorded with ``sources``, depending on ``files`` (each ``(path,
    stamp)``), whose landing counted ``counters``; ``None`` when a path holds NUL (no file's
    does) or a counter's name is not a word: such a session is simply not recorded, and lands
    again."""
    if not all(map(str.isidentifier, counters)):
        return None
    entry: SettledEntry = [" ".join([f"{name}={int(value)}" for name, value in counters.items()]), len(sources),
                           *sources]
    for path, stamp in files:
        entry.append(path)
        entry.append(stamp)
    if any("\0" in path for path in (*sources, *entry[2 + len(sources)::2])):
        return None
    return entry


def entry_parts(entry: object) -> tuple[list[str], list[tuple[str, Stamp]], dict[str, int]] | None:
    """``entry``'s sources, files with their stamps and counters; ``None`` when it is not one."""
    if not (isinstance(entry, list) and len(entry) >= 2 and isinstance(entry[0], str)
            and type(entry[1]) is int and 0 <= entry[1] <= len(entry) - 2):
        return None
    n = entry[1]
    sources, files = entry[2:2 + n], entry[2 + n:]
    try:
        counters = {name: int(value) for name, _, value in (word.partition("=") for word in entry[0].split())}
    except ValueError:
        return None
    if len(files) % 2 or not all(isinstance(part, str) for part in (*sources, *files[::2])):
        return None
    return sources, list(zip(files[::2], files[1::2], strict=True)), counters


def _names(directory: str) -> list[str]:
    """A directory's names, sorted; none when it cannot be listed (or is a link). A directory
    of a session its writer made and holds is listed from what the writer knows of it
    (:func:`~asz_core.root.confined.known`)."""
    try:
        return sorted(confined.listdir(directory))
    except OSError:
        return []


def _cursor_files(session_dir: Path, written: Sequence[str] | None) -> list[str]:
    """Every cursor of the session: in its places (``streams/*``, ``runs/*``), in the order a
    listing of them gives. ``written``: the state files the session's landing wrote, when they
    are all it holds (a session that landing made): the cursors among them, with no listing."""
    top = os.fspath(session_dir)
    sep = os.sep
    if written is None:
        return [f"{directory}{sep}{name}" for directory in _cursor_dirs(session_dir)
                for name in _names(directory) if name.endswith(CURSOR_SUFFIX)]
    prefix = top + sep
    found: list[tuple[int, str, str, str]] = []  # sorted as the listing is: group, place, name
    for path in written:
        parts = path[len(prefix):].split(sep) if path.startswith(prefix) else []
        if len(parts) == 3 and parts[0] in PLACE_GROUPS and parts[1] and parts[2].endswith(CURSOR_SUFFIX):
            found.append((PLACE_GROUPS.index(parts[0]), parts[1], parts[2], path))
    return [path for *_, path in sorted(found)]


def _cursor_dirs(session_dir: Path) -> list[str]:
    """Each directory in ``streams`` and ``runs``: where a session's cursors live (as strings:
    they are only listed, and the table holds the paths as strings)."""
    top = os.fspath(session_dir)
    sep = os.sep
    return [f"{top}{sep}{group}{sep}{name}" for group in PLACE_GROUPS for name in _names(f"{top}{sep}{group}")]


def _landed_to(cursor_path: Path, st: os.stat_result, append: bool) -> bool:
    """Whether the cursor says everything of the source as ``st`` shows it has landed."""
    if append:
        cursor: AppendCursor | SnapshotCursor | None = _version_cursor(cursor_path)
        return (isinstance(cursor, AppendCursor) and cursor.state == ACTIVE and cursor.offset == st.st_size
                and (cursor.dev, cursor.ino) == (st.st_dev, st.st_ino))
    cursor = SnapshotCursor.load(cursor_path)
    return (cursor is not None and cursor.state == ACTIVE
            and (cursor.size, cursor.mtime, cursor.ino, cursor.dev) == (st.st_size, st.st_mtime_ns, st.st_ino,
                                                                         st.st_dev))


def _version_cursor(cursor_path: Path) -> AppendCursor | None:
    """The append cursor the source lands under now: the one at ``cursor_path``, or, once a
    person accepted a rewrite of it, the accepted version's (:mod:`asz_core.root.versions`)."""
    cursor = AppendCursor.load(cursor_path)
    for _ in range(_MAX_VERSIONS):
        if cursor is None or cursor.state != ACCEPTED:
            return cursor
        place = cursor_path.parent
        if cursor.next_version <= version_of(place.name):
            return None  # names no later version: a conflict, never settled
        cursor_path = place.parent / version_place(place.name, cursor.next_version) / cursor_path.name
        cursor = AppendCursor.load(cursor_path)
    return None


#: the most accepted versions followed (as the collectors do)
_MAX_VERSIONS = 1000


def _stamp_of(st: os.stat_result) -> list[int]:
    """An lstat reduced to what changes when a file is written, replaced or touched."""
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]


def _stamp(path: str) -> Stamp:
    try:
        return _stamp_of(os.lstat(path))
    except (OSError, ValueError):  # ValueError: a NUL in a path from a table not trusted
        return None


def settled_entry(session_dir: Path, sources: Sequence[tuple[str | Path, Path, bool]],
                  counters: Mapping[str, int], written: Sequence[str] | None = None) -> SettledEntry | None:
    """``session_dir``'s entry, if the session is settled: ``sources`` are ``(source, its
    cursor, append?)`` as discovery listed them, ``counters`` what landing it counted. The
    check and the recorded lstat of each source are one and the same ``lstat``, so a source
    that grows meanwhile is never recorded as landed. ``None``: a source is not landed to its
    end. Made under the session's lock, by whichever process landed it. ``written``: the state
    files the landing wrote, given when they are all the session holds (a session the landing
    made, ``SessionHandle.fresh``), so that its places are not listed for its cursors."""
    files: list[tuple[str, Stamp]] = []
    for source, cursor_path, append in sources:
        text = os.fspath(source)
        try:
            st = os.lstat(text)
        except OSError:
            return None
        if not _landed_to(cursor_path, st, append):
            return None
        files.append((text, _stamp_of(st)))
    for cursor in _cursor_files(session_dir, written):
        files.append((cursor, _stamp(cursor)))
    return make_entry([os.fspath(s[0]) for s in sources], files, counters)


class SettledSessions:
    """One adapter's table of settled sessions, loaded once per pass."""

    def __init__(self, path: Path, version: str, entries: dict[str, Any] | None = None) -> None:
        self.path = path
        self.version = version
        #: the entries as the table was loaded, less those recorded or forgotten since (what the
        #: file held: each is checked where it is used)
        self.entries: dict[str, object] = entries or {}
        self.changed = False
        self._read_counters: dict[str, dict[str, int]] = {}
        #: entries recorded this pass: each session's line in ``_spill`` and then ``_pending``
        #: (the last one counts)
        self._recorded: dict[str, int] = {}
        self._spill: IO[bytes] | None = None
        #: the lines recorded since the last write to ``_spill``
        self._pending = bytearray()
        self._lines = 0
        #: sessions recorded or forgotten since the file was read or written: what a line appended holds
        self._since: set[str] = set()
        #: the file as this table last read or wrote it: its lines (0: none to append to) and bytes
        self._file_lines = 0
        self._file_bytes = 0

    @classmethod
    def load(cls, root: Path, adapter: str, version: str) -> SettledSessions:
        path = root / f"{SETTLED_PREFIX}{adapter}.state"
        table = cls(path, version)
        with contextlib.suppress(OSError):
            table._read(read_small(path))
        return table

    def _read(self, raw: bytes | None) -> None:
        """Take the entries the file's bytes ``raw`` hold, when they are of this format and
        version; else the table stays empty, and its next save writes it whole."""
        if not raw:
            return
        # each line found with ``find`` and parsed where it lies: ``split`` of a megabyte's table
        # cost the no-op pass more than writing it whole had
        view = memoryview(raw)
        lines: list[memoryview] = []
        start = 0
        while (end := raw.find(b"\n", start)) >= 0:
            lines.append(view[start:end])
            start = end + 1
        try:
            header = orjson.loads(lines[0]) if lines else None
            if not (isinstance(header, dict) and header.get("format") == _FORMAT
                    and header.get("version") == self.version):
                return
            batches = [orjson.loads(line) for line in lines[1:]]
        except orjson.JSONDecodeError:
            return
        if not all(isinstance(batch, dict) for batch in batches):
            return
        entries: dict[str, object] = batches[0] if batches else {}
        for batch in batches[1:]:  # lines appended since: small, each applied in order
            for session, entry in batch.items():
                if entry is None:
                    entries.pop(session, None)
                else:
                    entries[session] = entry
        self.entries = entries
        if start == len(raw):  # no line a kill cut short after the last newline: one to append to
            self._file_lines, self._file_bytes = len(lines), len(raw)

    def unchanged(self, session: str, sources: Sequence[str]) -> dict[str, int] | None:
        """The counters landing ``session`` would add, when it is settled and nothing it depends
        on changed since; else ``None`` (land it)."""
        entry = self.entries.get(session)
        if type(entry) is not list:
            return None
        n = len(sources)
        end = len(entry)
        if (end - n) % 2 or entry[1:2 + n] != [n, *sources]:
            return None
        lstat = os.lstat
        for i in range(2 + n, end, 2):
            path = entry[i]
            if type(path) is not str:  # an int would be taken for a descriptor
                return None
            try:
                st = lstat(path)
            except (OSError, ValueError):
                if entry[i + 1] is not None:
                    return None
                continue
            if [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns] != entry[i + 1]:  # _stamp_of, inlined
                return None
        return self._counters(entry[0])

    def _counters(self, text: object) -> dict[str, int] | None:
        """An entry's counters; read once per text, as most sessions count the same."""
        if type(text) is not str:
            return None
        counters = self._read_counters.get(text)
        if counters is None:
            try:
                counters = {name: int(value) for name, _, value in (word.partition("=") for word in text.split())}
            except ValueError:
                return None
            self._read_counters[text] = counters
        return counters

    def key(self, session: str) -> list[str] | None:
        """The ``sources`` ``session``'s entry was recorded or noted with, if it has one."""
        parts = entry_parts(self.entries.get(session))
        return None if parts is None else parts[0]

    def note(self, session: str, key: Sequence[str], files: Iterable[str | Path],
             counters: Mapping[str, int]) -> None:
        """Note ``session``'s outcome as depending on ``files`` as they are now (a file absent
        now must stay absent): :meth:`unchanged` with the same ``key`` gives ``counters`` back
        while each stats the same. For an outcome :meth:`record` does not describe, such as a
        session whose sources are all gone."""
        entry = make_entry(list(key), [(str(f), _stamp(str(f))) for f in files], counters)
        if entry is None:
            self.forget(session)
        else:
            self.put(session, entry)

    def record(self, session: str, session_dir: Path, sources: Sequence[tuple[str | Path, Path, bool]],
               counters: Mapping[str, int]) -> bool:
        """Note ``session`` settled if it is (:func:`settled_entry`), else forget it."""
        entry = settled_entry(session_dir, sources, counters)
        if entry is None:
            self.forget(session)
            return False
        self.put(session, entry)
        return True

    def put(self, session: str, entry: SettledEntry) -> None:
        """Note ``entry`` as ``session``'s (made by :func:`settled_entry` where it landed)."""
        self.changed = True
        self.entries.pop(session, None)
        self._since.add(session)
        self._pending += orjson.dumps(session) + b":" + orjson.dumps(entry) + b"\n"
        self._recorded[session] = self._lines
        self._lines += 1
        if len(self._pending) >= _SPILL_BYTES:
            self._spill_pending()

    def _spill_pending(self) -> None:
        """Move the pending lines to ``_spill``: a write every :data:`_SPILL_BYTES`, not one (and a
        seek) per session, which a cold pass would pay in the pass's process for every session."""
        if self._spill is None:
            import tempfile  # only a pass that records many: a no-op pass does not load it

            self._spill = tempfile.TemporaryFile(dir=self.path.parent)  # noqa: SIM115 - open for the pass
        self._spill.seek(0, os.SEEK_END)  # a save may have read it part way
        self._spill.write(self._pending)
        self._spill.flush()  # nothing buffered that a forked worker could write out again
        self._pending.clear()

    def forget(self, session: str) -> None:
        if self.entries.pop(session, None) is not None or self._recorded.pop(session, None) is not None:
            self.changed = True
            self._since.add(session)

    def save(self) -> None:
        """Write what changed since the file was read or written, if anything did: one line
        appended (:meth:`_append`), else the table whole. A table that cannot be written is
        simply not kept."""
        if not self.changed:
            return
        self._remove_leftovers()
        try:
            appended = self._append()
        except OSError:
            appended = False  # a line cut short, if any, makes the next save write the table whole
        if not appended:
            with contextlib.suppress(OSError):
                self._file_bytes = write_replace(self.path, self._table(), derived=True)
                self._file_lines = 2
                self._since.clear()
        self.changed = False

    def _append(self) -> bool:
        """Append to the file one line of what was recorded and forgotten since it was read or
        written, when it is a file of this table's to add to and has room for the line (see the
        module's docstring); whether it did."""
        if not 0 < self._file_lines < _MOST_LINES:
            return False
        line = self._line_since()
        if len(line) > self._file_bytes // 2:
            return False
        fd = confined.open_path(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            st = os.fstat(fd)
            if not (stat.S_ISREG(st.st_mode) and st.st_nlink == 1 and st.st_size == self._file_bytes):
                return False  # not the file it read, or not a file of its own: written whole instead
            faults.checkpoint("state-write")
            write_whole(fd, line)
        finally:
            os.close(fd)
        self._file_lines += 1
        self._file_bytes += len(line)
        self._since.clear()
        return True

    def _line_since(self) -> bytes:
        """The line :meth:`_append` writes: each session recorded since, as last recorded, and each
        forgotten since, as ``null``."""
        recorded = self._recorded
        members = [orjson.dumps(session) + b":null" for session in sorted(self._since) if session not in recorded]
        members.extend(self._recorded_lines({recorded[session] for session in self._since if session in recorded}))
        return b"{" + b",".join(members) + b"}\n"

    def _remove_leftovers(self) -> None:
        """Remove the temporary files of this table that a pass killed while saving it left
        (``temp_name``'s): the pass saving it holds the root's lock, so no writer of them lives."""
        ending = "-" + self.path.name
        for name in _names(str(self.path.parent)):
            if name.startswith(".tmp-") and name.endswith(ending):
                with contextlib.suppress(OSError):
                    os.unlink(self.path.parent / name)

    def _table(self) -> Iterator[bytes]:
        """The table's file whole, a session at a time: its first line, then one line of those
        loaded and those recorded."""
        yield b'{"format":' + orjson.dumps(_FORMAT) + b',"version":' + orjson.dumps(self.version) + b"}\n{"
        comma = b""
        if self.entries:  # those loaded and kept, in one call: the object's members, less its braces
            yield orjson.dumps(self.entries)[1:-1]
            comma = b","
        for line in self._recorded_lines(set(self._recorded.values())):
            yield comma + line
            comma = b","
        yield b"}\n"

    def _recorded_lines(self, wanted: set[int]) -> Iterator[bytes]:
        """The recorded lines numbered in ``wanted`` (``"session":entry``, no newline), in the order
        they were recorded: from ``_spill``, then ``_pending``."""
        index = 0
        if self._spill is not None:
            self._spill.flush()
            self._spill.seek(0)
            for line in self._spill:
                if index in wanted:
                    yield line[:-1]
                index += 1
        for line in bytes(self._pending).split(b"\n")[:-1]:
            if index in wanted:
                yield line
            index += 1
