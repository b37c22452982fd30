"""Where the wall of a landing with workers goes: the pass's start, each process's CPU, the idle CPUs.

The ``many-small`` row of ``pass.py --table`` (2,000 new sessions, default workers) has been short
of its target by a few per cent of its wall, and no one step of a pass is that large. Its wall is
what two CPUs did from the pass's start to its end, so this script says what they did, each part
timed where it happens, so that a change is aimed at a share that is there:

1. the sessions are ``many-small``'s (or ``--corpus``, another of the table's corpora: ``shared``,
   ``shared-x10``), whole transcripts as the table lands them (``--lines`` cuts them:
   ``session_phases.cut_corpus``), landed with the table's configuration and default workers
   (``--workers`` sets a number), each round into a root never used (the last one moved aside, so
   the configuration is read from its cache, as in the table), by a child process that lands as
   the table's does (``children.py land``) with the marks below;
2. in the child, the pass's steps around its workers are wrapped (:data:`STEPS`) to say when it
   reached them, in ms of wall from the moment the harness started the child: the configuration
   read, discovery done and the claims looked ahead, ``multiprocessing`` and the landing's modules
   imported, each worker forked, the first task sent, the last outcome merged, the pass done (and,
   from what follows, the first and the last worker's end, and the child's exit as the harness
   sees it);
3. each worker, as it ends, says its CPU, its time runnable but waiting for a CPU and its time
   blocked (``/proc/self/schedstat``: the disk's waits, the queue's) and its minor faults; the
   pass says its own CPU, before its workers start and over their landing, its main thread apart
   from its other threads (the queues' feeder threads, which pickle and send the tasks);
4. meanwhile the harness reads ``/proc/stat`` every 10 ms and splits the time the CPUs were idle
   by phase: the start (to the first fork), the landing (to the last worker's end) and the end;
5. printed: the medians of ``--rounds`` rounds (after one not counted) of each mark, each
   process's figures and the CPUs' budget; with ``--vs PYTHON`` (another build's interpreter)
   the two builds' landings take turns in each round, and each build's medians are printed. The
   roots go at the end, as ``session_phases.py``'s do.

Linux only (``/proc``). ``session_phases.py`` says where a session's own CPU goes, seam by seam.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

# The child imports what ``children.py land`` imports and asz, nothing of the harness: its start
# is part of what it times. The harness's modules are imported where the harness uses them.
sys.path.insert(0, str(Path(__file__).resolve().parent))

#: the pass's steps marked in the child: (module, attribute, the mark made as it is entered, as
#: it returns); a wrapper costs a few microseconds, once per pass
STEPS = (
    ("asz_core.config", "load_config", None, "configuration read"),
    ("asz_core.pipeline", "_processes", "discovered (the claims begin)", "claims looked ahead"),
    ("asz_core.workers", "_import_landing", "multiprocessing imported", "landing's modules imported"),
)
#: the CPUs' states ``/proc/stat`` counts as idle (the columns ``idle`` and ``iowait``)
_IDLE = (3, 4)
#: one landing's figures, as :func:`one_landing` gathers them
Landing = dict[str, Any]


def _marked(mark: Callable[[str], None], label_in: str | None, label_out: str | None,
            function: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if label_in:
            mark(label_in)
        result = function(*args, **kwargs)
        if label_out:
            mark(label_out)
        return result
    return wrapper


def child(config: str, started_ns: int, report: str) -> None:
    """The child: ``children.py land`` of ``config`` with the pass's steps marked and every
    process's figures appended to ``report``, one JSON object a line (step 2 and 3)."""
    import importlib
    import resource

    import children

    import asz_core.pipeline as pipeline
    import asz_core.workers as workers

    marks: list[tuple[str, float]] = []

    def mark(label: str) -> None:
        marks.append((label, (time.time_ns() - started_ns) / 1e6))

    def append(figures: dict[str, Any]) -> None:
        with open(report, "a", encoding="utf-8") as out:
            out.write(json.dumps(figures) + "\n")

    for module, attribute, label_in, label_out in STEPS:
        owner = importlib.import_module(module)
        setattr(owner, attribute, _marked(mark, label_in, label_out, getattr(owner, attribute)))

    process_init, send, serve = workers._Process.__init__, workers._Process.send, workers._serve
    land_in_workers = workers.land_in_workers  # the pass calls it by the name it imported

    def forked(self: Any, *args: Any, **kwargs: Any) -> None:
        process_init(self, *args, **kwargs)
        mark("a worker forked")

    def sent(self: Any, task: Any) -> None:
        if not any(label == "first task sent" for label, _ in marks):
            mark("first task sent")
        send(self, task)

    def served(*args: Any, **kwargs: Any) -> None:
        begun = time.perf_counter()
        try:
            serve(*args, **kwargs)
        finally:
            cpu, waiting, _ = (int(n) for n in Path("/proc/self/schedstat").read_text().split())
            wall = time.perf_counter() - begun
            append({"worker": True, "wall": wall, "cpu": cpu / 1e9, "waiting": waiting / 1e9,
                    "faults": resource.getrusage(resource.RUSAGE_SELF).ru_minflt,
                    "ended": (time.time_ns() - started_ns) / 1e6})

    pass_cpu: dict[str, float] = {}

    def landed(*args: Any, **kwargs: Any) -> Iterator[Any]:
        pass_cpu["before"] = time.process_time()
        thread, process = time.thread_time(), time.process_time()
        yield from land_in_workers(*args, **kwargs)
        pass_cpu["main"] = time.thread_time() - thread
        pass_cpu["threads"] = time.process_time() - process - pass_cpu["main"]
        mark("last outcome merged")

    workers._Process.__init__ = forked  # type: ignore[method-assign]
    workers._Process.send = sent  # type: ignore[method-assign]
    workers._serve = served
    pipeline.land_in_workers = landed  # type: ignore[attr-defined]
    children.land(config)
    mark("pass done")
    append({"worker": False, "marks": marks, "cpu": time.process_time(), **pass_cpu})


