"""What a new session costs at least: its landing composed in one place, with asz's own line code.

``many-small`` (2,000 new sessions of one transcript each) is the one row of ``pass.py --table``
where a session's fixed cost, not its lines, is most of the time. ``session_phases.py`` says how
asz's pass spends it seam by seam; this script lands the same sessions the shortest way there is
to the same bytes, so each seam's cost can be set beside what the same step costs with nothing
around it:

1. the sessions are ``corpus.py``'s ``many-small`` (the table's own ``table_corpus``), each
   transcript cut to its first ``--lines`` lines (0: whole; ``session_phases.cut_corpus``), each a
   main transcript and nothing else (a subagent or sidecar is refused: this landing knows none);
2. each round, asz's pass lands them in this process (``collector.workers: 1``) and the
   composed landing into a root of its own, the two taking turns at going first and given the
   same stamp: per session its
   directory and lock, the source read whole, its lines converted and written by asz's per-line
   code (``LineReader``, ``converted_lines``, ``SessionDataWriter``), ``streams/main/`` and the
   temporary file, the cursor (``AppendCursor``); per group of
   :data:`~asz_core.root.group.GROUP_SESSIONS`, a ``syncfs``, the renames and the cursors'
   temporary copies, a ``syncfs``, the cursors renamed, each session's settled entry made from
   its stats and its state note; the settled table at the end. The system calls are the pass's,
   the bytes too, and none of the host, hooks, collectors, confinement or paths around them;
3. every ``.sd`` file of the composed root is compared with the pass's, byte for byte (a cursor,
   but for its ``updated_at``): a difference ends the script, since the two would not be doing the
   same work;
4. printed, in µs of thread CPU a session (medians of ``--rounds``): each row of :data:`ROWS`,
   the pass's seams (``session_phases.SEAMS``, timed in the same rounds) that do what its
   composed steps do beside those steps, and both landings in all.

``python benchmarks/composed_landing.py land ROOT PROJECTS [--workers N]`` lands ``PROJECTS``
into the new ``ROOT`` and nothing more (``--workers``: that many forked processes, the sessions
dealt out in turn), so that it can be timed as a whole process beside
``children.py land CONFIG`` (``/usr/bin/time``, or a harness that alternates the two). It is a
measuring device, not a landing: it has no crash recovery, no conflict, no existing session.
"""

from __future__ import annotations

import argparse
import collections
import fcntl
import os
import shutil
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
import session_phases  # found on the path just given: the sessions, asz's pass and its seams

from asz_adapters.claude_code_local.adapter import VERSION
from asz_adapters.claude_code_local.dialect import ClaudeCodeDialect
from asz_adapters.claude_code_local.source_facts import SourceFacts
from asz_core.collect.lines import READ_LIMIT, LineReader
from asz_core.collect.source import converted_lines
from asz_core.root.cursors import AppendCursor
from asz_core.root.durable import sync_filesystem
from asz_core.root.group import GROUP_SESSIONS
from asz_core.root.layout import file_name
from asz_core.root.settled import SETTLED_PREFIX, make_entry
from asz_core.sessiondata.model import Header
from asz_core.sessiondata.times import format_instant, stamp
from asz_core.sessiondata.writer import SessionDataWriter

DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
#: the pass's ``collector.max_delta_bytes`` by default; every ``many-small`` session fits one file
LIMIT = 2 * 1024 * 1024
ADAPTER = f"claude-code-local/{VERSION}"
#: the steps timed, in the order a session meets them
STEPS = ("the directory and lock", "the source read, its lines converted", "streams/main/ and the file written",
         "the cursor made", "the group's first syncfs", "the renames, the cursors' copies", "the group's second syncfs",
         "the cursors renamed, the settled entries", "the state notes, the sessions let go")
#: each row printed: the composed steps it sums, and the seams of asz's pass (``session_phases.SEAMS``'
#: labels) that do the same, with a sign (a seam nested in another is taken out of it); ``None``:
#: what the pass spends outside every seam. The ``syncfs`` run in a thread of their own in the
#: pass, whose CPU the pass's thread does not count
ROWS: tuple[tuple[str, tuple[str, ...], tuple[tuple[int, str | None], ...]], ...] = (
    ("the source read, its lines converted", ("the source read, its lines converted",),
     ((1, "the source read, its lines converted"),)),
    ("the directories and lock, the file written, the cursor made",
     ("the directory and lock", "streams/main/ and the file written", "the cursor made"),
     ((1, "the session's directory, lock and place"), (1, "the file written, the cursor made"))),
    ("the group's two syncfs", ("the group's first syncfs", "the group's second syncfs"), ()),
    ("the renames, the cursors' copies", ("the renames, the cursors' copies",),
     ((1, "group: files renamed"), (1, "group: cursors' copies written"))),
    ("the cursors renamed, the settled entries, the sessions let go",
     ("the cursors renamed, the settled entries", "the state notes, the sessions let go"),
     ((1, "group: cursors renamed"), (1, "the settled entry, the session let go"))),
    ("the adapter's own (its source named, its dialect)", (),
     ((1, "the adapter names its source (asz_new_session)"),)),
    ("land_claim's own (the root looked at, the outcome)", (),
     ((1, "land_claim: one session, start to group"), (-1, "the adapter names its source (asz_new_session)"),
      (-1, "the source read, its lines converted"), (-1, "the session's directory, lock and place"),
      (-1, "the file written, the cursor made"))),
    ("the merge, and the pass outside every seam (discovery, claims, groups)", (),
     ((1, "the pass merges the outcome"), (1, None))),
)


