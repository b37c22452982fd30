"""Whether the machine is quiet enough to time a run of the table, and waiting until it is.

A run measured while something else loads the machine is not a reading of asz: the floor and
the landings pay a disturbance unequally. Three gauges say whether one is going on:

* a create's CPU (``create_cost.py``): for tens of seconds after many files are deleted, this
  VM's ext4 charges every create for searching past them, which only the landings pay;
* I/O pressure (``pressure.py``): a deletion's discards, or another process's writes, load the
  disk that every landing fsyncs to, while the create probe sees nothing;
* CPU pressure: tasks queueing for a CPU, which the workers' wall pays.

So before each measured run the harness:

1. looks at the three (the pressure over a short window it sleeps through, then the probe);
2. if any is above its quiet level, sleeps and looks again, for a bounded time;
3. records every look and the seconds slept, so the table says what each run waited and what
   the machine was doing when it started, and whether any run started loud because the wait
   ran out. Where pressure cannot be read, the create cost alone decides, and the table says so
   once;
4. records the pressure over the run itself too: not a gauge of quiet (the run's own workers
   and fsyncs are in it), but a run whose figure stands out from the others' was disturbed
   while it ran, which no look before it could see.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

import create_cost
import pressure

T = TypeVar("T")


@dataclass(frozen=True)
class Reading:
    """One look at the machine before a run."""

    create_us: float           #: µs of CPU a create cost in the probe
    io: float | None = None    #: % of the window some task stalled on I/O (``None``: not read here)
    cpu: float | None = None   #: % of the window some task waited for a CPU (``None``: not read here)


@dataclass(frozen=True)
class Levels:
    """The quiet level of each gauge: at or under it, that gauge is quiet."""

    #: a quiet create costs this VM 12-20 µs; runs whose looks read 60-95 µs, minutes after a large
    #: deletion, landed a third slower than quiet ones (benchmarks/README.md, rounds 32 and 33)
    create_us: float = 40.0
    io: float = 10.0
    cpu: float = 10.0

    def loud(self, reading: Reading) -> tuple[str, ...]:
        """The gauges of ``reading`` above their level, by name (none: the machine is quiet)."""
        above = [("create", reading.create_us, self.create_us), ("I/O", reading.io, self.io),
                 ("CPU", reading.cpu, self.cpu)]
        return tuple(name for name, value, level in above if value is not None and value > level)


@dataclass(frozen=True)
class Settling:
    """What waiting for a quiet machine found before one run."""

    readings: tuple[Reading, ...]  #: each look, in the order taken
    waited: float                  #: seconds slept between them
    loud: tuple[str, ...]          #: the gauges still above their level at the last look
    during: Reading | None = None  #: I/O and CPU pressure over the run itself (its own load in it)

    @property
    def quiet(self) -> bool:
        return not self.loud

    @property
    def ran_at(self) -> Reading:
        """The machine as the run started: the last look."""
        return self.readings[-1]


def settle(look: Callable[[], Reading], levels: Levels, most_wait: float, interval: float,
           sleep: Callable[[float], None] = time.sleep) -> Settling:
    """Look until every gauge is at or under its level, sleeping ``interval`` seconds between
    looks and ``most_wait`` seconds in all at most; the run then starts either way, and the
    result says whether it starts quiet."""
    readings = [look()]
    waited = 0.0
    while levels.loud(readings[-1]) and waited + interval <= most_wait:
        sleep(interval)
        waited += interval
        readings.append(look())
    return Settling(tuple(readings), waited, levels.loud(readings[-1]))


def _look(reading: Reading) -> str:
    parts = [f"{reading.create_us:.0f}"]
    parts += [f"{value:.0f}" for value in (reading.io, reading.cpu) if value is not None]
    return "/".join(parts)


def describe(settlings: Sequence[Settling], levels: Levels, pressure: bool) -> str:
    """One line for the table's notes: each run's look as it started, after any wait (the
    first look and the seconds slept), and the runs that started loud."""
    gauges = "a create's CPU µs / I/O % / CPU %" if pressure else "a create's CPU µs"
    quiet_at = (f"{levels.create_us:.0f} / {levels.io:.0f} / {levels.cpu:.0f}" if pressure
                else f"{levels.create_us:.0f}")
    each = ", ".join(f"{_look(s.ran_at)} after {s.waited:.0f} s (first {_look(s.readings[0])})" if s.waited
                     else _look(s.ran_at) for s in settlings)
    line = f"before each run, {gauges} (quiet ≤ {quiet_at}): {each}"
    during = [s.during for s in settlings if s.during is not None and s.during.io is not None]
    if during:
        line += f"; during each run, I/O % / CPU %: {', '.join(f'{r.io:.0f}/{r.cpu:.0f}' for r in during)}"
    loud = [s for s in settlings if not s.quiet]
    if loud:
        names = sorted({name for s in loud for name in s.loud})
        line += f"; {len(loud)} run(s) NOT quiet when the wait ran out ({', '.join(names)})"
    return line


def summary(settlings: Sequence[Settling], levels: Levels, pressure: bool) -> str:
    """A sentence or two for the README: the range each gauge started the runs at, the waits,
    whether every run started quiet, and the pressure over the runs themselves."""

    def span(values: Sequence[float], unit: str) -> str:
        low, high = min(values), max(values)
        return f"{low:.0f}{unit}" if round(low) == round(high) else f"{low:.0f}\N{EN DASH}{high:.0f}{unit}"

    started = [s.ran_at for s in settlings]
    gauges = [f"a create's CPU {span([r.create_us for r in started], ' µs')} (quiet ≤ {levels.create_us:.0f})"]
    if pressure:
        ios = [r.io for r in started if r.io is not None]
        cpus = [r.cpu for r in started if r.cpu is not None]
        gauges.append(f"I/O pressure {span(ios, ' %')} (≤ {levels.io:.0f})")
        gauges.append(f"CPU pressure {span(cpus, ' %')} (≤ {levels.cpu:.0f})")
    waits = [s.waited for s in settlings if s.waited]
    waited = (f"{len(waits)} of {len(settlings)} runs waited for it, {sum(waits):.0f} s in all" if waits
              else "no run waited")
    loud = sum(not s.quiet for s in settlings)
    state = (f"{loud} of {len(settlings)} runs started NOT quiet" if loud
             else f"every run started quiet ({len(settlings)} in all)")
    line = f"Before each run: {', '.join(gauges)}; {waited}; {state}."
    during = [s.during for s in settlings if s.during is not None]
    ios = [r.io for r in during if r.io is not None]
    cpus = [r.cpu for r in during if r.cpu is not None]
    if ios and cpus:
        line += (f" Over the runs themselves (their own workers and fsyncs included): I/O pressure "
                 f"{span(ios, ' %')}, CPU pressure {span(cpus, ' %')}.")
    return line


@dataclass(frozen=True)
class Quiet:
    """How the table's harness waits for a quiet machine before each run."""

    scratch: Path          #: where the roots are landed, so where the create probes create
    levels: Levels         #: each gauge's quiet level
    most_wait: float       #: seconds to wait for them at most, before each run
    pressure: bool = True  #: whether this machine's pressure can be read (``pressure.py``)
    interval: float = 3.0  #: seconds between looks
    window: float = 2.0    #: seconds over which a look takes the pressure

    def look(self) -> Reading:
        """The pressure over a window this process sleeps through, then a create's cost."""
        shares = pressure.shares(self.window) if self.pressure else {}
        return Reading(create_cost.probe(self.scratch), shares.get("io"), shares.get("cpu"))

    def settle(self) -> Settling:
        return settle(self.look, self.levels, self.most_wait, self.interval)

    def over(self, run: Callable[[], T], settled: Settling) -> tuple[T, Settling]:
        """What ``run`` returns, and ``settled`` with the pressure over it (where pressure is read)."""
        if not self.pressure:
            return run(), settled
        before, started = pressure.totals(), time.monotonic()
        result = run()
        shares = pressure.since(before, time.monotonic() - started)
        return result, replace(settled, during=Reading(0.0, shares["io"], shares["cpu"]))

    def describe(self, settlings: Sequence[Settling]) -> str:
        return describe(settlings, self.levels, self.pressure)

    def summary(self, settlings: Sequence[Settling]) -> str:
        return summary(settlings, self.levels, self.pressure)