def _idle_by_phase(samples: list[tuple[float, int, int]], bounds: list[float]) -> list[float]:
    """The share of the CPUs' time idle in each phase between ``bounds`` (ms from the child's
    start), from ``/proc/stat`` ``samples`` ``(ms, idle jiffies, all jiffies)``: each phase
    from the last sample at or before its start to the first at or after its end."""
    shares = []
    for start, end in itertools.pairwise(bounds):
        before = max((s for s in samples if s[0] <= start), default=samples[0])
        after = min((s for s in samples if s[0] >= end), default=samples[-1])
        total = after[2] - before[2]
        shares.append(100 * (after[1] - before[1]) / total if total else 0.0)
    return shares


def _stat() -> tuple[int, int]:
    with open("/proc/stat", encoding="ascii") as f:
        fields = [int(n) for n in f.readline().split()[1:]]
    return sum(fields[i] for i in _IDLE), sum(fields)


def one_landing(config: Path, report: Path, python: str = sys.executable) -> Landing:
    """The child run once (step 2) by ``python``, ``/proc/stat`` read meanwhile (step 4): its
    marks, its processes' figures, its wall and its CPU (the pass's and its workers'), and the
    CPUs' idle share by phase."""
    import subprocess
    import threading

    import session_phases  # found on the path given above: ``pass.py``, its children's environment

    report.unlink(missing_ok=True)
    samples: list[tuple[float, int, int]] = [(0.0, *_stat())]
    started_ns = time.time_ns()
    child_process = subprocess.Popen([python, __file__, "child", str(config), str(started_ns), str(report)],
                                     stdout=subprocess.DEVNULL, env=session_phases.bench_pass.child_env())
    ended = threading.Event()

    def sample() -> None:  # in a thread of its own, so the child's end is seen as it happens
        while not ended.wait(0.01):
            samples.append(((time.time_ns() - started_ns) / 1e6, *_stat()))

    sampler = threading.Thread(target=sample)
    sampler.start()
    child_process.wait()
    wall = (time.time_ns() - started_ns) / 1e6
    ended.set()
    sampler.join()
    samples.append((wall, *_stat()))
    if child_process.returncode:
        raise SystemExit(f"the landing failed (exit {child_process.returncode})")
    reports = [json.loads(line) for line in report.read_text("utf-8").splitlines()]
    the_pass = next(r for r in reports if not r["worker"])
    workers = [r for r in reports if r["worker"]]
    marks: dict[str, float] = {}
    for label, at in the_pass["marks"]:  # the first of each label (each worker forked: the first)
        marks.setdefault(label, at)
    forks = [at for label, at in the_pass["marks"] if label == "a worker forked"]
    marks["last worker forked"] = forks[-1]
    marks["first worker ended"] = min(w["ended"] for w in workers)
    marks["last worker ended"] = max(w["ended"] for w in workers)
    marks["process exited"] = wall
    bounds = [0.0, forks[0], marks["last worker ended"], wall]
    return {"marks": marks, "pass": the_pass, "workers": workers, "wall": wall, "idle": _idle_by_phase(samples, bounds),
            "phases": [end - start for start, end in itertools.pairwise(bounds)]}


def _median(values: list[float]) -> float:
    import statistics

    return statistics.median(values) if values else float("nan")


