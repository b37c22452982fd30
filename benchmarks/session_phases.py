"""Where a new session's CPU goes: one pass in this process, its per-session seams timed.

The ``many-small`` row of ``pass.py --table`` is 2,000 new sessions of about 17 lines each, and
most of its CPU is what a session costs whatever its lines hold. This script says where that
goes, seam by seam, so a change to the per-session path is aimed before it is made:

1. the sessions are ``corpus.py``'s ``many-small`` (generated into ``--work`` once, by the
   table's own ``table_corpus``), each transcript cut to its first ``--lines`` lines (default 2,
   so the lines' own work is small; 0 keeps them whole) into ``--work/first-N``, every session
   new to the root, landed with the table's configuration (``land_config``);
2. one pass lands them with ``collector.workers: 1`` in this process, with the functions a
   session's landing goes through wrapped: each call's thread CPU (user and system: this
   filesystem's creates are part of a seam's cost) is summed per seam. A wrapper costs about a
   microsecond of its own, counted in the seams around it;
3. each round lands into a new root under ``--work/roots``, never deleted while the script runs
   (a deletion makes the next creates dearer for minutes: ``create_cost.py``); this run's roots
   go at the end, so a run right after another meets that deletion (wait a few minutes);
4. printed: microseconds a session for each seam, indented as they nest, the medians of
   ``--rounds`` rounds, beside the whole pass's CPU a session.

``session_syscalls.py`` gives the same sessions' system calls alone, with no asz code, and
``composed_landing.py`` the same sessions landed to the same bytes with asz's per-line code and
nothing around it, step by step: the difference is the Python around them.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import gc
import importlib
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
#: ``pass.py`` (a keyword, so imported by name): the table's corpus and its configuration
bench_pass = importlib.import_module("pass")

#: the seams timed, as they nest in a new session's landing: (depth, module, attribute, label);
#: an attribute with a dot is a class's method
SEAMS = [
    (0, "asz_core.land", "land_claim", "land_claim: one session, start to group"),
    (1, "asz_core.host", "PluginHost.new_session", "the adapter names its source (asz_new_session)"),
    (1, "asz_core.collect.fresh", "_convert", "the source read, its lines converted"),
    (1, "asz_core.collect.fresh", "_make", "the session's directory, lock and place"),
    (1, "asz_core.collect.fresh", "NewSession.write", "the file written, the cursor made"),
    (0, "asz_core.collect.fresh", "NewSession.install_queued", "group: files renamed"),
    (0, "asz_core.collect.fresh", "NewSession.write_queued_states", "group: cursors' copies written"),
    (0, "asz_core.collect.fresh", "NewSession.move_queued_states", "group: cursors renamed"),
    (0, "asz_core.collect.fresh", "NewSession.release_after_commit", "the settled entry, the session let go"),
    (0, "asz_core.pipeline", "_merge", "the pass merges the outcome"),
]


def cut_corpus(projects: Path, lines: int, out: Path) -> Path:
    """``projects``' main transcripts, each cut to its first ``lines`` lines, under ``out``
    (made once); subagent transcripts are left out, so each session has one source."""
    if not (out / ".done").is_file():
        shutil.rmtree(out, ignore_errors=True)
        for path in sorted(projects.glob("*/*.jsonl")):
            target = out / path.relative_to(projects)
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "rb") as f:
                kept = [f.readline() for _ in range(lines)]
            target.write_bytes(b"".join(kept))
        (out / ".done").touch()
    return out


@contextlib.contextmanager
def timed_seams() -> Iterator[tuple[collections.Counter[str], collections.Counter[str]]]:
    """Each of :data:`SEAMS` wrapped where its callers look it up, for as long as this lasts:
    the nanoseconds of thread CPU it took and the calls it had, by label."""
    spent: collections.Counter[str] = collections.Counter()
    calls: collections.Counter[str] = collections.Counter()
    clock = time.thread_time_ns
    undo: list[tuple[Any, str, Any]] = []
    for _, module_name, attribute, label in SEAMS:
        owner: Any = importlib.import_module(module_name)
        *classes, name = attribute.split(".")
        for cls in classes:
            owner = getattr(owner, cls)
        timed = getattr(owner, name)

        def wrapper(*args: Any, _timed: Callable[..., Any] = timed, _label: str = label, **kwargs: Any) -> Any:
            started = clock()
            try:
                return _timed(*args, **kwargs)
            finally:
                spent[_label] += clock() - started
                calls[_label] += 1

        undo.append((owner, name, owner.__dict__[name]))
        setattr(owner, name, wrapper)
    try:
        yield spent, calls
    finally:
        for owner, name, original in reversed(undo):
            setattr(owner, name, original)


def land_once(config: Path, spent: collections.Counter[str],
              started_ns: int | None = None) -> tuple[float, int, dict[str, float]]:
    """One pass of ``config`` in this process: its thread CPU, the sessions it landed, and each
    seam's thread CPU in it (seconds), from ``spent`` as :func:`timed_seams` sums it.
    ``started_ns``: the pass's start as its files are named (the clock's first reading), so
    another landing can be given the same stamp before it."""
    from asz_core.config import load_config
    from asz_core.host import PluginHost
    from asz_core.pipeline import run_pass

    host = PluginHost().load_entry_points()
    loaded = load_config(host, str(config))
    gc.collect()
    before = dict(spent)
    started = time.thread_time()
    readings = [] if started_ns is None else [started_ns]  # the first reading, then the real clock
    summary = run_pass(host, loaded, clock=lambda: readings.pop() if readings else time.time_ns()).as_dict()
    cpu = time.thread_time() - started
    return cpu, int(summary["sessions"]), {k: (spent[k] - before.get(k, 0)) / 1e9 for k in spent}


def write_config(path: Path, root: Path, projects: Path, workers: int = 1) -> Path:
    """A configuration landing ``projects`` into ``root`` in ``workers`` processes (one: the
    pass's own), nothing else on: the table's own (``pass.land_config``)."""
    return Path(bench_pass.land_config(path, root, {"claude-code-local": projects}, workers))


def parser(description: str) -> argparse.ArgumentParser:
    """The command line of the scripts that land these sessions (this one,
    ``composed_landing.py``, ``session_instructions.py``): ``--work`` and ``--lines``."""
    made = argparse.ArgumentParser(description=description)
    made.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "asz-session-phases",
                      help="where the corpus is generated and the roots land (kept between runs)")
    made.add_argument("--lines", type=int, default=2, help="lines kept of each transcript (0: all)")
    return made


def options(description: str) -> argparse.Namespace:
    """:func:`parser`'s command line and ``--rounds``, for the scripts that time rounds."""
    made = parser(description)
    made.add_argument("--rounds", type=int, default=3)
    return made.parse_args()


def sessions_and_roots(args: argparse.Namespace) -> tuple[Path, Path]:
    """The sessions ``args`` ask for (``many-small``'s, cut to ``--lines``) and a new directory
    for this run's roots, which the caller removes once it is done."""
    projects = bench_pass.table_corpus("many-small", args.work)
    if args.lines:
        projects = cut_corpus(projects, args.lines, args.work / f"first-{args.lines}")
    roots = args.work / "roots" / str(time.time_ns())  # this run's: another's are not deleted here
    roots.mkdir(parents=True)
    return projects, roots


def main() -> None:
    args = options(__doc__.splitlines()[0])
    projects, roots = sessions_and_roots(args)
    rounds: list[tuple[float, int, dict[str, float]]] = []
    try:
        with timed_seams() as (spent, _):
            for n in range(args.rounds + 1):  # the first warms the caches and is not counted
                config = write_config(roots / f"asz-{n}.yaml", roots / str(n), projects)
                landed = land_once(config, spent)
                if n:
                    rounds.append(landed)
    finally:
        shutil.rmtree(roots, ignore_errors=True)
    sessions = rounds[0][1]
    whole = statistics.median(cpu for cpu, _, _ in rounds) / sessions * 1e6
    kept = f"the first {args.lines} lines of each transcript" if args.lines else "whole transcripts"
    print(f"{sessions:,} new sessions ({kept}), one process, medians of {args.rounds} rounds: "
          f"the pass {whole:.0f} µs of CPU a session")
    for depth, _, _, label in SEAMS:
        each = statistics.median(seams.get(label, 0.0) for _, _, seams in rounds) / sessions * 1e6
        print(f"{each:8.1f} µs  {'  ' * depth}{label}")


if __name__ == "__main__":
    main()
