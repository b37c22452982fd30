"""What creating a file or a directory costs this filesystem now, and waiting until that is quiet.

On ext4 without a journal (this VM's disk), the inode allocator skips every free inode of a group
that was freed recently (``recently_deleted``: seconds once the inode table is written back,
minutes while it is dirty) and charges the search to the process that creates. For tens of
seconds after anything deletes many files, every directory and file a landing creates costs
several times its quiet CPU, mostly system time, while the floor it is set beside creates nothing.
So before each timed round the table's harness:

1. creates a small tree where it lands its roots, the shape of a few sessions (a directory and
   four files each), and times it in CPU per create (the thread's own CPU, so the machine's
   other work does not count);
2. if that is above the quiet level, waits and probes again, for a bounded time, and says so
   when the bound passes first;
3. never deletes a probe's tree (a deletion is what it guards against): each is left beside the
   roots and goes with the harness's scratch directory, after all timing.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

#: a probe's tree: this many directories, each with FILES_EACH files in it
DIRECTORIES = 60
FILES_EACH = 4


def probe(parent: Path) -> float:
    """Microseconds of this thread's CPU per directory or file created, for a new tree made in
    ``parent`` (where the landings' roots are made, so the allocator searches the same groups)."""
    tree = tempfile.mkdtemp(prefix="create-probe-", dir=parent)
    started = time.thread_time()
    for d in range(DIRECTORIES):
        directory = os.path.join(tree, str(d))
        os.mkdir(directory, 0o700)
        for f in range(FILES_EACH):
            os.close(os.open(os.path.join(directory, str(f)), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    return (time.thread_time() - started) / (DIRECTORIES * (1 + FILES_EACH)) * 1e6


@dataclass(frozen=True)
class Settling:
    """What waiting for a quiet filesystem found before one round."""

    probes: tuple[float, ...]  #: µs of CPU per create, each probe in the order taken
    waited: float              #: seconds slept between them
    quiet: bool                #: the last probe was at or under the quiet level

    @property
    def cost(self) -> float:
        """The create cost the round was measured at: the last probe's."""
        return self.probes[-1]


def settle(probe_once: Callable[[], float], quiet_us: float, most_wait: float, interval: float,
           sleep: Callable[[float], None] = time.sleep) -> Settling:
    """Probe until a create costs at most ``quiet_us`` µs, sleeping ``interval`` seconds between
    probes and ``most_wait`` seconds in all at most; the round then runs either way, and the
    result says whether it starts quiet."""
    probes = [probe_once()]
    waited = 0.0
    while probes[-1] > quiet_us and waited + interval <= most_wait:
        sleep(interval)
        waited += interval
        probes.append(probe_once())
    return Settling(tuple(probes), waited, probes[-1] <= quiet_us)


def describe(settlings: list[Settling], quiet_us: float) -> str:
    """One line for the table's notes: the create cost each round started at, and any wait
    (the first probe, the last, and the seconds between)."""
    costs = ", ".join(f"{s.probes[0]:.0f} → {s.cost:.0f} in {s.waited:.0f} s" if s.waited else f"{s.cost:.0f}"
                      for s in settlings)
    loud = sum(not s.quiet for s in settlings)
    line = f"a create's CPU before each round {costs} µs (quiet ≤ {quiet_us:.0f})"
    if loud:
        line += f"; {loud} round(s) NOT quiet when the wait ran out"
    return line