#: µs a session by seam or step label; ``None``: the whole pass, or the whole composed landing
Figures = dict[str | None, float]


class Source(NamedTuple):
    """A session's one transcript: its id, its path relative to the projects, and its path."""

    session: str
    src: str
    path: str


class Held(NamedTuple):
    """A session landed and waiting for its group: its directory's, ``main/``'s and lock's
    descriptors, and its cursor."""

    source: Source
    directory: int
    main: int
    lock: int
    cursor: AppendCursor


class _Sink:
    """Where the writer puts a file's bytes: gathered, written in one call."""

    __slots__ = ("chunks",)

    def __init__(self) -> None:
        self.chunks: list[bytes] = []

    def write(self, chunk: bytes) -> int:
        self.chunks.append(chunk)
        return len(chunk)


class _Clock:
    """Each step's thread CPU, summed by label."""

    def __init__(self) -> None:
        self.spent: collections.Counter[str] = collections.Counter()
        self._last = time.thread_time_ns()

    def mark(self, label: str) -> None:
        now = time.thread_time_ns()
        self.spent[label] += now - self._last
        self._last = now


def sources(projects: Path) -> list[Source]:
    """Every main transcript under ``projects`` (``<project>/<session>.jsonl``), in name order."""
    found: list[Source] = []
    for project in sorted(p for p in projects.iterdir() if p.is_dir()):
        for entry in sorted(project.iterdir()):
            if entry.is_dir() or entry.suffix != ".jsonl":
                raise SystemExit(f"{entry}: only main transcripts are landed here, and this is not one")
            found.append(Source(entry.stem, f"{project.name}/{entry.name}", str(entry)))
    return found


def land(root: Path, todo: list[Source], pass_ns: int, clock: _Clock) -> list[bytes]:
    """Land ``todo`` into ``root`` (step 2 of the module's), the pass started at ``pass_ns``;
    each session's settled entry, as a line of the settled table."""
    root_fd = os.open(root, DIRECTORY)
    at = format_instant(pass_ns)
    name = file_name("transcript", stamp(pass_ns), 1)
    temp = f".tmp-{os.getpid():x}-{name}"
    entries: list[bytes] = []
    try:
        for first in range(0, len(todo), GROUP_SESSIONS):
            group = [_session(root_fd, source, at, temp, clock) for source in todo[first:first + GROUP_SESSIONS]]
            sync_filesystem(root_fd)
            clock.mark("the group's first syncfs")
            for held in group:
                os.rename(temp, name, src_dir_fd=held.main, dst_dir_fd=held.main)
                _write_new(".tmp-transcript.cursor", held.cursor.encode(), held.main, 0o600)
            clock.mark("the renames, the cursors' copies")
            sync_filesystem(root_fd)
            clock.mark("the group's second syncfs")
            for held in group:
                os.replace(".tmp-transcript.cursor", "transcript.cursor", src_dir_fd=held.main, dst_dir_fd=held.main)
                entries.append(_settled_entry(root, held))
            clock.mark("the cursors renamed, the settled entries")
            for held in group:
                _write_new("session.state", f"next_seq 2\nupdated_at {at}\n".encode(), held.directory, 0o600)
                os.close(held.main)
                os.close(held.directory)
                fcntl.flock(held.lock, fcntl.LOCK_UN)
                os.close(held.lock)
            clock.mark("the state notes, the sessions let go")
    finally:
        os.close(root_fd)
    return entries


