"""Named points in landing where the crash-safety tests stop a pass.

Each step of landing a file or replacing a state file calls :func:`checkpoint` with its name,
whether a session makes it alone or a group commit makes it for several
(:mod:`~asz_core.root.group`: ``temp-fsync`` once per file before the group's first ``syncfs``,
``dir-fsync`` once per directory before its second).
Normally that does nothing. When ``ASZ_FAULT`` is set (only the tests set it) to
``<action>:<step>:<n>``, the ``n``-th time ``step`` is reached the process is killed with
SIGKILL (``kill``), the step fails with ``ENOSPC`` (``enospc``), or the pass stops there for
three seconds (``stall``), so a test can prove that a crash or a full disk at that instant loses
nothing and lands nothing twice, or hold a pass open while a second one starts.
"""

from __future__ import annotations

import errno
import os
import signal
import time
from typing import Final

__all__ = ["STEPS", "checkpoint"]

#: Every step a fault can be injected at, in the order a landing reaches them.
STEPS: Final = (
    "owed-start",     # the pass's first landing is next; the log of owed parses not yet told
    "temp-write",     # records are being written to the temporary file
    "temp-fsync",     # written, not yet durable
    "temp-readonly",  # durable, not yet read-only
    "install",        # read-only, not yet renamed into place
    "dir-fsync",      # renamed, directory entry not yet durable
    "state-write",    # a cursor or state file's temporary copy is being written
    "state-rename",   # the temporary copy is durable, not yet renamed over the old one
    "group-release",  # a group's steps are durable; a session of it not yet settled and released
    "owed-end",       # every landing done; the log not yet told which sessions landed
    "owed-replace",   # the parse after the pass is done; its log not yet settled
)

_spec = os.environ.get("ASZ_FAULT", "")
_counts: dict[str, int] = {}


def checkpoint(step: str) -> None:
    """Reached ``step``; act if a test asked for a fault here."""
    if not _spec:
        return
    action, _, rest = _spec.partition(":")
    target, _, nth = rest.partition(":")
    if step != target:
        return
    _counts[step] = _counts.get(step, 0) + 1
    if _counts[step] != int(nth or 1):
        return
    if action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if action == "enospc":
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC) + f" (injected at {step})")
    if action == "stall":
        time.sleep(3)
