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
* claims are sent largest first within each block of the next few groups' worth
  (:func:`_largest_first`), so that the last session a worker starts is a small one and the
  workers finish together;
* claims are pickled to a worker as it frees up (so a claim's payload must pickle), a few at a
  time when sessions land quickly (:func:`_per_task`): each worker says when it has landed a
  task, and is sent the next one then, so it holds the task it lands and one more
  (:data:`_TASKS_AHEAD`), and a worker that draws large sessions is given fewer while the others
  take the rest; the pass takes the next claims from the adapter only then: it holds a few
  groups' worth of sessions, not all;
* a worker lands its claims with the same :class:`asz_core.land.GroupLanding` as the pass's
  process, one group commit spanning its tasks (full, or when the pass has no task to send it:
  see :func:`_serve`), and sends back what each returns once its group has committed, the session's
  :class:`~asz_core.tally.SessionOutcome`; the pass merges outcomes in claim order (it
  announces the landed files, so ``asz_file_landed`` observers run in the pass's process,
  records the settled entry and applies what the adapter handed back), exactly as it merges
  those of sessions landed in its own process;
* a worker dies with the pass (:func:`~asz_core.forking.follow_the_pass`), so a pass killed
  with -9 leaves no worker writing behind it; a worker that dies alone fails the pass with an
  error naming the sessions it did not report, which land next pass (their cursors never moved
  past what landed), and the others land on.

``collector.workers`` (or ``$ASZ_WORKERS``) sets how many; one lands in the pass's own process.
Unset, a pass on Linux with many sessions to land uses one process for each CPU it may use and,
once each would land more than a group, one more (at most four): since a worker's sessions share
one group commit, a landing waits for the disk only a small part of its time, which one process
more than the CPUs fills, where a second process on every CPU only adds the cost of switching
between them; a pass with a few sessions to land is not slowed by starting them
(:func:`configured_workers`).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import time
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import TYPE_CHECKING, Any

from asz_core.context import AdapterContext
from asz_core.forking import explicit_workers, follow_the_pass, ready_to_fork
from asz_core.host import PluginHost
from asz_core.land import GroupLanding
from asz_core.plugin import SessionClaim
from asz_core.root.group import GROUP_SESSIONS
from asz_core.tally import SessionOutcome

if TYPE_CHECKING:
    from multiprocessing import Queue
    from multiprocessing.connection import Connection

__all__ = ["DECIDED_BY", "DEFAULT_FROM_SESSIONS", "DEFAULT_MOST", "DEFAULT_PER_CPU", "DEFAULT_SPARE",
           "configured_workers", "default_workers", "land_in_workers"]


#: With no number configured, a pass lands in worker processes only with at least this many
#: sessions to land: starting the workers costs far more than landing one small session
#: (figures: benchmarks/README.md, "Figures behind the code's constants").
DEFAULT_FROM_SESSIONS = 32
#: ... in this many for each CPU the pass may use: with group commit a worker waits for the disk
#: once a group, not once a session, so a second worker on every CPU has little wait to fill and
#: costs CPU to switch to (figures: benchmarks/README.md, "Figures behind the code's constants").
DEFAULT_PER_CPU = 1
#: ... and this many more, on more than one CPU, once each worker would land more sessions than a
#: group holds (:data:`~asz_core.root.group.GROUP_SESSIONS`): a worker still waits for the disk
#: part of its time (its group's ``syncfs``, a page it writes to while that page is written
#: back), and with as many workers as CPUs a CPU idles meanwhile; one process more fills those
#: waits. With fewer sessions each worker commits once, at its end, and a process more only
#: shares the CPUs (figures: benchmarks/README.md, "Figures behind the code's constants").
DEFAULT_SPARE = 1
#: ... and in at most this many.
DEFAULT_MOST = 4
#: How many sessions to land decide the default: with this many (or more), every number of
#: workers the default may choose lands more than a group in each. A pass given its claims one
#: at a time takes up to this many before it forks (:func:`~asz_core.pipeline.run_pass`).
DECIDED_BY = DEFAULT_MOST * GROUP_SESSIONS + 1


def default_workers(sessions: int, from_sessions: int = DEFAULT_FROM_SESSIONS) -> int:
    """How many processes land ``sessions`` when none is asked for (see :func:`configured_workers`):
    on Linux, from ``from_sessions`` sessions on, :data:`DEFAULT_PER_CPU` for each CPU this process
    may use, and :data:`DEFAULT_SPARE` more once each of the workers with it would land more
    sessions than a group holds, at most :data:`DEFAULT_MOST`; else 1."""
    linux = sys.platform == "linux" and sessions >= max(from_sessions, 1)
    cpus = len(os.sched_getaffinity(0)) if linux else 1
    if cpus <= 1:
        return 1
    busy = min(DEFAULT_PER_CPU * cpus, DEFAULT_MOST)
    spared = min(busy + DEFAULT_SPARE, DEFAULT_MOST)
    return spared if sessions > spared * GROUP_SESSIONS else busy


def configured_workers(options: dict[str, Any], sessions: int = 0,
                       from_sessions: int = DEFAULT_FROM_SESSIONS) -> int:
    """How many processes land this adapter's ``sessions``: ``$ASZ_WORKERS``, else the
    adapter's ``collector.workers``, else on Linux :data:`DEFAULT_PER_CPU` for each CPU this
    process may use and :data:`DEFAULT_SPARE` more for many sessions (:func:`default_workers`; at
    most :data:`DEFAULT_MOST`; 1 on one CPU) once there are ``from_sessions`` sessions (the
    adapter's ``AdapterInfo.parallel_from``, else :data:`DEFAULT_FROM_SESSIONS`), else 1; always 1
    where processes cannot be forked (Windows).

    The default is Linux's alone: elsewhere a forked process that does not exec is not safe
    with every system library (macOS), or there is no fork at all.
    """
    wanted = explicit_workers(options)
    if wanted is None:
        wanted = default_workers(sessions, from_sessions)
    if wanted <= 1:
        return 1
    import multiprocessing  # only for a pass that lands in several processes

    return wanted if "fork" in multiprocessing.get_all_start_methods() else 1


#: A task (the claims sent to a worker at once) should take about this much of a worker's CPU:
#: each costs the pass a little CPU (pickling, pipe writes, the worker's report), so several
#: claims per task keep it small, and a task this short still lets the workers finish close
#: together (figures: benchmarks/README.md, "Figures behind the code's constants"). CPU, not
#: wall, time: on a machine others load, a session's wall time grows with their load, and tasks
#: sized by it held one small session each. A worker's group commit is not its task: it spans
#: tasks (:func:`_serve`).
_TASK_SECONDS = 0.05
#: ... and holds at most this many claims.
_MOST_PER_TASK = 16
#: claims sent to a worker and not reported yet: enough for it to fill a group
#: (:data:`~asz_core.root.group.GROUP_SESSIONS`) with a task still waiting behind it
_MOST_PENDING = GROUP_SESSIONS + 2 * _MOST_PER_TASK
#: claims the pass holds sent and not merged, per worker, as a multiple of :data:`_MOST_PENDING`:
#: each worker's own in flight, and as many again reported and waiting to merge (outcomes merge in
#: claim order) behind a claim that another worker still lands, or holds in a group not yet full.
#: With room for the first alone, the other workers stopped for want of claims each time one
#: landed a large session (figures: benchmarks/README.md, "Figures behind the code's constants")
_UNMERGED_PENDINGS = 2
#: tasks sent to a worker that it has not finished: the one it lands and the next, so that it
#: never waits for the pass between two, and is not sent the claims other workers are free for
#: while it lands a large session
_TASKS_AHEAD = 2
#: the task that asks a worker to commit the group it holds now
_COMMIT: list[tuple[int, SessionClaim]] = []
#: claims ordered largest first at a time: two groups' worth, so that a block is as large as
#: the claims the pass holds unmerged anyway, and a pass never holds more of them than that
_ORDERED_AHEAD = 2 * GROUP_SESSIONS


class _Report:
    """What a worker sends the pass: whether it has finished a task (a commit asked for is one),
    the claims it landed in it and the seconds they took, and the outcomes of the claims whose
    group has committed, each with its index. A plain class
    (docs/architecture.md, "Classes a pass imports")."""

    __slots__ = ("finished", "landed", "outcomes", "seconds")

    def __init__(self, finished: bool, landed: int, seconds: float, outcomes: list[tuple[int, SessionOutcome]]) -> None:
        self.finished = finished
        self.landed = landed
        self.seconds = seconds
        self.outcomes = outcomes


def _serve(inbox: Queue[list[tuple[int, SessionClaim]] | None], conn: Connection, host: PluginHost,
           actx: AdapterContext) -> None:
    """A worker process: land each task's claims into one group commit that spans tasks, and
    report each task once it is landed, with the ``(index, outcome)`` of each claim whose group
    has committed. The group commits when it is full, and when the pass asks (:data:`_COMMIT`),
    which it does whenever it has no task to send this worker: so a worker never waits for work
    holding sessions the pass waits to merge. ``None`` ends it (after a last commit)."""
    follow_the_pass()
    landing = GroupLanding(host, actx, behind=False)
    indexes: list[int] = []

    def report(finished: bool, landed: int, seconds: float, done: list[SessionOutcome]) -> None:
        conn.send(_Report(finished, landed, seconds, list(zip(indexes[:len(done)], done, strict=True))))
        del indexes[:len(done)]

    try:
        while (task := inbox.get()) is not None:
            started = time.process_time()
            for index, claim in task:
                indexes.append(index)
                done = landing.land(claim)
                if done:  # a full group, or a failure: reported at once
                    report(False, 0, 0.0, done)
            report(True, len(task), time.process_time() - started, [] if task else landing.commit())
    finally:
        done = landing.close()
        if done:
            report(False, 0, 0.0, done)
        conn.close()


def _per_task(seconds: float, landed: int) -> int:
    """How many claims the next task holds, from the ``seconds`` of CPU the ``landed`` claims
    reported so far took: about :data:`_TASK_SECONDS` of landing, one until a task has landed."""
    if not landed:
        return 1
    return max(1, min(_MOST_PER_TASK, int(_TASK_SECONDS * landed / max(seconds, 1e-6))))


def _source_bytes(claim: SessionClaim) -> int:
    """The bytes of ``claim``'s sources as they stat now (0 for a claim that does not list them
    in ``settled_by``, or whose sources are gone): how long its landing will take, roughly."""
    total = 0
    for settled in claim.settled_by or ():
        with contextlib.suppress(OSError):
            total += os.lstat(settled.source).st_size
    return total


def _largest_first(claims: Iterator[tuple[int, SessionClaim]]) -> Iterator[tuple[int, SessionClaim]]:
    """``claims`` in blocks of :data:`_ORDERED_AHEAD`, each block largest first (ties, and claims
    of unknown size, in claim order). Sent in claim order, the largest session of a block can
    come last and land alone while the other workers wait; sent first, it lands beside the
    small ones. Each keeps its index, so outcomes still merge in claim order."""
    while block := list(islice(claims, _ORDERED_AHEAD)):
        yield from sorted(block, key=lambda indexed: -_source_bytes(indexed[1]))


def _lost(session: str, message: str) -> SessionOutcome:
    """The outcome of a claim whose worker did not report: ``message``, its error."""
    return SessionOutcome(session, errors=[message])


_DIED = ("a worker process died before reporting this session; what landed of it is complete "
         "and the rest lands next pass")


class _Process:
    """A worker process, its inbox, the pipe its reports come back on, and the claims it has not
    reported. Tasks go through a queue, whose thread writes them: the pass never blocks sending
    while the worker blocks sending a report back."""

    def __init__(self, context: Any, host: PluginHost, actx: AdapterContext) -> None:
        self.inbox = context.Queue()
        self.conn, theirs = context.Pipe(duplex=False)
        self.process = context.Process(target=_serve, args=(self.inbox, theirs, host, actx), daemon=True)
        self.process.start()
        theirs.close()
        self.pending: dict[int, str] = {}  #: index → session
        self.tasks = 0  #: tasks sent that it has not reported landed
        self._asked_to_end = False

    def send(self, task: list[tuple[int, SessionClaim]]) -> None:
        self.inbox.put(task)
        self.tasks += 1
        self.pending.update((index, claim.session) for index, claim in task)

    def free(self) -> bool:
        """Whether it may be sent another task: fewer than :data:`_TASKS_AHEAD` waiting, and
        room for its claims among those it has not reported."""
        return self.tasks < _TASKS_AHEAD and len(self.pending) < _MOST_PENDING

    def holding(self) -> bool:
        """Whether it has landed every task it was sent and holds sessions not committed."""
        return not self.tasks and bool(self.pending)

    def ask_to_end(self) -> None:
        """Ask it to commit what it holds and end, without waiting for it (:meth:`stop` waits)."""
        if not self._asked_to_end and self.process.is_alive():
            self.inbox.put(None)
            self._asked_to_end = True

    def stop(self) -> None:
        """Let it commit what it holds and end (or end it, if it does not)."""
        if self.process.is_alive():
            self.ask_to_end()
            self.process.join(timeout=60)
            if self.process.is_alive():
                self.process.kill()
                self.process.join()
        self.inbox.cancel_join_thread()  # nothing is left for a process that ended to read
        self.inbox.close()
        self.conn.close()


def _import_landing(host: PluginHost, adapter: str) -> None:
    """Import what the adapter's landing imports as it first runs
    (``AdapterInfo.landing_modules``), once, in the pass: its workers are forked with it. One
    that does not import fails each session's landing in the workers, as it would without this."""
    info = host.adapter(adapter).info
    for name in info.landing_modules if info is not None else ():
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def land_in_workers(host: PluginHost, actx: AdapterContext, claims: Iterable[SessionClaim],
                    workers: int) -> Iterator[SessionOutcome]:
    """Land ``claims`` in ``workers`` forked processes and yield each one's outcome, in the order
    of ``claims``. Claims are taken from ``claims`` as workers free up; at most a few groups'
    worth of them are sent and not merged at a time."""
    import multiprocessing
    from multiprocessing.connection import wait

    _import_landing(host, actx.name)
    ready_to_fork()
    context = multiprocessing.get_context("fork")
    upcoming = _largest_first(enumerate(claims))
    done: dict[int, SessionOutcome] = {}
    sent = merged = 0  # claims sent to a worker (or lost), and yielded, in claim order
    landed, seconds = 0, 0.0  # claims reported, and the seconds they took: how many a task holds
    # never less than a block ordered at a time: the next claim to merge may be its block's last
    # sent, and the pass must be able to send it
    most_unmerged = max(workers * _UNMERGED_PENDINGS * _MOST_PENDING, _ORDERED_AHEAD)
    alive = [_Process(context, host, actx) for _ in range(workers)]

    def died(worker: _Process) -> None:
        for index, session in worker.pending.items():
            done[index] = _lost(session, _DIED)
        worker.pending.clear()
        alive.remove(worker)
        worker.stop()

    try:
        more = True
        while True:
            while more and alive and sent - merged < most_unmerged:
                worker = min(alive, key=lambda w: (w.tasks, len(w.pending)))  # the one with least to do
                if not worker.free():
                    break
                task = list(islice(upcoming, _per_task(seconds, landed)))
                if not task:
                    more = False
                    break
                worker.send(task)
                sent += len(task)
            for worker in alive:  # one that is sent nothing now commits what it holds
                if worker.holding():
                    worker.send(_COMMIT)
            if more and not alive:  # every worker died: what is left is lost, as it would be
                for index, claim in upcoming:
                    done[index] = _lost(claim.session, _DIED)
                    sent += 1
                more = False
            while merged in done:
                yield done.pop(merged)
                merged += 1
            if not more and merged == sent:
                return
            # a worker that has reported every claim may still owe the report of a task it ended
            busy = [worker for worker in alive if worker.pending or worker.tasks]
            if not busy:  # every claim sent is merged: send the next
                continue
            ready = wait([w.conn for w in busy] + [w.process.sentinel for w in busy])
            for worker in busy:
                if worker.conn not in ready and worker.process.sentinel not in ready:
                    continue
                try:
                    while worker.conn.poll():
                        report: _Report = worker.conn.recv()
                        if report.finished:
                            worker.tasks -= 1
                            landed += report.landed
                            seconds += report.seconds
                        for index, outcome in report.outcomes:
                            done[index] = outcome
                            worker.pending.pop(index, None)
                except (EOFError, OSError):
                    died(worker)
                    continue
                if worker.process.sentinel in ready and not worker.process.is_alive():
                    died(worker)
    finally:
        _end_all(alive)


def _end_all(workers: list[_Process]) -> None:
    """Let every worker commit what it holds and end: each is asked before any is waited for, so
    they commit and end side by side (asked in turn, each once the one before had ended, the pass
    waited for their ends one after the other)."""
    for worker in workers:
        worker.ask_to_end()
    for worker in workers:
        worker.stop()
