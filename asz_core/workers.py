"""Landing an adapter's sessions in several processes at once.

An adapter whose ``AdapterInfo.parallel_sessions`` is true says its ``asz_land`` keeps nothing in
memory from one session to the next and writes only under the session it holds. Its sessions
can then land in worker processes, each session whole in one worker under that session's own
lock, exactly as it would in the pass's process: the same steps in the same order, so what lands,
and every guarantee about a crash at any instant, is the same. What differs is only who does it
and when the pass hears of it:

* a worker is a fork of the pass (same host, configuration, root, clock and pass stamp), given
  the host and the adapter's context when it starts (``initializer``), so the landed files are
  named as one process would name them;
* claims are pickled to a worker as one frees up (so a claim's payload must pickle), a few at a
  time when sessions land quickly (:func:`_per_task`), and the pass takes the next claims from
  the adapter only then: it holds a few sessions, not all;
* a worker lands a task's claims with the same :func:`asz_core.land.land_claims` as the pass's
  process, one group commit per task,
  and sends back what it returns, the session's :class:`~asz_core.tally.SessionOutcome`; the
  pass merges outcomes in claim order (it announces the landed files, so ``asz_file_landed``
  observers run in the pass's process, records the settled entry and applies what the adapter
  handed back), exactly as it merges those of sessions landed in its own process;
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
from collections import deque
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import TYPE_CHECKING, Any

from asz_core.context import AdapterContext
from asz_core.failures import describe_failure
from asz_core.host import PluginHost
from asz_core.land import land_claims
from asz_core.plugin import SessionClaim
from asz_core.root.group import GROUP_SESSIONS
from asz_core.tally import SessionOutcome

if TYPE_CHECKING:
    from concurrent.futures import Future

__all__ = ["DEFAULT_FROM_SESSIONS", "DEFAULT_MOST", "DEFAULT_PER_CPU", "configured_workers", "explicit_workers",
           "land_in_workers"]

_PR_SET_PDEATHSIG = 1


#: With no number configured, a pass lands in worker processes only with at least this many
#: sessions to land: starting the workers costs far more than landing one small session
#: (figures: benchmarks/README.md, "Figures behind the code's constants").
DEFAULT_FROM_SESSIONS = 32
#: ... in this many for each CPU the pass may use: a session's landing waits for the disk
#: (three fsyncs) as well as using a CPU, and a second process on the CPU lands meanwhile.
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


#: tasks sent ahead to each worker: enough to keep it busy, few enough that the pass holds a
#: handful of sessions' claims at a time, not every one
_AHEAD = 2
#: tasks landed but not merged yet, because one sent before them is still landing (outcomes are
#: merged in claim order), beyond which no more are sent until it is in
_MOST_WAITING = 16
#: A task (the claims sent to a worker at once) should take about this long: each task costs
#: the pass a little CPU (pickling, the pool's queues, threads and futures) and the worker a
#: group commit (two ``syncfs``, :mod:`asz_core.root.group`), so several claims per task keep
#: both small, and a task this short still lets the workers finish close together (figures:
#: benchmarks/README.md, "Figures behind the code's constants").
_TASK_SECONDS = 0.2
#: ... and holds at most this many claims: one group.
_MOST_PER_TASK = GROUP_SESSIONS


class _Worker:
    """What a worker process lands with: given once, when the process starts."""

    def __init__(self, host: PluginHost, actx: AdapterContext) -> None:
        self.host = host
        self.actx = actx


#: this process's :class:`_Worker`, in a worker process only (a task is a module-level function,
#: which is how the pool finds it in the worker)
_worker: _Worker | None = None


def _start_worker(host: PluginHost, actx: AdapterContext) -> None:
    """A worker's first step: die with the pass, and keep what it lands with."""
    global _worker
    import ctypes
    import signal

    # Ctrl-C reaches every process of the terminal's group: the pass alone answers it (and ends
    # its workers), so a worker does not print a traceback of its own
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() == 1:  # the pass died before the line above ran
        os._exit(1)
    _worker = _Worker(host, actx)


def _land_task(claims: list[SessionClaim]) -> list[SessionOutcome]:
    assert _worker is not None, "a task runs only in a worker process"
    return list(land_claims(_worker.host, _worker.actx, claims))


def _per_task(seconds: float, landed: int) -> int:
    """How many claims the next task holds, from the ``seconds`` the ``landed`` claims
    reported so far took: about :data:`_TASK_SECONDS` of landing, one until a claim has landed."""
    if not landed:
        return 1
    return max(1, min(_MOST_PER_TASK, int(_TASK_SECONDS * landed / max(seconds, 1e-6))))


def _lost(task: list[SessionClaim], message: str) -> list[SessionOutcome]:
    """The outcome of each claim of ``task`` whose worker did not report: ``message``, its error."""
    return [SessionOutcome(claim.session, errors=[message]) for claim in task]


_DIED = ("a worker process died before reporting this session; what landed of it is complete "
         "and the rest lands next pass")


def land_in_workers(host: PluginHost, actx: AdapterContext, claims: Iterable[SessionClaim],
                    workers: int) -> Iterator[SessionOutcome]:
    """Land ``claims`` in ``workers`` forked processes and yield each one's outcome, in the order
    of ``claims``. Claims are taken from ``claims`` as workers free up."""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures import Future as Done
    from concurrent.futures.process import BrokenProcessPool

    upcoming = iter(claims)
    sent: deque[tuple[Future[list[SessionOutcome]], list[SessionClaim]]] = deque()
    reported: set[Future[list[SessionOutcome]]] = set()
    landed = 0  # claims reported, and the seconds they took: how many the next task holds
    seconds = 0.0

    def outcomes(future: Future[list[SessionOutcome]], task: list[SessionClaim]) -> list[SessionOutcome]:
        try:
            return future.result()
        except BrokenProcessPool:
            return _lost(task, _DIED)
        except Exception as exc:  # noqa: BLE001 - a report that cannot come back
            return _lost(task, describe_failure(exc))

    def send(pool: ProcessPoolExecutor) -> None:
        """Send tasks until each worker has :data:`_AHEAD` (once the pool is broken, each claim
        sent is lost)."""
        while sum(not f.done() for f, _ in sent) < workers * _AHEAD and len(sent) < workers * _AHEAD + _MOST_WAITING:
            task = list(islice(upcoming, _per_task(seconds, landed)))
            if not task:
                return
            try:
                future = pool.submit(_land_task, task)
            except BrokenProcessPool:
                future = Done()
                future.set_result(_lost(task, _DIED))
            sent.append((future, task))

    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"),
                             initializer=_start_worker, initargs=(host, actx)) as pool:
        while True:
            send(pool)
            if not sent:
                return
            if not sent[0][0].done():
                wait([f for f, _ in sent if not f.done()], return_when=FIRST_COMPLETED)
            for future, _ in sent:
                if future.done() and future not in reported and future.exception() is None:
                    reported.add(future)
                    done = future.result()
                    landed += len(done)
                    seconds += sum(outcome.seconds for outcome in done)
            while sent and sent[0][0].done():
                future, task = sent.popleft()
                reported.discard(future)
                yield from outcomes(future, task)
