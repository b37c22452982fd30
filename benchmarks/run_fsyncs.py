"""A user's cold ``asz-pipeline run``, phase by phase: its fsyncs and system calls per session,
and its CPU and wall time, for the landing, the metrics derivation and the parse.

    python benchmarks/run_fsyncs.py shared            # the shared corpus, all three adapters
    python benchmarks/run_fsyncs.py /tmp/ms           # a corpus written by corpus.py
    python benchmarks/run_fsyncs.py shared --times 3  # CPU and wall per phase, 3 cold runs

Every run lands into a new root with the default configuration a user has (every adapter on,
default workers, the derivation on, the parse at its end). The system calls, and the time spent
in the sync calls, come from ``strace -f -y -ttt -T`` of one run, split into phases where the
run reads its logs: the derivation starts when it reads ``.metrics-owed``, the parse when it
reads ``.parse-owed``. The times come from runs without strace, in process, measured at the same
two points (``os.times``, the workers' CPU included once they are reaped).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from _common import corpus as shared_corpus

PHASES = ("start-up and landing", "metrics derivation", "parse")
OWED = "of which the owed logs"  #: the calls on ``.parse-owed``, ``.metrics-owed`` and their copies
SYNCS = ("fsync", "fdatasync", "syncfs")
WAITED = " waited"  #: not a call: microseconds spent in the sync calls
_CALL = re.compile(r"^(?:\d+\s+)?[\d.]+\s+(?:<\.\.\. )?(\w+)(\(| resumed>)(.*)$")
_TOOK = re.compile(r"<([\d.]+)>$")
_READ_OPEN = re.compile(r'^[^,]*, "([^"]*)", (?:\{flags=)?O_RDONLY')

#: in process: the run as its command runs it, the clock read where the derivation and the parse
#: begin and end (both are imported by the pass when it reaches them, so patching them here
#: changes nothing else)
IN_PROCESS = """
import json, os, sys, time
import asz_core.metrics.step as step
import asz_core.cli.commands.parse_cmd as parse_cmd
marks = []
def mark(what):
    t = os.times()
    marks.append((what, t.user + t.system + t.children_user + t.children_system, time.perf_counter()))
def timed(name, fn):
    def wrapper(*args, **kwargs):
        mark(name)
        try:
            return fn(*args, **kwargs)
        finally:
            mark("end " + name)
    return wrapper
