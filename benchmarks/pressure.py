"""How much of a short window the rest of the machine spent stalled on I/O or waiting for a CPU.

Linux's pressure stall information (``/proc/pressure/io`` and ``cpu``, kernel 4.20 and later)
counts, in ``some ... total=``, the microseconds during which at least one task was stalled on
that resource. A deletion's discards load the disk for minutes without making a create dearer,
and the create probe (``create_cost.py``) does not see them; I/O pressure does. CPU pressure says
that runnable tasks are queueing for a CPU, which the workers' wall would pay.

The share is taken from ``total`` over a window of the harness's own, in which it only sleeps,
not from the kernel's ``some avg10``: that is a decaying average over about ten seconds, so right
after a round it still carries the round itself (worker processes on every CPU are CPU pressure,
their fsyncs I/O pressure), and a harness waiting on it would mostly wait for itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

PSI = Path("/proc/pressure")
#: the resources read, in the order they are reported
RESOURCES = ("io", "cpu")


def stalled_us(resource: str, psi: Path = PSI) -> int:
    """The ``some`` line's ``total``: microseconds since boot during which some task stalled."""
    for line in (psi / resource).read_text("ascii").splitlines():
        kind, *fields = line.split()
        if kind == "some":
            return int(dict(field.split("=", 1) for field in fields)["total"])
    raise ValueError(f"{psi / resource} has no 'some' line")


def unavailable(psi: Path = PSI) -> str | None:
    """Why pressure cannot be read here, or ``None`` when it can: no ``/proc/pressure`` (a kernel
    before 4.20, or not Linux), or reading it refused (a kernel booted with ``psi=0``)."""
    for resource in RESOURCES:
        try:
            stalled_us(resource, psi)
        except (OSError, ValueError, KeyError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            return f"{psi / resource}: {reason}"
    return None


def totals(psi: Path = PSI) -> dict[str, int]:
    """Each resource's ``some total`` now, to take a share over a span from."""
    return {resource: stalled_us(resource, psi) for resource in RESOURCES}


def since(before: dict[str, int], seconds: float, psi: Path = PSI) -> dict[str, float]:
    """Per resource, the percentage of the last ``seconds`` (since ``before`` was taken) during
    which some task on the machine stalled on it."""
    now = totals(psi)
    return {resource: (now[resource] - before[resource]) / (max(seconds, 1e-6) * 1e6) * 100
            for resource in RESOURCES}


def shares(window: float, psi: Path = PSI, sleep: Callable[[float], None] = time.sleep,
           clock: Callable[[], float] = time.monotonic) -> dict[str, float]:
    """Per resource, the percentage of the next ``window`` seconds during which some task on the
    machine stalled on it (this process sleeps through the window, so it is the others')."""
    before = totals(psi)
    started = clock()
    sleep(window)
    return since(before, clock() - started, psi)
