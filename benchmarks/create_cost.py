"""What creating a file or a directory costs this filesystem now.

On ext4 without a journal (this VM's disk), the inode allocator skips every free inode of a group
that was freed recently (``recently_deleted``: seconds once the inode table is written back,
minutes while it is dirty) and charges the search to the process that creates. For tens of
seconds after anything deletes many files, every directory and file a landing creates costs
several times its quiet CPU, mostly system time, while the floor it is set beside creates nothing.
So before each timed round the table's harness (``quiet.py``) probes it here:

1. a small tree is created where the roots are landed, the shape of a few sessions (a directory
   and four files each), and timed in CPU per create (the thread's own CPU, so the machine's
   other work does not count);
2. a probe's tree is never deleted (a deletion is what it guards against): each is left beside
   the roots and goes with the harness's scratch directory, after all timing.
"""

from __future__ import annotations

import os
import tempfile
import time
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
