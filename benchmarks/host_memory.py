"""How much of the guest's free memory its host still backs: what a landing can write into before
each new page costs a host's fault.

On a virtual machine that reports its free memory to its host (``page_reporting``, with a balloon
that asks for it: this VM), the guest hands every free block of ``2^page_reporting_order`` pages
or more back to the host, which faults each page in again on its next use. The floor writes
nothing; a landing writes every byte it lands into new pages of the page cache, and the kernel
hands out its smallest free blocks first. So a landing writes into backed pages for as long as
free blocks smaller than the reported ones last (a deletion or a dropped page cache frees them by
the gigabyte: scattered pages seldom join into a block large enough to report), and into pages
the host must fault in after that: a small sessions' landing after ten landings of the x10 copy
spent 0.2 s more of system time, the write's copy into the page cache 4.6 % of its samples where
it was 0.3 % once the page cache was dropped (``benchmarks/README.md``, round 33).

The table's notes give it for each row as its rounds began (:func:`unreported_free_mb`). It says
what the landings meet, not whether the machine is quiet: nothing but freeing memory raises it.
"""

from __future__ import annotations

import os
from pathlib import Path

#: the order (in pages, a power of two) of the free blocks this guest reports to its host
#: (Linux 5.14 and later, where a balloon asks for it)
REPORTING_ORDER = Path("/sys/module/page_reporting/parameters/page_reporting_order")
BUDDYINFO = Path("/proc/buddyinfo")


def unreported_free_mb(buddyinfo: Path = BUDDYINFO, reporting_order: Path = REPORTING_ORDER) -> float | None:
    """The free memory in blocks smaller than those the guest reports to its host, in MB; ``None``
    where the guest reports none to a host, or Linux does not say how its free memory lies."""
    try:
        order = int(reporting_order.read_text("ascii"))
        # a line a zone, "Node 0, zone   Normal  19511  12185 ...": its free blocks of each order
        zones = [line.split()[4:] for line in buddyinfo.read_text("ascii").splitlines()]
        pages = sum(int(blocks) << k for counts in zones for k, blocks in enumerate(counts[:order]))
    except (OSError, ValueError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6
