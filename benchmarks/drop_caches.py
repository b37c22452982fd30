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