def _session(root_fd: int, source: Source, at: str, temp: str, clock: _Clock) -> Held:
    os.mkdir(source.session, 0o700, dir_fd=root_fd)
    directory = os.open(source.session, DIRECTORY, dir_fd=root_fd)
    lock = os.open(".lock", os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                   dir_fd=directory)
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    clock.mark("the directory and lock")
    os.lstat(source.path)
    fd = os.open(source.path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        reader = LineReader(fd, 0, b"", read_limit=READ_LIMIT, size=st.st_size)
        dialect = ClaudeCodeDialect(SourceFacts(kind="transcript", session=source.session, stream="main", run=""))
        header = Header(kind="transcript", session=source.session, src=source.src, dialect=dialect.name,
                        adapter=ADAPTER, stream="main", batch=None)
        header.seq, header.at = 1, at
        sink = _Sink()
        writer = SessionDataWriter(sink, header)
        last_id = ""
        for line, ord_, off, size, when, record_id, _ in converted_lines(
                reader.lines(), 1, dialect, Path(source.path), LIMIT, READ_LIMIT, _unexpected):
            writer.write(line, ord_, off, size, when)
            last_id = record_id or ""  # the last record's, none when it has none (as the collector)
        summary = writer.close()
        clock.mark("the source read, its lines converted")
        os.mkdir("streams", 0o700, dir_fd=directory)
        streams = os.open("streams", DIRECTORY, dir_fd=directory)
        os.mkdir("main", 0o700, dir_fd=streams)
        main = os.open("main", DIRECTORY, dir_fd=streams)
        os.close(streams)
        _write_new(temp, b"".join(sink.chunks), main, 0o400)
        clock.mark("streams/main/ and the file written")
        offset = summary.last_off + summary.last_bytes + 1
        cursor = AppendCursor(source=source.src, dev=st.st_dev, ino=st.st_ino, size=offset,
                              mtime=os.fstat(fd).st_mtime_ns, last_seq=1, offset=offset, ord=summary.last_ord,
                              last_uuid=last_id, tail_sha256=reader.tail_digest(offset),
                              updated_at=format_instant(time.time_ns()))
    finally:
        os.close(fd)
    clock.mark("the cursor made")
    return Held(source, directory, main, lock, cursor)


def _unexpected(warning: str) -> None:
    raise SystemExit(f"a line the composed landing does not expect: {warning}")


def _write_new(name: str, data: bytes, directory: int, mode: int) -> None:
    fd = os.open(name, NEW, mode, dir_fd=directory)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def _settled_entry(root: Path, held: Held) -> bytes:
    """The session's line in the settled table, from its source's stat now (landed to its end:
    one that grew meanwhile is not settled) and its cursor's."""
    path = held.source.path
    st = os.lstat(path)
    if st.st_size != held.cursor.offset:
        raise SystemExit(f"{path} grew while it landed: the composed landing measures a quiet corpus")
    cursor = os.stat("transcript.cursor", dir_fd=held.main, follow_symlinks=False)
    entry = make_entry([path], [(path, [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]),
                                (f"{root}/{held.source.session}/streams/main/transcript.cursor",
                                 [cursor.st_dev, cursor.st_ino, cursor.st_size, cursor.st_mtime_ns])],
                       {"sources": 1, "gone": 0})
    return orjson.dumps({held.source.session: entry})


def write_table(root: Path, entries: list[bytes]) -> None:
    """The settled table, written once, fsynced."""
    fd = os.open(root / f"{SETTLED_PREFIX}claude-code-local.state", NEW, 0o600)
    try:
        os.write(fd, b"".join(line + b"\n" for line in [orjson.dumps({"format": 4, "version": VERSION}), *entries]))
        os.fsync(fd)
    finally:
        os.close(fd)


def land_root(root: Path, todo: list[Source], workers: int, pass_ns: int) -> collections.Counter[str]:
    """The whole composed landing of ``todo`` into the new ``root``, in ``workers`` processes:
    each step's thread CPU (this process's alone)."""
    root.mkdir(mode=0o700)
    clock = _Clock()
    if workers <= 1:
        write_table(root, land(root, todo, pass_ns, clock))
        return clock.spent
    pipes = []
    for n in range(workers):
        read, write = os.pipe()
        if os.fork() == 0:
            os.close(read)
            with os.fdopen(write, "wb") as out:
                out.write(b"\n".join(land(root, todo[n::workers], pass_ns, _Clock())))
            os._exit(0)
        os.close(write)
        pipes.append(read)
    entries: list[bytes] = []
    for read in pipes:
        with os.fdopen(read, "rb") as got:
            entries += got.read().split(b"\n")
    for _ in pipes:
        os.wait()
    write_table(root, [entry for entry in entries if entry])
    return clock.spent


def differences(ours: Path, theirs: Path) -> Iterator[str]:
    """Every landed file of ``theirs`` (asz's pass) that ``ours`` does not hold alike."""
    for path in sorted(theirs.glob("*/streams/main/*")):
        mine = ours / path.relative_to(theirs)
        if not mine.is_file():
            yield f"{mine} is missing"
        elif not _alike(mine, path):
            yield f"{mine} differs"


def _alike(mine: Path, theirs: Path) -> bool:
    """Whether two landed files hold the same: a ``.sd`` byte for byte, a cursor but for the time
    it was written."""
    if mine.suffix == ".cursor":
        return _but_updated(mine) == _but_updated(theirs)
    return mine.read_bytes() == theirs.read_bytes()


def _but_updated(cursor: Path) -> list[bytes]:
    return [line for line in cursor.read_bytes().splitlines() if not line.startswith(b"updated_at ")]


def measure(projects: Path, roots: Path, rounds: int) -> tuple[int, list[Figures], list[Figures]]:
    """Rounds of asz's pass and the composed landing over ``projects``, in this process, both
    stamped alike: the sessions, and for each round, in µs of thread CPU a session, the pass's
    seams (``None``: the whole pass) and the composed landing's steps (``None``: all of it).

    Which of the two lands first changes from round to round, so that whatever one leaves the
    next (memory let go, pages to write back, the file system's state) weighs on both sides
    alike, not always on the same one."""
    todo = sources(projects)
    passes: list[Figures] = []
    composed: list[Figures] = []
    with session_phases.timed_seams() as (spent, _):
        for n in range(rounds + 1):  # the first warms the caches and is not counted
            started_ns = time.time_ns()
            for asz_turn in ((True, False) if n % 2 else (False, True)):
                if asz_turn:
                    config = session_phases.write_config(roots / f"asz-{n}.yaml", roots / f"asz-{n}", projects)
                    cpu, landed, seams = session_phases.land_once(config, spent, started_ns)
                    if landed != len(todo):
                        raise SystemExit(f"asz's pass landed {landed} sessions of {len(todo)}")
                else:
                    started = time.thread_time()
                    steps = land_root(roots / f"composed-{n}", todo, 1, started_ns)
                    whole = time.thread_time() - started
            wrong = list(differences(roots / f"composed-{n}", roots / f"asz-{n}"))
            if wrong:
                raise SystemExit("the composed landing does not land asz's bytes: " + "; ".join(wrong[:5]))
            if n:
                passes.append({**{k: v * 1e6 / len(todo) for k, v in seams.items()}, None: cpu * 1e6 / len(todo)})
                composed.append({**{k: steps[k] / 1e3 / len(todo) for k in STEPS}, None: whole * 1e6 / len(todo)})
    return len(todo), passes, composed


def rows(passes: list[Figures], composed: list[Figures]) -> list[tuple[str, float, float]]:
    """:data:`ROWS` as printed: each label with the medians of the pass's seams and of the
    composed steps it sums, µs a session."""
    def seam_sum(seams: Figures, terms: tuple[tuple[int, str | None], ...]) -> float:
        outside = seams[None] - sum(seams[label] for depth, _, _, label in session_phases.SEAMS if depth == 0)
        return sum(sign * (outside if label is None else seams.get(label, 0.0)) for sign, label in terms)

    return [(label, statistics.median(seam_sum(seams, terms) for seams in passes),
             statistics.median(sum(steps[step] for step in ours) for steps in composed))
            for label, ours, terms in ROWS]


def main() -> None:
    if sys.argv[1:2] == ["land"]:
        parser = argparse.ArgumentParser(prog="composed_landing.py land")
        parser.add_argument("root", type=Path)
        parser.add_argument("projects", type=Path)
        parser.add_argument("--workers", type=int, default=1)
        args = parser.parse_args(sys.argv[2:])
        land_root(args.root, sources(args.projects), args.workers, time.time_ns())
        return
    args = session_phases.options(__doc__.splitlines()[0])
    projects, roots = session_phases.sessions_and_roots(args)
    try:
        sessions, passes, composed = measure(projects, roots, args.rounds)
    finally:
        shutil.rmtree(roots, ignore_errors=True)
    kept = f"the first {args.lines} lines of each transcript" if args.lines else "whole transcripts"
    print(f"{sessions:,} new sessions ({kept}), one process, medians of {args.rounds} rounds, µs of thread CPU "
          "a session; the same bytes landed both ways")
    print(f"{'':72} {'asz':>7} {'composed':>9}")
    for label, theirs, ours in rows(passes, composed):
        print(f"{label:72} {theirs:7.1f} {ours:9.1f}")
    whole = statistics.median(seams[None] for seams in passes)
    least = statistics.median(steps[None] for steps in composed)
    total = "in all (the pass's syncfs run in threads its own does not count)"
    print(f"{total:72} {whole:7.1f} {least:9.1f}")

if __name__ == "__main__":
    main()
