"""What writing a landed file's bytes costs this machine, by where the pages come from.

A landing writes every byte it lands through the page cache, into files never written before,
and a group commit's ``syncfs`` then makes them durable. On this VM a page the guest has not
used lately costs the host a fault on its first touch, so the kernel's copy into the page cache
(``copy_folio_from_iter_atomic`` in ``perf``: a tenth of a large landing's CPU) costs several
times what it costs into a page just freed. The floor writes nothing. This prints, for the same
bytes in 1 MiB files, the writer's CPU and wall time in four ways (benchmarks/README.md, "Writing
around the page cache, ..., round 17"):

1. **buffered**: groups of files made durable by one ``syncfs``, as a landing writes a file
   smaller than 1 MiB;
2. **started early**: the same, each file's writeback started as it is written
   (``sync_file_range(SYNC_FILE_RANGE_WRITE)``), so the disk works while the writer goes on, as a
   landing does for each MiB of a larger file;
3. **recycled**: the same, each group's pages dropped once durable (``POSIX_FADV_DONTNEED``), so
   the next group's writes reuse pages just freed;
4. **direct**: ``O_DIRECT`` from one aligned buffer, no page cache at all (the same ``syncfs``).

Each way writes into a directory of its own that is never deleted while anything is timed (a
deletion makes the next creates slow: ``create_cost.py``); all of them go at the end.

    python benchmarks/page_cost.py [--mb 160] [--group 16] [--rounds 2] [--dir DIR]

Linux only (``syncfs``, ``sync_file_range``, ``O_DIRECT``); elsewhere it says so and exits 0.
"""

from __future__ import annotations

import argparse
import mmap
import os
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from asz_core.root.durable import can_sync_filesystem, start_writeback, sync_filesystem

_MIB = 1 << 20


def write_files(directory: Path, files: int, group: int, way: str) -> None:
    """``files`` files of 1 MiB into ``directory``, a ``syncfs`` every ``group`` files."""
    data = os.urandom(_MIB)
    aligned = mmap.mmap(-1, _MIB)  # page-aligned, as O_DIRECT asks
    aligned.write(data)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | (os.O_DIRECT if way == "direct" else 0)
    root_fd = os.open(directory, os.O_RDONLY)
    pending: list[int] = []
    for n in range(files):
        fd = os.open(directory / f"{n}.tmp", flags, 0o400)
        os.write(fd, aligned if way == "direct" else data)
        if way == "started early":
            start_writeback(fd, 0, _MIB)  # as a landing's sink starts each MiB it writes
        pending.append(fd)
        if len(pending) == group or n == files - 1:
            sync_filesystem(root_fd)
            for done in pending:
                if way == "recycled":
                    os.posix_fadvise(done, 0, 0, os.POSIX_FADV_DONTNEED)
                os.close(done)
            pending.clear()
    os.close(root_fd)
    aligned.close()


def timed(run: Callable[[], None]) -> tuple[float, float, float]:
    """User, system and wall seconds of ``run`` in this process."""
    before, started = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    run()
    after = resource.getrusage(resource.RUSAGE_SELF)
    return after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=160, help="MiB written by each way, in 1 MiB files (default 160)")
    parser.add_argument("--group", type=int, default=16, help="files a syncfs makes durable (default 16)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of the four ways, in turn (default 2)")
    parser.add_argument("--dir", type=Path, help="where to write (default: a new directory under $TMPDIR)")
    args = parser.parse_args(argv)
    if not sys.platform.startswith("linux") or not can_sync_filesystem():
        print("page_cost.py measures Linux's page cache (syncfs, sync_file_range, O_DIRECT): not run here")
        return 0
    work = Path(tempfile.mkdtemp(prefix="asz-page-cost-", dir=args.dir))
    ways = ("buffered", "started early", "recycled", "direct")
    print(f"{args.mb} MiB in 1 MiB files, a syncfs every {args.group}; CPU user / system, wall (s)")
    print("| round | " + " | ".join(ways) + " |")
    print("| --- |" + " --- |" * len(ways))
    try:
        for r in range(args.rounds):
            cells = []
            for way in ways:
                directory = work / f"{r}-{way.replace(' ', '-')}"
                directory.mkdir()
                user, system, wall = timed(partial(write_files, directory, args.mb, args.group, way))
                cells.append(f"{user:.2f} / {system:.2f}, {wall:.2f}")
            print(f"| {r + 1} | " + " | ".join(cells) + " |")
    finally:
        shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