def summary(landings: list[Landing]) -> str:
    """Step 5: the medians of ``landings``' figures, as three tables and the budget's line."""
    from _common import table

    at = {label: _median([m["marks"][label] for m in landings if label in m["marks"]])
          for label in landings[0]["marks"]}
    marks = [(label, f"{ms:.1f}") for label, ms in sorted(at.items(), key=lambda item: item[1])]
    workers = [w for m in landings for w in m["workers"]]
    passes = [m["pass"] for m in landings]

    def ms(values: list[float]) -> str:
        return f"{_median(values) * 1e3:.0f}"

    processes = [
        ("the pass, before its workers start", ms([p["before"] for p in passes]), "", "", ""),
        ("the pass's main thread, over the landing", ms([p["main"] for p in passes]), "", "", ""),
        ("the pass's other threads, over the landing", ms([p["threads"] for p in passes]), "", "", ""),
        (f"a worker ({len(workers) // len(landings)} a landing)", ms([w["cpu"] for w in workers]),
         ms([w["waiting"] for w in workers]), ms([w["wall"] - w["cpu"] - w["waiting"] for w in workers]),
         f"{_median([w['faults'] for w in workers]):.0f}"),
    ]
    names = ("the start (to the first fork)", "the landing (to the last worker's end)", "the end")
    budget = [(name, f"{_median([m['phases'][i] for m in landings]):.0f}",
               f"{_median([m['idle'][i] for m in landings]):.1f}") for i, name in enumerate(names)]
    cpus = len(os.sched_getaffinity(0))
    busy = [(m["pass"]["cpu"] + sum(w["cpu"] for w in m["workers"])) * 1e3 for m in landings]  # ms
    share = [b / (m["wall"] * cpus) * 100 for b, m in zip(busy, landings, strict=True)]
    return "\n\n".join([
        table(marks, ["the pass reached", "ms from its start"]),
        table(processes, ["process", "CPU ms", "waiting for a CPU ms", "blocked ms", "minor faults"]),
        table(budget, ["phase", "ms", f"idle % of {cpus} CPUs"]),
        f"wall {_median([m['wall'] for m in landings]):.0f} ms; the pass's and its workers' CPU "
        f"{_median(busy):.0f} ms, {_median(share):.1f} % of {cpus} CPUs over the wall",
    ])


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        child(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        return
    import shutil

    import session_phases  # the sessions, the command line; ``pass.py``: the table's configuration

    bench_pass = session_phases.bench_pass
    made = session_phases.parser(__doc__.splitlines()[0])
    made.add_argument("--corpus", default="many-small", choices=("many-small", "shared", "shared-x10"),
                      help="the table's corpus to land (default: many-small)")
    made.add_argument("--rounds", type=int, default=5)
    made.add_argument("--workers", type=int, help="collector.workers (default: the default's number)")
    made.add_argument("--vs", metavar="PYTHON", help="another build's interpreter: its landings take turns with "
                                                     "this one's, each printed apart")
    made.set_defaults(lines=0)
    args = made.parse_args()
    projects = bench_pass.table_corpus(args.corpus, args.work)
    if args.lines:
        projects = session_phases.cut_corpus(projects, args.lines, args.work / f"first-{args.lines}-{args.corpus}")
    roots = args.work / "roots" / str(time.time_ns())  # this run's: another's are not deleted here
    roots.mkdir(parents=True)
    pythons = [sys.executable, *([args.vs] if args.vs else [])]
    landings: dict[str, list[Landing]] = {python: [] for python in pythons}
    # one configuration a build, its root moved aside before each landing (``pass._fresh``): the
    # same path each time, so the configuration is validated once and read from its cache after,
    # as the table's landings read theirs
    configs = {python: bench_pass.land_config(roots / f"asz-{k}.yaml", roots / f"root-{k}",
                                              {"claude-code-local": projects}, args.workers)
               for k, python in enumerate(pythons)}
    try:
        for n in range(args.rounds + 1):  # the first warms the caches and is not counted
            for k in bench_pass.rotated(range(len(pythons)), n):  # round n starts with build n, as the table's
                python = pythons[k]
                bench_pass._fresh(roots / f"root-{k}", roots / "used")
                landed = one_landing(configs[python], roots / f"report-{n}-{k}.jsonl", python)
                if n:
                    landings[python].append(landed)
    finally:
        shutil.rmtree(roots, ignore_errors=True)
    kept = f"the first {args.lines} lines of each transcript" if args.lines else "whole transcripts"
    for python, its in landings.items():
        print(f"{python}: {len(its)} landings of {args.corpus} ({kept}) with workers, medians:\n")
        print(summary(its) + "\n")


if __name__ == "__main__":
    main()
