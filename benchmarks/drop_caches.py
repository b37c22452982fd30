"""The page cache dropped before each row of the table, so that a row's figures do not depend on
the rows run before it (``pass.py --table --drop-caches``).

On a virtual machine whose host backs the guest's memory lazily (this VM reports its free pages
to the host, ``page_reporting``, which faults each back in on its first touch), writing into a
page the kernel has not handed out lately costs several times what writing into one just freed
does (``benchmarks/README.md``, rounds 17 and 33). The floor writes nothing; a landing writes every
byte it lands into new pages of the page cache. The table's rows run one after the other, and
the landed roots of a row keep what it wrote in the cache (the x10 copy's row some 2 GB: eleven
landings of 180 MB), so a row run after them writes into pages the host must fault in, where the
same row run first does not: the small sessions with workers read 17.0 % of the floor after the
x10 copy's row and 21.0 % with the cache dropped before them, the same build within the hour
(round 33).

With ``--drop-caches``, before each row the harness:

1. writes back what is dirty (``sync``) and asks the kernel to drop its clean page cache
   (``/proc/sys/vm/drop_caches``, ``1``: the page cache alone, not the dentries and inodes), which
   frees pages the host still backs;
2. reads the row's corpus once and lands it once, neither timed (``pass.py``'s row start), so that
   no timed run reads its sources, or asz's modules, from the disk.

Writing that file needs root; where it cannot be written the table does not start.

With or without it, the table's notes say for each row how much free memory the host still backed
as its rounds began (:func:`unreported_free_mb`), the gauge of what its landings write into.
"""

from __future__ import annotations

import os
from pathlib import Path

DROP_CACHES = Path("/proc/sys/vm/drop_caches")
#: what is written: the page cache alone (2 would be the dentries and inodes, 3 both)
PAGE_CACHE = "1\n"


def unavailable(control: Path = DROP_CACHES) -> str | None:
    """Why the page cache cannot be dropped here (``None``: it can): no such control (not
    Linux), or not allowed to write it (not root)."""
    if not control.exists():
        return f"{control} does not exist (the page cache is dropped on Linux alone)"
    if not os.access(control, os.W_OK):
        return f"{control} cannot be written by this user (dropping the page cache needs root)"
    return None


def drop_page_cache(control: Path = DROP_CACHES) -> None:
    """Write back what is dirty, then drop the clean page cache: what a page held is read from
    the disk again when next asked for, and the pages are free."""
    os.sync()  # a dirty page is not dropped: written back first, it is
    control.write_text(PAGE_CACHE, "ascii")


#: the order (in pages, a power of two) of the free blocks this guest reports to its host
#: (``page_reporting``, Linux 5.14 and later, loaded with a balloon that asks for it)
REPORTING_ORDER = Path("/sys/module/page_reporting/parameters/page_reporting_order")
BUDDYINFO = Path("/proc/buddyinfo")


def unreported_free_mb(buddyinfo: Path = BUDDYINFO, reporting_order: Path = REPORTING_ORDER) -> float | None:
    """The free memory in blocks smaller than those the guest reports to its host, in MB: pages
    the host still backs, which the kernel hands out first (it splits a larger block only when no
    smaller one is free), so what a landing can write into before its pages cost a host's fault.
    A drop of the page cache frees such blocks by the gigabyte (scattered pages seldom join into a
    block large enough to be reported); a landing's writes use them up. ``None`` where the guest
    reports no free pages to a host, or Linux does not say how its free memory lies."""
    try:
        order = int(reporting_order.read_text("ascii"))
        # a line a zone, "Node 0, zone   Normal  19511  12185 ...": its free blocks of each order
        zones = [line.split()[4:] for line in buddyinfo.read_text("ascii").splitlines()]
        pages = sum(int(blocks) << k for counts in zones for k, blocks in enumerate(counts[:order]))
    except (OSError, ValueError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6
