"""Landing an adapter's sessions in several processes at once.

An adapter whose ``AdapterInfo.parallel_sessions`` is true says its ``asz_land`` keeps nothing in
memory from one session to the next and writes only under the session it holds. Its sessions
can then land in worker processes, each session whole in one worker under that session's own
lock, exactly as it would in the pass's process: the same steps in the same order, so what lands,
and every guarantee about a crash at any instant, is the same. What differs is only who does it
and when the pass hears of it:

* a worker is a fork of the pass (same host, configuration, root, clock and pass stamp), so the
  landed files are named as one process would name them;
* claims are pickled to a worker as one frees up (so a claim's payload must pickle), a few at a
  time when sessions land quickly (:func:`_per_task`), and the pass takes the next claims from
  the adapter only then: it holds a few sessions, not all;
* what a worker lands is reported back and announced by the pass (``asz_file_landed``
  observers run in the pass's process, as they would serially), with its counters, warnings,
  errors, the sessions it noted settled, and what the adapter handed back to the pass
  (``AdapterContext.hand_back``), applied in the pass's process;
* a worker dies with the pass (``PR_SET_PDEATHSIG``), so a pass killed with -9 leaves no worker
  writing behind it; a worker that dies alone fails the pass with an error naming the sessions
  it did not report, which land next pass (their cursors never moved past what landed).

``collector.workers`` (or ``$ASZ_WORKERS``) sets how many; one lands in the pass's own process.
Unset, a pass on Linux with many sessions to land uses two processes for each CPU it may use (at
most four): each session waits for three fsyncs, during which its process needs no CPU and
another can use it; a pass with a few sessions to land is not slowed by starting them
(:func:`configured_workers`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, Any

from asz_core.context import AdapterContext, PassError, QuietReporter
from asz_core.host import PluginHost
from asz_core.plugin import SessionClaim
from asz_core.root.locks import LockBusy

if TYPE_CHECKING:
    from concurrent.futures import Future

    from asz_core.root.landing import LandedFile

__all__ = ["DEFAULT_FROM_SESSIONS", "DEFAULT_MOST", "DEFAULT_PER_CPU", "configured_workers", "explicit_workers",
           "land_in_workers", "land_one"]

#: counted by the pass when it announces each landed file, never by the worker
_ANNOUNCED = ("landed", "records", "bytes")
_PR_SET_PDEATHSIG = 1


#: With no number configured, a pass lands in worker processes only with at least this many
#: sessions to land: starting the workers costs about 50 ms, a session 3-10 ms.
DEFAULT_FROM_SESSIONS = 32
#: ... in this many for each CPU the pass may use: a session's landing waits for the disk
#: (three fsyncs, 1-2 ms on the development VM) as well as using a CPU, and a second process
#: on the CPU lands meanwhile. On 2 vCPUs, 4 workers against 2 (interleaved, fresh roots): the
#: 100mb preset's transcripts 2.9-3.6 -> 2.1-2.3 s, many-small 5.5-6.8 -> 4.3-6.3 s.
DEFAULT_PER_CPU = 2
#: ... and in at most this many.
DEFAULT_MOST = 4


def configured_workers(options: dict[str, Any], sessions: int = 0,
                       from_sessions: int = DEFAULT_FROM_SESSIONS) -> int:
    """How many processes land this adapter's ``sessions``: ``$ASZ_WORKERS``, else the
    adapter's ``collector.workers``, else on Linux :data:`DEFAULT_PER_CPU` for each CPU this
    process may use (at most :data:`DEFAULT_MOST`; 1 on one CPU) once there are
    ``from_sessions`` sessions (the adapter's ``AdapterInfo.parallel_from``, else
    :data:`DEFAULT_FROM_SESSIONS`), else 1; always 1 where processes cannot be forked (Windows).

    The default is Linux's alone: elsewhere a forked process that does not exec is not safe
    with every system library (macOS), or there is no fork at all.
    """
    wanted = explicit_workers(options)
    if wanted is None:
        linux = sys.platform == "linux" and sessions >= max(from_sessions, 1)
        cpus = len(os.sched_getaffinity(0)) if linux else 1
        wanted = min(DEFAULT_PER_CPU * cpus, DEFAULT_MOST) if cpus > 1 else 1
    if wanted <= 1:
        return 1
    import multiprocessing  # only for a pass that lands in several processes

    return wanted if "fork" in multiprocessing.get_all_start_methods() else 1


def explicit_workers(options: dict[str, Any]) -> int | None:
    """The number of processes asked for (``$ASZ_WORKERS``, else ``collector.workers``);
    ``None`` when neither is set and the default applies."""
    explicit = os.environ.get("ASZ_WORKERS", "")
    if explicit.isdigit():
        return int(explicit)
    value = options.get("collector", {}).get("workers")
    return value if isinstance(value, int) else None


def land_one(host: PluginHost, actx: AdapterContext, name: str, claim: SessionClaim,
             describe: Any) -> None:
    """Land one claim under its session's lock, counting a busy session and an error as a pass
    does (``describe`` turns an exception into the message)."""
    try:
        with actx.open_session(claim.session) as session:
            host.land(name, actx, claim, session)
    except LockBusy:
        actx.counters.busy += 1
    except Exception as exc:  # noqa: BLE001 - isolate each session's failure
        actx.pass_ctx.error(name, describe(exc), claim.session)


@dataclass
class _Report:
    """What a worker did with one claim, and how long it took."""

    counters: dict[str, int]
    landed: list[LandedFile]
    warnings: list[str]
    errors: list[PassError]
    settled: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    session: str = ""
    #: ``AdapterContext.hand_back``'s calls, to run in the pass
    handed_back: list[tuple[Callable[[AdapterContext, Any], None], Any]] = field(default_factory=list)


# The pass's objects, set before the workers are forked (they inherit them; nothing is pickled
# but each claim, sent as a worker frees up, and its report).
_state: tuple[PluginHost, AdapterContext, str, Any] | None = None
#: tasks sent ahead to each worker: enough to keep it busy, few enough that the pass holds a
#: handful of sessions' claims at a time, not every one
_AHEAD = 2
#: A task (the claims sent to a worker at once) should take about this long. Each task costs
#: the pass about 0.5 ms of CPU (pickling, the pool's queues, threads and futures), which is a
#: sixth of a small session's landing; a few claims per task make it small, and a task this
#: short still lets the workers finish close together. The time is the worker's wall time, which
#: with two workers per CPU and three fsyncs a session is 5-15 ms for a small one: at 20 ms
#: tasks held one or two claims and the pass spent 0.65-0.99 s of CPU on 2,000 (many-small), at
#: 60 ms 0.40-0.49 s.
_TASK_SECONDS = 0.05
#: ... and holds at most this many claims.
_MOST_PER_TASK = 16


def _die_with_the_pass() -> None:
    import ctypes
    import signal

    # Ctrl-C reaches every process of the terminal's group: the pass alone answers it (and ends
    # its workers), so a worker does not print a traceback of its own
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() == 1:  # the pass died before the line above ran
        os._exit(1)


def _land_task(claims: list[SessionClaim]) -> list[_Report]:
    return [_land_in_worker(claim) for claim in claims]


def _land_in_worker(claim: SessionClaim) -> _Report:
    assert _state is not None
    host, actx, name, describe = _state
    ctx = actx.pass_ctx
    reporter = QuietReporter()
    ctx.reporter = reporter
    ctx.deferred_landed = []
    before = actx.counters.as_dict()
    errors_before = len(ctx.errors)
    settled = actx._settled
    if settled is not None:
        settled.held = {}  # what this session records or forgets goes back to the pass
    handed_back: list[tuple[Callable[[AdapterContext, Any], None], Any]] = []
    actx._handed_back = handed_back
    started = time.perf_counter()
    land_one(host, actx, name, claim, describe)
    seconds = time.perf_counter() - started
    after = actx.counters.as_dict()
    return _Report(counters={k: after[k] - before[k] for k in after if k not in _ANNOUNCED},
                   landed=[f for _, f in ctx.deferred_landed], warnings=reporter.warnings,
                   errors=ctx.errors[errors_before:],
                   settled=(settled.held or {}) if settled is not None else {}, seconds=seconds,
                   session=claim.session, handed_back=handed_back)


def _per_task(seconds: float, landed: int) -> int:
    """How many claims the next task holds, from the ``seconds`` the ``landed`` claims
    reported so far took: about :data:`_TASK_SECONDS` of landing, one until a claim has landed."""
    if not landed:
        return 1
    return max(1, min(_MOST_PER_TASK, int(_TASK_SECONDS * landed / max(seconds, 1e-6))))


def land_in_workers(host: PluginHost, actx: AdapterContext, name: str, claims: Iterable[SessionClaim],
                    total: int, workers: int, describe: Any) -> None:
    """Land ``claims`` in ``workers`` forked processes, announcing and counting what each did.
    Claims are taken from ``claims`` as workers free up (``total`` of them, 0 if not known)."""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    global _state
    ctx = actx.pass_ctx
    settled = actx.settled if not ctx.dry_run else None  # loaded before the fork: workers share it
    _state = (host, actx, name, describe)
    done = 0
    landed = 0  # claims reported, and the seconds they took: how many the next task holds
    seconds = 0.0
    upcoming = iter(claims)
    pending: dict[Future[list[_Report]], list[SessionClaim]] = {}

    def lost(claim: SessionClaim) -> None:
        ctx.error(name, "a worker process died before reporting this session; what landed of it "
                        "is complete and the rest lands next pass", claim.session)

    def send(count: int) -> None:
        """Send the next ``count`` tasks; once the pool is broken, every claim left is lost."""
        while count > 0:
            task = list(islice(upcoming, _per_task(seconds, landed)))
            if not task:
                return
            try:
                pending[pool.submit(_land_task, task)] = task
                count -= 1
            except BrokenProcessPool:
                for claim in task:
                    lost(claim)

    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"),
                                 initializer=_die_with_the_pass) as pool:
            send(workers * _AHEAD)
            while pending:
                # at most workers x _AHEAD are pending, so each wait looks at a few futures
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    task = pending.pop(future)
                    try:
                        reports = future.result()
                    except BrokenProcessPool:
                        reports = None
                        for claim in task:
                            lost(claim)
                    except Exception as exc:  # noqa: BLE001 - a report that cannot come back
                        reports = None
                        for claim in task:
                            ctx.error(name, describe(exc), claim.session)
                    if reports is not None:
                        landed += len(reports)
                        seconds += sum(report.seconds for report in reports)
                    send(1)
                    for report in reports or ():
                        _merge(actx, name, report, settled, describe)
                    done += len(task)
                    ctx.reporter.progress(name, done, total)
    finally:
        _state = None


def _merge(actx: AdapterContext, name: str, report: _Report, settled: Any, describe: Any) -> None:
    ctx = actx.pass_ctx
    counters = actx.counters
    for key, value in report.counters.items():
        setattr(counters, key, getattr(counters, key) + value)
    ctx.errors.extend(report.errors)
    for message in report.warnings:
        ctx.reporter.warn(message)
    for landed in report.landed:
        ctx.file_landed(name, landed)
    if settled is not None:
        for session, entry in report.settled.items():
            if entry is None:
                settled.forget(session)
            else:
                settled.put(session, entry)
    for apply, value in report.handed_back:
        try:
            apply(actx, value)
        except Exception as exc:  # noqa: BLE001 - as the session's own failure would be
            ctx.error(name, describe(exc), report.session)
            break  # as in one process, where the failure ends the session's landing