step.derive_in_pass = timed("metrics derivation", step.derive_in_pass)
parse_cmd.parse_and_report = timed("parse", parse_cmd.parse_and_report)
mark("start")
from asz_core.cli import main
sys.argv = ["asz-pipeline", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
mark("end")
print(json.dumps(marks), file=sys.stderr)
"""


def sources(corpus: str) -> dict[str, Path]:
    base = shared_corpus() if corpus == "shared" else Path(corpus)
    if corpus == "shared":
        found = {"claude-code-local": base / "claude-code" / "projects",
                 "claude-code-provider": base / "provider-bodies", "kiro": base / "kiro" / ".kiro"}
    else:
        found = {"claude-code-local": base / ".claude" / "projects",
                 "claude-code-provider": base / "provider-bodies", "kiro": base / ".kiro"}
    return {name: path for name, path in found.items() if path.is_dir()}


def write_config(path: Path, root: Path, adapters: dict[str, Path], workers: int | None) -> None:
    entries: list[dict[str, object]] = []
    for name, source in adapters.items():
        entries.append({"name": name, "source_root": str(source), "exclude": []})
        if workers is not None:
            entries[-1]["collector"] = {"workers": workers}
    entries.append({"name": "changes", "enabled": False})  # no plugin output in these corpora
    path.write_text(json.dumps({"storage": {"root": str(root)}, "adapters": entries}), "utf-8")


def sessions_of(root: Path) -> int:
    return sum(1 for p in root.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))


def traced(config: Path, trace: Path) -> dict[str, Counter[str]]:
    """System calls by phase, from one traced run."""
    exe = Path(sys.executable).with_name("asz-pipeline")
    subprocess.run(["strace", "-f", "-y", "-ttt", "-T", "-o", str(trace), str(exe), "run", "--config", str(config)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    by_phase = {phase: Counter[str]() for phase in (*PHASES, OWED)}
    phase = 0
    for line in trace.read_text("utf-8", "replace").splitlines():
        m = _CALL.match(line)
        if m is None or m.group(2) != "(":  # a resumed call was counted where it started
            continue
        name = m.group(1)
        opened = _READ_OPEN.match(m.group(3)) if name in ("openat", "openat2") else None
        if opened is not None and opened.group(1).endswith(".metrics-owed") and phase == 0:
            phase = 1
        elif opened is not None and opened.group(1).endswith(".parse-owed") and phase <= 1:
            phase = 2
        waited = _TOOK.search(line) if name in SYNCS else None
        for where in (PHASES[phase], OWED) if "-owed" in line else (PHASES[phase],):
            by_phase[where][name] += 1
            if waited is not None:  # microseconds in the sync calls, a count's unit
                by_phase[where][WAITED] += round(float(waited.group(1)) * 1e6)
    return by_phase


def timed(config: Path) -> dict[str, tuple[float, float]]:
    """CPU and wall seconds by phase, from one run in process."""
    done = subprocess.run([sys.executable, "-c", IN_PROCESS, "run", "--config", str(config)], check=True,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    marks = {what: (cpu, wall) for what, cpu, wall in json.loads(done.stderr.strip().splitlines()[-1])}
    start, derive, parse, end = (marks["start"], marks.get("metrics derivation"), marks["parse"], marks["end"])
    derive = derive or marks["parse"]
    derived = marks.get("end metrics derivation", derive)
    return {PHASES[0]: (derive[0] - start[0], derive[1] - start[1]),
            PHASES[1]: (derived[0] - derive[0], derived[1] - derive[1]),
            PHASES[2]: (marks["end parse"][0] - parse[0], marks["end parse"][1] - parse[1]),
            "whole run": (end[0] - start[0], end[1] - start[1])}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", help="'shared', or a directory written by corpus.py")
    parser.add_argument("--workers", type=int, default=None, help="collector.workers (default: unset)")
    parser.add_argument("--times", type=int, default=0, help="cold runs timed without strace")
    parser.add_argument("--no-strace", action="store_true")
    args = parser.parse_args()
    adapters = sources(args.corpus)
    with tempfile.TemporaryDirectory(prefix="asz-run-fsyncs-") as scratch:
        work = Path(scratch)
        config = work / "asz.yaml"
        if not args.no_strace and shutil.which("strace"):
            write_config(config, work / "root-traced", adapters, args.workers)
            phases = traced(config, work / "trace.txt")
            sessions = sessions_of(work / "root-traced")
            print(f"{args.corpus}: {sessions} sessions, {', '.join(adapters)}")
            print(f"{'phase':<22} {'calls':>8} {'fsync':>6} {'syncfs':>6} {'rename':>6} {'opens':>6}"
                  f" {'calls/s.':>8} {'syncs/s.':>8} {'in syncs':>9}")
            total: Counter[str] = Counter()
            for phase, calls in [*phases.items(), ("whole run", total)]:
                if phase in PHASES:
                    total.update(calls)
                n = sum(count for call, count in calls.items() if call != WAITED)
                syncs = sum(calls[c] for c in SYNCS)
                renames = sum(calls[c] for c in ("rename", "renameat", "renameat2"))
                opens = calls["openat"] + calls["openat2"]
                print(f"{phase:<22} {n:>8} {calls['fsync'] + calls['fdatasync']:>6} {calls['syncfs']:>6}"
                      f" {renames:>6} {opens:>6} {n / sessions:>8.1f} {syncs / sessions:>8.3f}"
                      f" {calls[WAITED] / 1e6:>7.2f} s")
        for n in range(args.times):
            write_config(config, work / f"root-{n}", adapters, args.workers)
            phases_t = timed(config)
            print(f"run {n + 1}: " + "; ".join(f"{phase} {cpu:.2f} s CPU / {wall:.2f} s"
                                              for phase, (cpu, wall) in phases_t.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
