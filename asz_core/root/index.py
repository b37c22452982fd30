"""A session's derived index: the ids its landed transcripts hold, for other adapters to look up.

``<session>/index/ids`` holds ``key value`` lines: ``call`` (a provider call id a record holds,
such as Claude Code's message id), ``directory`` (the top directory of a landed transcript's
``src``: for Claude Code, the project directory the file was found under) and ``seq`` (the
highest landed file it covers). It is derived and disposable: ids only, never text.

1. Its reader begins it, from the landed files, the first time it needs it: a session without
   one costs its landing nothing, and most roots have no reader of it (the provider adapter
   reads it, for the sessions whose bodies it places).
2. A landing of transcripts appends to one that exists what it lands, its ``seq`` last, before
   its files are committed (:func:`add_landed`): an index never lacks an id this project has
   landed, whatever a crash leaves of the rest. A landing of files that hold no id (the provider
   adapter's bodies) appends their ``seq`` alone, once their names are durable, so that the
   next reader does not list the session and read its files for nothing.
3. The reader brings it up to date before it reads it (:func:`session_ids`), unless
   ``session.state`` notes its ``seq`` as the session's highest: the transcripts numbered above
   its ``seq`` are read and their new ids appended, the new ``seq`` last. A session numbers each
   file one above the highest it holds, so what lies above ``seq`` is exactly what landed since.
   A writer that does not know the index (upstream's ``asz``, a third-party program, an older
   version) notes a higher ``seq``; a note a crash left behind ours reads lower, and the files
   are listed until the next landing notes it again.
4. A line counts once whole (its newline written): an append cut short leaves ids without the
   ``seq`` that covers them, so the next reader reads those files again, and repeats no id.
5. An index that is not a regular file of its own (a link, a fifo, a hard link to another file)
   is read as none, and a new one replaces it; nothing is written through it. Where none can be
   written (a link above it, a directory in its place, a full disk) the ids are read from the
   files each time (``verify`` names a link in the root).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

from asz_core.root import confined
from asz_core.root.durable import make_dirs_text, open_landed, write_replace, write_whole
from asz_core.root.layout import parse_file_name
from asz_core.root.storage import landed_files, noted_next_seq

__all__ = ["CALL", "DIRECTORY", "SessionIndex", "add_landed", "session_ids"]

CALL = "call"
DIRECTORY = "directory"
_SEQ = "seq"
_TRANSCRIPT = "transcript"


class SessionIndex:
    """The ids index file of one session directory."""

    __slots__ = ("path",)

    def __init__(self, session_dir: Path | str) -> None:
        #: a string: it is only ever opened
        self.path = os.path.join(session_dir, "index", "ids")

    def load(self) -> tuple[dict[str, set[str]], int] | None:
        """Every key's values and the ``seq`` they cover; ``None`` when the session has no index
        of its own (rule 5)."""
        try:
            fd = confined.open_path(self.path, os.O_RDONLY)  # a fifo reads empty (confined, rule 6)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
                return None
            data = os.read(fd, st.st_size)  # its own, under the root's lock: as long as it says
        except OSError:
            return None
        finally:
            os.close(fd)
        ids: dict[str, set[str]] = {CALL: set(), DIRECTORY: set()}
        seq = 0
        whole, _, _ = data.rpartition(b"\n")  # rule 4: a last line with no newline is none
        for line in whole.decode("utf-8", errors="replace").split("\n"):
            key, _, value = line.partition(" ")
            if key == _SEQ:
                seq = max(seq, int(value)) if value.isdigit() else seq
            elif key and value:
                ids.setdefault(key, set()).add(value)
        return ids, seq

    def extend(self, pairs: Iterable[tuple[str, str]], seq: int, *, begun: bool) -> None:
        """Write ``pairs`` and then ``seq`` after what the index holds (``begun``: :meth:`load`
        found it its own), else as a new index that replaces whatever has its name (rule 3)."""
        data = "".join(f"{key} {value}\n" for key, value in pairs if _an_id(key) and _an_id(value))
        data += f"{_SEQ} {seq}\n"
        if not begun:
            make_dirs_text(confined.split(self.path)[0])
            write_replace(Path(self.path), data.encode("utf-8"), derived=True)  # never seen half-made
            return
        fd = confined.open_path(self.path, os.O_RDWR | os.O_APPEND)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                data = "\n" + data  # rule 4: a line cut short stays a line of its own, never joins ours
            write_whole(fd, data.encode("utf-8"))
        finally:
            os.close(fd)


def _an_id(text: str) -> bool:
    return bool(text) and not any(c.isspace() for c in text)


def add_landed(session_dir: Path | str, landed: Callable[[], Iterable[tuple[str, str]]], first: int,
               last: int) -> None:
    """A landing's ids (rule 2), of its files ``first`` to ``last``, for a session that has an
    index; one without gets none, and ``landed`` (what the landing landed) is not asked for.
    The index's ``seq`` moves to ``last`` only from ``first - 1``: files below ``first`` that it
    does not cover (another writer's) are still its reader's to read."""
    index = SessionIndex(session_dir)
    loaded = index.load()
    if loaded is None:
        return
    ids, covered = loaded
    added: list[tuple[str, str]] = []
    for key, value in landed():
        known = ids.setdefault(key, set())
        if value not in known:
            known.add(value)
            added.append((key, value))
    with contextlib.suppress(OSError):  # derived: its reader brings it up to date (rule 3)
        index.extend(added, last if covered == first - 1 else covered, begun=True)


def session_ids(session_dir: Path, *, keep: bool = True) -> dict[str, set[str]]:
    """The ``call`` and ``directory`` ids of every landed transcript of the session, from its
    index brought up to date (rules 1 and 3); ``keep=False`` (a dry run) writes nothing."""
    index = SessionIndex(session_dir)
    loaded = index.load()
    if loaded is not None:
        noted = noted_next_seq(session_dir)
        if noted is not None and noted - 1 == loaded[1]:
            return loaded[0]  # the session notes no file above it
    landed = sorted(landed_files(session_dir))
    if loaded is not None and loaded[1] > (landed[-1][0] if landed else 0):
        loaded = None  # it covers files the session no longer numbers so: begun anew
    ids, covered = loaded if loaded is not None else ({CALL: set(), DIRECTORY: set()}, 0)
    newer = [(seq, path) for seq, path in landed if seq > covered]
    if not newer:
        return ids
    added: list[tuple[str, str]] = []
    for _, path in newer:
        name = parse_file_name(path.name)
        if name is not None and name.kind == _TRANSCRIPT:
            _read_transcript(path, ids, added)
    if keep:
        # derived: an index that cannot be written (rule 5, a full disk) is read from the
        # files again next time
        with contextlib.suppress(OSError):
            index.extend(added, newer[-1][0], begun=loaded is not None)
    return ids


def _read_transcript(path: Path, ids: dict[str, set[str]], added: list[tuple[str, str]]) -> None:
    """Add to ``ids`` (and to ``added``, the new ones) the top directory of the file's ``src``
    and the ``call`` of each of its records; a file that cannot be read adds what it gave."""
    from asz_core.sessiondata.errors import SessionDataError  # the reader: only when indexing

    def add(key: str, value: str) -> None:
        if value not in ids[key]:
            ids[key].add(value)
            added.append((key, value))

    with contextlib.suppress(SessionDataError, confined.LinkRefused), open_landed(path) as landed:
        src = landed.header.get("src")
        if isinstance(src, str) and "/" in src:
            add(DIRECTORY, src.split("/", 1)[0])
        for record in landed:
            if record.call:
                add(CALL, record.call)
