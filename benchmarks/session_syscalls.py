"""What the kernel alone charges for a new session's files: the floor under ``many-small``.

A new Claude Code session lands as the storage root's layout has it (upstream's): a directory
for the session with ``.lock`` and ``session.state`` in it (no ``index/``: a new session gets
none, its reader begins one when it first needs it), ``streams/main/``, and
the transcript's ``.sd`` file and its cursor there, each written to a temporary name first and
renamed, and a ``syncfs`` for each group of sessions (:data:`~asz_core.root.group.GROUP_SESSIONS`)
before the renames and one after; its source is stat-ed, opened and read whole, and its lock
taken. This script makes exactly those system calls, and nothing else, for ``--sessions``
made-up sessions of ``many-small``'s size (their sources written once, before any round) and
prints the CPU they cost a session, user and system apart, beside tmpfs (``/dev/shm``) where it
exists:

1. each round lands into a new directory under ``--dir`` (default: ``$TMPDIR``, where the
   table lands its roots), never deleted until every round is done, since a deletion makes the
   next creates dearer for a while (``create_cost.py``);
2. the rounds' trees go at the end.

``pass.py --table``'s ``many-small`` row divided by its sessions, set beside this, says how
much of a small session's landing is asz's own work and how much the file system's.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import resource
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from asz_core.root.durable import can_sync_filesystem, sync_filesystem
from asz_core.root.group import GROUP_SESSIONS

#: ``many-small``'s sizes a session: its source (48.1 MB over 2,000), the landed file (44.4 MB over
#: 2,000), the cursor and the state note
SOURCE_BYTES, SD_BYTES, CURSOR_BYTES, STATE_BYTES = 24_050, 22_200, 336, 53
DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def _write_new(name: str, size: int, directory: int, mode: int = 0o600) -> None:
    fd = os.open(name, NEW, mode, dir_fd=directory)
    try:
        os.write(fd, b"x" * size)
    finally:
        os.close(fd)


def _read_source(path: str) -> None:
    """The source as a landing reads it: stat-ed, opened, read whole in one ``pread``, stat-ed
    again (grown meanwhile?) and closed."""
    size = os.lstat(path).st_size
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.fstat(fd)
        os.pread(fd, size + 1, 0)
        os.fstat(fd)
    finally:
        os.close(fd)


def _session(root: int, name: str, source: str) -> tuple[int, int, int]:
    """One session's directories and files, as a new session lands them; its directory's, its
    stream directory's and its lock's descriptors, for the renames after the group's first
    ``syncfs`` (the lock is held until the session is let go)."""
    os.mkdir(name, 0o700, dir_fd=root)
    session = os.open(name, DIRECTORY, dir_fd=root)
    lock = os.open(".lock", os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600, dir_fd=session)
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    _read_source(source)
    os.mkdir("streams", 0o700, dir_fd=session)
    streams = os.open("streams", DIRECTORY, dir_fd=session)
    os.mkdir("main", 0o700, dir_fd=streams)
    main = os.open("main", DIRECTORY, dir_fd=streams)
    os.close(streams)
    _write_new(".tmp-transcript.sd", SD_BYTES, main, 0o400)
    return session, main, lock


def _settle(main: int) -> None:
    """After the group's first ``syncfs``: the landed file renamed into place, its cursor written."""
    os.rename(".tmp-transcript.sd", "transcript.sd", src_dir_fd=main, dst_dir_fd=main)
    _write_new(".tmp-transcript.cursor", CURSOR_BYTES, main)


def _release(session: int, main: int, lock: int) -> None:
    """After the second: the cursor renamed into place, the session's state written, the lock let
    go and every descriptor closed."""
    os.rename(".tmp-transcript.cursor", "transcript.cursor", src_dir_fd=main, dst_dir_fd=main)
    _write_new("session.state", STATE_BYTES, session)
    os.close(main)
    fcntl.flock(lock, fcntl.LOCK_UN)
    os.close(lock)
    os.close(session)


def land(directory: Path, sources: list[str]) -> tuple[float, float]:
    """User and system CPU seconds of this process for a new session of each of ``sources`` in
    ``directory``."""
    root = os.open(directory, DIRECTORY)
    sessions = len(sources)
    before = resource.getrusage(resource.RUSAGE_SELF)
    try:
        for first in range(0, sessions, GROUP_SESSIONS):
            group = [_session(root, f"{n:08x}-0000-4000-8000-000000000000", sources[n])
                     for n in range(first, min(first + GROUP_SESSIONS, sessions))]
            sync_filesystem(root)
            for _, main, _ in group:
                _settle(main)
            sync_filesystem(root)
            for opened in group:
                _release(*opened)
    finally:
        os.close(root)
    after = resource.getrusage(resource.RUSAGE_SELF)
    return after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime


def measure(parent: Path, sessions: int, rounds: int) -> tuple[float, float, float]:
    """Medians over ``rounds``, in ms a session: user CPU, system CPU, wall."""
    scratch = Path(tempfile.mkdtemp(prefix="session-syscalls-", dir=parent))
    users, systems, walls = [], [], []
    try:
        sources = scratch / "sources"
        sources.mkdir()
        line = b"x" * (SOURCE_BYTES - 1) + b"\n"
        for n in range(sessions):
            (sources / f"{n}.jsonl").write_bytes(line)
        listed = [str(sources / f"{n}.jsonl") for n in range(sessions)]
        for r in range(rounds):
            tree = scratch / str(r)
            tree.mkdir()
            started = time.perf_counter()
            user, system = land(tree, listed)
            walls.append((time.perf_counter() - started) / sessions * 1e3)
            users.append(user / sessions * 1e3)
            systems.append(system / sessions * 1e3)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return statistics.median(users), statistics.median(systems), statistics.median(walls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()),
                        help="where the sessions are made (default: $TMPDIR)")
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if not can_sync_filesystem():
        raise SystemExit("syncfs is not available here: asz's group commit is not what it measures")
    places = [args.dir] + ([Path("/dev/shm")] if Path("/dev/shm").is_dir() else [])
    print(f"{args.sessions:,} new sessions' system calls (no asz code), medians of {args.rounds} rounds, "
          "ms a session")
    print(f"{'where':40} {'user':>6} {'system':>7} {'wall':>6}")
    for place in places:
        user, system, wall = measure(place, args.sessions, args.rounds)
        print(f"{place!s:40} {user:6.3f} {system:7.3f} {wall:6.3f}")


if __name__ == "__main__":
    main()
