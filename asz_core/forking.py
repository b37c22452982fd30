"""Processes a pass forks to share its work: how many the user asked for, and what a forked
child does first.

Two kinds of work are forked: whole sessions (:mod:`asz_core.workers`) and the lines of one large
source (:mod:`asz_core.collect.split`). Both obey the same word from the user on how many
processes a pass may use, and both children follow the same rule: a child never outlives the
pass that forked it (so a pass killed with -9 leaves nothing writing behind it), and Ctrl-C is the
pass's to answer (so a child prints no traceback of its own).
"""

from __future__ import annotations

import functools
import os
import signal
from collections.abc import Callable
from typing import Any

__all__ = ["explicit_workers", "follow_the_pass", "ready_to_fork"]

_PR_SET_PDEATHSIG = 1


def explicit_workers(options: dict[str, Any]) -> int | None:
    """The number of processes asked for (``$ASZ_WORKERS``, else ``collector.workers``);
    ``None`` when neither is set and the default applies."""
    explicit = os.environ.get("ASZ_WORKERS", "")
    if explicit.isdigit():
        return int(explicit)
    value = options.get("collector", {}).get("workers")
    return value if isinstance(value, int) else None


@functools.cache
def _prctl() -> Callable[..., int] | None:
    """libc's ``prctl``, looked up once; ``None`` where there is none (not Linux)."""
    import ctypes  # about 3 ms of CPU to import and load libc: paid once, before forking

    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def ready_to_fork() -> None:
    """Look up in the pass, before it forks, what a child's first step needs: otherwise each
    child imports ``ctypes`` and loads libc again, the largest part of its start."""
    _prctl()


def follow_the_pass() -> None:
    """A forked child's first step: die with the pass (``PR_SET_PDEATHSIG``), and leave Ctrl-C,
    which reaches every process of the terminal's group, to the pass, which ends its children."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    prctl = _prctl()
    if prctl is not None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() == 1:  # the pass died before the line above ran
        os._exit(1)
