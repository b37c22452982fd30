"""A pass of asz beside its floors and beside the peer a user would run instead, in one run.

    python benchmarks/pass.py                          # the 10mb preset, made in a temporary directory
    python benchmarks/pass.py --preset many-small      # any preset of corpus.py
    python benchmarks/pass.py --corpus DIR             # a corpus corpus.py wrote (made there if absent)
    python benchmarks/pass.py --profile                # cProfile of one cold pass instead
    python benchmarks/pass.py --table --readme README.md   # issue 21's table, written into the README

Every figure is the median of ``--repeat`` runs (default 5) after one warm-up run, and every run
is its own process, so its peak RSS is known (``ru_maxrss`` from ``wait4``, that child and any
process it waited for, such as worker processes; see :data:`LAUNCHER` for why children are
started from a bare launcher):

* **floor**: read every source file, and for every line ``orjson.loads`` and SHA-256: what any
  reader of these files must do. Timed inside its process, as the cold pass is;
* **write floor**: the cold pass's landed files copied, each into a directory of its own, with
  the writes any durable landing makes (a temporary file written in 1 MiB chunks, its
  ``fsync``, the rename, the directory's ``fsync``): what writing the landed bytes costs on this
  disk, nothing else. The floor and the write floor added up are the most a pass in one process
  could do (nothing converted, encoded or checked): the ceiling the cold pass is set beside;
* **cold pass**: ``asz-pipeline run`` into an empty root (every landed file and state durable),
  timed inside the pass (its ``elapsed_s``) and as a whole process, start-up included (a source
  with more than 65 files to land is ``pending`` after one pass, as the spec says: the cold pass
  is then the passes it takes, added up); and again
  with ``collector.workers`` (``--workers``, default the CPUs up to 4) so claude-code-local's
  sessions land in that many processes (its peak RSS: the largest of the pass and its workers);
* **no-op pass**: ``asz-pipeline run`` again, nothing new, whole process, beside a Python process
  that only lists the source directories and stats every file in them: every adapter runs over
  the settled sessions;
* **incremental pass**: after ``corpus.py grow`` appends 1 % (whole lines, to 5 % of the
  sessions), ``asz-pipeline run``, beside the floor of just the appended bytes;
* **claude-code-log** (PyPI), the peer: ``--all-projects`` over the same transcripts to HTML,
  first with an empty cache, then again with nothing new. It is installed into ``.venv-peer/``
  (never a dependency of asz); when it cannot be installed or run, the table says why.

Each row says its seconds, MB/s of source, peak RSS, and its ratio to what it stands beside,
with the target of issue 9 where there is one. Children run without ``PYTHONDONTWRITEBYTECODE``
so that, as after a ``pip install``, modules load from compiled bytecode.
"""

from __future__ import annotations

import argparse
import cProfile
import itertools
import json
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus as corpus_gen
from _common import REPO, table

from asz_core.workers import DECIDED_BY, DEFAULT_FROM_SESSIONS, default_workers

if TYPE_CHECKING:
    from quiet import Quiet, Settling
    from table_report import TableReport

MB = 1_000_000
ADAPTERS = ("claude-code-local", "claude-code-provider", "kiro")
#: the generated corpora hold no plugin output, and a benchmark must not read this machine's own
NO_PLUGIN_DATA: dict[str, object] = {"name": "changes", "enabled": False}
#: the measured children (the floor, the write floor, a landing), each importing only its own work
CHILDREN = Path(__file__).resolve().with_name("children.py")
PEER_VENV = REPO / ".venv-peer"
PEER = "claude-code-log"
T = TypeVar("T")


# ---- what runs in a child process ----------------------------------------------------------
# The floor, the write floor and the landing run in ``children.py``, which imports only what each
# needs (what a child imports is part of what it measures); the stat-only process is this script:

STAT_PROCESS = """
import os, sys
def walk(d):
    for e in os.scandir(d):
        if e.is_dir(follow_symlinks=False):
            walk(e.path)
        else:
            os.stat(e.path)
for root in sys.argv[1:]:
    walk(root)
"""


# ---- children ----------------------------------------------------------------------------


@dataclass
class Run:
    wall: float       #: seconds, the whole process
    inner: float      #: seconds the process says its work took (the wall when it says nothing)
    rss: float        #: MB, peak resident set of that process (and of any process it waited for)
    out: str
    code: int
    cpu: float = 0.0  #: seconds of CPU (user + system) of that process and any it waited for


#: asz's cache of entry points and validated configurations for the children (``XDG_CACHE_HOME``):
#: one of the run's own, since the user's keeps only 64 entries and test runs elsewhere on the
#: machine evict them, which would make every measured start-up pay ``importlib.metadata`` again
_cache_home: Path | None = None


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if _cache_home is not None:
        env["XDG_CACHE_HOME"] = str(_cache_home)
    return env


# Linux keeps a process's peak RSS across exec, and a child made by fork or vfork starts from its
# parent's: ``getrusage`` of a child of this script would report at least this script's own peak
# (40 MB and more once it has read the corpus). So every child is started by this launcher, a
# bare interpreter (``-S -I``, about 8 MB) started first, with ``posix_spawn``; its ``wait4``
# gives the child's own ``ru_maxrss`` (and that of any process the child waited for, such as
# worker processes).
LAUNCHER = """
import json, os, sys, time
for request in sys.stdin:
    cmd, env, out, err = json.loads(request)
    fds = [os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
           os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)]
    started = time.perf_counter()
    pid = os.posix_spawn(cmd[0], cmd, env, file_actions=[(os.POSIX_SPAWN_DUP2, fds[0], 1),
                                                         (os.POSIX_SPAWN_DUP2, fds[1], 2)])
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - started
    for fd in fds:
        os.close(fd)
    cpu = usage.ru_utime + usage.ru_stime
    print(json.dumps([wall, os.waitstatus_to_exitcode(status), usage.ru_maxrss, cpu]), flush=True)
"""


class Launcher:
    """The bare process every measured child is started from (see :data:`LAUNCHER`)."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.proc = subprocess.Popen([sys.executable, "-S", "-I", "-c", LAUNCHER], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)

    def run(self, cmd: Sequence[str], env: dict[str, str]) -> tuple[float, int, int, float, str, str]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        out, err = self.work / "child.out", self.work / "child.err"
        exe = cmd[0] if os.sep in cmd[0] else shutil.which(cmd[0]) or cmd[0]
        self.proc.stdin.write(json.dumps([[exe, *cmd[1:]], env, str(out), str(err)]) + "\n")
        self.proc.stdin.flush()
        wall, code, maxrss, cpu = json.loads(self.proc.stdout.readline())
        return wall, code, maxrss, cpu, out.read_text("utf-8", "replace"), err.read_text("utf-8", "replace")

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait()


_launcher: Launcher | None = None


def run_child(cmd: Sequence[str], inner: Callable[[str], float] | None = None,
              env: dict[str, str] | None = None, check: bool = True) -> Run:
    """Run ``cmd`` from the launcher; its own peak RSS comes from the launcher's ``wait4``."""
    assert _launcher is not None
    wall, code, maxrss, cpu, text, problem = _launcher.run(cmd, env or child_env())
    if check and code != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {code}:\n{text[-2000:]}\n{problem[-2000:]}")
    return Run(wall, inner(text) if inner and code == 0 else wall, maxrss / 1024, text + problem, code, cpu)


def median(runs: list[Run]) -> Run:
    """The run of median wall time; RSS is the largest any run reached."""
    ordered = sorted(runs, key=lambda r: r.inner)
    mid = ordered[len(ordered) // 2]
    return Run(mid.wall, statistics.median(r.inner for r in runs), max(r.rss for r in runs), mid.out, mid.code,
               statistics.median(r.cpu for r in runs))


def repeated(times: int, once: Callable[[], Run], before: Callable[[], object] | None = None) -> Run:
    runs = []
    for n in range(times + 1):  # the first is the warm-up
        if before is not None:
            before()
        run = once()
        if n:
            runs.append(run)
    return median(runs)


# ---- the corpus and the configuration ----------------------------------------------------


@dataclass
class Setup:
    corpus: Path
    work: Path
    config: Path
    root: Path
    adapters: tuple[str, ...]

    def source_roots(self) -> list[Path]:
        roots = {"claude-code-local": self.corpus / ".claude" / "projects",
                 "claude-code-provider": self.corpus / "provider-bodies",
                 "kiro": self.corpus / ".kiro"}
        return [roots[a] for a in self.adapters if roots[a].is_dir()]

    def source_files(self) -> list[Path]:
        return sorted(p for r in self.source_roots() for p in r.rglob("*")
                      if p.is_file() and p.suffix in (".jsonl", ".json"))


def write_config(setup: Setup, workers: int = 1) -> None:
    entries: list[dict[str, object]] = []
    for name, source in zip(("claude-code-local", "claude-code-provider", "kiro"),
                            (".claude/projects", "provider-bodies", ".kiro"), strict=True):
        if name in setup.adapters:
            entries.append({"name": name, "source_root": str(setup.corpus / source), "exclude": []})
            entries[-1]["collector"] = {"workers": workers}  # one is one: unset, many sessions fork
        else:  # built-in adapters stay on unless switched off
            entries.append({"name": name, "enabled": False})
    entries.append(NO_PLUGIN_DATA)
    setup.config.write_text(json.dumps({"storage": {"root": str(setup.root)}, "adapters": entries}), "utf-8")


def _pass(setup: Setup, *extra: str) -> tuple[Run, dict[str, object]]:
    exe = Path(sys.executable).with_name("asz-pipeline")
    run = run_child([str(exe), "run", "--json", "--config", str(setup.config), *extra], check=False,
                    inner=lambda text: float(json.loads(text.splitlines()[0])["elapsed_s"]))
    summary = json.loads(run.out.splitlines()[0]) if run.out.startswith("{") else {}
    only_pending = summary.get("pending") and not (summary.get("errors") or summary.get("conflicts"))
    if run.code != 0 and not only_pending:
        raise RuntimeError(f"asz-pipeline run exited {run.code}:\n{run.out[-3000:]}")
    return run, summary


def asz(setup: Setup, *extra: str) -> Run:
    """Passes until nothing is pending (a source with more than 65 files to land takes several,
    by the spec), as one run: the times added up, the largest RSS, the first pass's line."""
    run, summary = _pass(setup, *extra)
    total = run
    while summary.get("pending"):
        run, summary = _pass(setup, *extra)
        total = Run(total.wall + run.wall, total.inner + run.inner, max(total.rss, run.rss), total.out, run.code,
                    total.cpu + run.cpu)
    return total


def floor_child(ranges: list[tuple[str, int]], work: Path) -> Run:
    listing = work / "floor.json"
    listing.write_text(json.dumps(ranges), "utf-8")
    return run_child([sys.executable, str(CHILDREN), "floor", str(listing)],
                     inner=lambda text: float(text.split()[0]))


def write_floor_child(files: list[str], dest: Path, work: Path) -> Run:
    listing = work / "write-floor.json"
    listing.write_text(json.dumps(files), "utf-8")
    dest.mkdir(mode=0o700)
    return run_child([sys.executable, str(CHILDREN), "write-floor", str(listing), str(dest)],
                     inner=lambda text: float(text.split()[0]))


# ---- the peer ----------------------------------------------------------------------------


def peer_command() -> tuple[list[str] | None, str]:
    """The ``claude-code-log`` to run, installed into ``.venv-peer`` if need be; else why not."""
    explicit = os.environ.get("CLAUDE_CODE_LOG")
    if explicit:
        return [explicit], ""
    exe = PEER_VENV / "bin" / PEER
    if not exe.exists():
        made = subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], capture_output=True, text=True)
        if made.returncode != 0:
            return None, f"python -m venv {PEER_VENV} failed: {made.stderr.strip()[-300:]}"
        pip = subprocess.run([str(PEER_VENV / "bin" / "pip"), "install", "-q", PEER],
                             capture_output=True, text=True)
        if pip.returncode != 0 or not exe.exists():
            lines = [x for x in pip.stderr.splitlines() if "WARNING" not in x]
            return None, f"pip install {PEER} into {PEER_VENV} failed: {' '.join(lines)[-400:]}"
    return [str(exe)], ""


def peer(setup: Setup, repeat: int) -> list[tuple[str, Run | None, str]]:
    cmd, why = peer_command()
    if cmd is None:
        return [(f"{PEER} (not run)", None, why)]
    projects = setup.corpus / ".claude" / "projects"
    runs = itertools.count()
    try:
        first = repeated(repeat, partial(_peer_cold, cmd, projects, setup.work, runs))
        # again over the last cold run's output and cache: nothing new
        args, env = _peer_args(cmd, projects, setup.work, next(runs) - 1)
        again = repeated(repeat, lambda: run_child(args, env=env))
    except RuntimeError as exc:
        return [(f"{PEER} (failed)", None, str(exc).splitlines()[-1][:300])]
    version = subprocess.run([*cmd, "--version"], capture_output=True, text=True).stdout.strip()
    return [(f"{PEER} --all-projects, empty cache ({version})", first, "HTML of every session"),
            (f"{PEER} --all-projects again, nothing new", again, "")]


# ---- measuring ---------------------------------------------------------------------------


def measure(setup: Setup, repeat: int, with_peer: bool, workers: int, peer_repeat: int) -> int:
    files = setup.source_files()
    size = sum(p.stat().st_size for p in files)
    made = corpus_gen.load_made(setup.corpus)
    largest = made.largest_line / MB
    write_config(setup)
    run_child([str(Path(sys.executable).with_name("asz-pipeline")), "--version"])  # writes bytecode

    floor_run = repeated(repeat, lambda: floor_child([(str(p), 0) for p in files], setup.work))
    # Each cold run lands into a root never used before, and no root is deleted until every cold
    # run is done: on ext4 without a journal (this VM's disk) a new inode skips every inode freed
    # in the last minute or so (``recently_deleted`` in the inode allocator), so a cold pass right
    # after a root of thousands of files was deleted spends seconds of kernel time stepping over
    # them (2,000 sessions: 7-9 s of CPU against 5 s into a root made after no deletion), which
    # no user's first pass pays. ``sync`` first, so one run's write-back is not in the next's time.
    # One process and worker processes in turn, so that neither gets the disk's better or worse
    # moments. The previous run's root is renamed aside, not deleted (a rename frees no inode),
    # so the root's path, hence the configuration, stays the same: a configuration changed
    # between runs would be validated again by each (``yaml`` and ``jsonschema`` imported, 0.1 s
    # and 5 MB of peak RSS that a user's pass with an unchanged ``asz.yaml`` never pays).
    one: list[Run] = []
    several: list[Run] = []
    used = setup.work / "used-roots"
    used.mkdir(exist_ok=True)
    for n in range(repeat + 1):
        for count, runs in ((1, one), (workers, several))[: 2 if workers > 1 else 1]:
            if setup.root.exists():
                setup.root.rename(used / f"{n}-{count}")
            write_config(setup, count)
            os.sync()
            run = asz(setup)
            if n:  # the first of each is the warm-up
                runs.append(run)
    # The write floor copies the last cold root's landed files, each run into a new directory
    # (deleted with the used roots, after all timing: the same reason as above).
    landed = sorted(str(p) for p in setup.root.rglob("*.sd"))
    landed_mb = sum(os.path.getsize(p) for p in landed) / MB
    copies = iter(range(repeat + 1))
    write_run = repeated(repeat, lambda: write_floor_child(landed, used / f"copy-{next(copies)}", setup.work),
                         before=os.sync)
    # the no-op and incremental passes go on from the last cold root; the others stay until the end
    write_config(setup)
    cold = median(one)
    parallel = median(several) if several else None
    summary = json.loads(cold.out.splitlines()[0])
    stat_run = repeated(repeat, lambda: run_child([sys.executable, "-c", STAT_PROCESS,
                                                   *map(str, setup.source_roots())]))
    noop = repeated(repeat, lambda: asz(setup))  # what a timer running asz on idle agents meets
    noop_summary = json.loads(noop.out.splitlines()[0])
    grown: list[dict[str, object]] = []

    def grow() -> None:
        grown[:] = corpus_gen.grow(setup.corpus, 1.0, seed=len(made.grown))

    incremental = repeated(repeat, lambda: asz(setup), before=grow)
    # the floor of the last 1 % appended: the same bytes the last incremental pass read
    last = [(str(setup.corpus / str(g["path"])), int(str(g["start"]))) for g in grown]
    grown_bytes = sum(int(str(g["bytes"])) for g in grown)
    floor_1 = repeated(repeat, lambda: floor_child(last, setup.work))

    mbs = size / MB
    budget = 64 + 3 * largest
    rows: list[tuple[str, str, str, str, str, str]] = []

    def row(what: str, seconds: float, megabytes: float | None, rss: float | None, ratio: str = "",
            target: str = "") -> None:
        rows.append((what, f"{seconds:.3f}", f"{megabytes / seconds:.1f}" if megabytes else "",
                     f"{rss:.0f}" if rss is not None else "", ratio, target))

    share = floor_run.inner / cold.inner
    row("floor: read + orjson.loads + sha256 per line", floor_run.inner, mbs, floor_run.rss)
    row(f"write floor: the {len(landed)} landed files ({landed_mb:.1f} MB) written durably", write_run.inner,
        landed_mb, write_run.rss, f"{floor_run.inner / write_run.inner:.0%} of the floor's speed")
    ceiling = floor_run.inner + write_run.inner
    row("floor + write floor (one process, nothing else)", ceiling, mbs, None,
        f"{floor_run.inner / ceiling:.0%} of the floor's speed")
    row("cold pass (inside the pass)", cold.inner, mbs, cold.rss, f"{share:.0%} of the floor's speed",
        f"≥ 40 %: {'met' if share >= 0.40 else 'NOT met'}")
    row("cold pass (whole process)", cold.wall, mbs, cold.rss)
    if parallel is not None:
        share_w = floor_run.inner / parallel.inner
        row(f"cold pass, {workers} worker processes (inside the pass)", parallel.inner, mbs, parallel.rss,
            f"{share_w:.0%} of the floor's speed", f"≥ 40 %: {'met' if share_w >= 0.40 else 'NOT met'}")
    row("a process that stats every source file", stat_run.wall, None, stat_run.rss)
    ratio = noop.wall / stat_run.wall
    row("no-op pass (whole process)", noop.wall, None, noop.rss, f"{ratio:.1f}x the stats",
        f"≤ 5x: {'met' if ratio <= 5 else 'NOT met'}")
    row("no-op pass (inside the pass)", noop.inner, None, None)
    row(f"floor of the 1 % appended ({grown_bytes / MB:.2f} MB)", floor_1.inner, grown_bytes / MB, floor_1.rss)
    row("incremental pass (inside the pass)", incremental.inner, grown_bytes / MB, incremental.rss,
        f"{floor_1.inner / incremental.inner:.0%} of the floor's speed")
    row("incremental pass (whole process)", incremental.wall, grown_bytes / MB, incremental.rss)
    worst = max(cold.rss, noop.rss, incremental.rss)
    notes = []
    if with_peer:
        for what, run, note in peer(setup, peer_repeat):
            if run is None:
                notes.append(f"{what}: {note}")
                continue
            first = "empty" in what
            row(what, run.wall, made.transcript_bytes / MB if first else None, run.rss,
                f"{run.wall / cold.wall:.1f}x asz's cold process" if first
                else f"{run.wall / noop.wall:.1f}x asz's no-op process")
    print(f"corpus {setup.corpus}: {len(made.sessions)} Claude Code sessions, {len(files)} source files, "
          f"{mbs:.1f} MB (transcripts {made.transcript_bytes / MB:.1f}, provider bodies "
          f"{made.body_bytes / MB:.1f}, Kiro {made.kiro_bytes / MB:.1f}); largest line {largest:.2f} MB")
    print(f"adapters: {', '.join(setup.adapters)}; cold pass landed {summary['landed']} files, "
          f"{summary['records']} records; no-op pass: landed {noop_summary['landed']}; median of {repeat} "
          f"after a warm-up; peak RSS: that process and any it waited for")
    print(table(rows, ("what", "seconds", "MB/s", "peak RSS MB", "ratio", "target")))
    print(f"peak RSS of any pass {worst:.0f} MB; budget 64 MB + 3 x the largest line ({largest:.2f} MB) = "
          f"{budget:.0f} MB: {'met' if worst <= budget else 'NOT met'}")
    for note in notes:
        print(note)
    return 0


# ---- issue 21's table (``--table``) ------------------------------------------------------

#: the rows of the table, in its order: a name, how the corpus is made, its target (% of the floor
#: in one process, with default workers)
TABLE_ROWS = (
    ("shared transcripts", "shared", (25, 40)),
    ("the same ×10", "shared-x10", (25, 40)),  # noqa: RUF001 - the README's sign
    ("2,000 small sessions", "many-small", (None, 20)),
    ("one 200 MB transcript", "huge-transcript", (None, 35)),
)
_UUID = rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def copy_x10(projects: Path, dest: Path) -> None:
    """The shared transcripts ten times over: copies 1-9 with every session id changed in its
    first two characters (names and lines alike), so each copy is ten new sessions of the same
    bytes and shapes."""
    import re

    sessions = sorted({p.stem.encode() for p in projects.glob("*/*.jsonl")})
    pattern = re.compile(b"|".join(re.escape(s) for s in sessions))
    for k in range(10):
        def renamed(found: re.Match[bytes], k: int = k) -> bytes:
            return b"%02x" % (k * 23 % 256) + found.group(0)[2:] if k else found.group(0)

        for path in sorted(projects.rglob("*.jsonl")):
            rel = str(path.relative_to(projects)).encode()
            target = dest / pattern.sub(renamed, rel).decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(pattern.sub(renamed, path.read_bytes()))


def table_corpus(kind: str, work: Path) -> Path:
    """The Claude Code projects directory of one row's corpus (made under ``work`` once)."""
    from _common import corpus as shared_corpus

    shared = shared_corpus() / "claude-code" / "projects"
    if kind == "shared":
        return shared
    out = work / kind
    if kind == "shared-x10":
        if not out.is_dir():
            copy_x10(shared, out)
        return out
    if not (out / "corpus.json").is_file():
        shutil.rmtree(out, ignore_errors=True)
        spec = corpus_gen.Spec(seed=0, **corpus_gen.PRESETS[kind])  # type: ignore[arg-type]
        print(f"generating the {kind} corpus into {out} ...", file=sys.stderr)
        corpus_gen.generate(out, spec)
    return out / ".claude" / "projects"


def land_config(path: Path, root: Path, adapters: dict[str, Path], workers: int | None, *,
                derive: bool = False) -> Path:
    """A configuration landing ``adapters`` (name → source root) into ``root``; ``workers``
    ``None`` leaves the default (worker processes from 32 sessions). ``derive``: the metrics
    derivation a pass makes after landing (on by default for a user, like the parse; the landing
    rows leave it out as they leave the parse)."""
    entries: list[dict[str, object]] = []
    for name in ADAPTERS:
        if name in adapters:
            entries.append({"name": name, "source_root": str(adapters[name]), "exclude": []})
            if workers is not None:
                entries[-1]["collector"] = {"workers": workers}
        else:
            entries.append({"name": name, "enabled": False})
    entries.append(NO_PLUGIN_DATA)
    path.write_text(json.dumps({"storage": {"root": str(root)}, "adapters": entries,
                                "metrics": {"enabled": derive}}), "utf-8")
    return path


def strace_counts(cmd: list[str], work: Path) -> tuple[int, int] | None:
    """System calls and ``fsync``s of ``cmd`` and its children (``strace -f -c``); ``None``
    without ``strace``."""
    if shutil.which("strace") is None:
        return None
    out = work / "strace.txt"
    subprocess.run(["strace", "-f", "-c", "-o", str(out), *cmd], env=child_env(), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    calls = fsyncs = 0
    for line in out.read_text("utf-8").splitlines():
        fields = line.split()
        if len(fields) >= 5 and fields[-1] == "total":
            calls = int(fields[3])
        elif len(fields) >= 5 and fields[-1] in ("fsync", "fdatasync") and fields[3].isdigit():
            fsyncs += int(fields[3])
    return calls, fsyncs


def _fresh(root: Path, used: Path) -> None:
    """Move the last run's ``root`` aside (renamed, not deleted: see :func:`measure` on why),
    so the next lands into a root never used before under the same path, hence the same
    configuration, validated once and cached."""
    used.mkdir(exist_ok=True)
    if root.exists():
        root.rename(used / str(len(list(used.iterdir()))))


def _configs(scratch: Path, kind: str, adapters: dict[str, Path]) -> dict[int | None, Path]:
    """One process and default workers: a configuration each, validated once beforehand."""
    made = {}
    for count in (1, None):
        tag = "1" if count else "w"
        made[count] = land_config(scratch / f"{kind}-{tag}.yaml", scratch / f"{kind}-{tag}", adapters, count)
        run_child([str(Path(sys.executable).with_name("asz-pipeline")), "config", "--config", str(made[count])])
    return made


# ---- the table's method: commands in rotation, medians of per-round ratios ----------------
# The table's own modules (``quiet``, ``pressure``, ``table_report``, ``readme_block``) are
# imported where they are used, not above: the floor's child process runs this script, and what
# its start-up imports is part of the floor's CPU, which the table must not move.


def rotated(items: Sequence[T], round_no: int) -> list[T]:
    """``items`` from the one at ``round_no`` (modulo their number) on, wrapping round."""
    k = round_no % len(items)
    return [*items[k:], *items[:k]]


def in_rotation(commands: Sequence[Callable[[], Run]], rounds: int, quiet: Quiet,
                before_each: Callable[[], object] = os.sync
                ) -> tuple[list[list[Run]], list[Settling]]:
    """``rounds`` rounds of every command, each command run once the machine is quiet (looked
    at after ``before_each``, a ``sync``, so that no run pays for the last one's write-back, nor
    is its write-back taken for another's I/O). Round r starts with command r and goes on in
    rotation, so that no command always runs right after the same other. Returns each command's
    runs in round order (``runs[command][round]``) and how each run's wait went (and the
    pressure over it).

    Each run waits on its own, not each round: a look sleeps through a window of seconds, and
    this VM's page cache shrinks by megabytes a second while the machine idles, so the first
    command of a round re-read from disk part of what it had read last time (its modules, the
    root's metadata) and the next ones did not (benchmarks/README.md, round 24). Looked at
    before each, every run starts as a timer's pass does: after the machine was quiet."""
    runs: list[list[Run]] = [[] for _ in commands]
    settlings = []
    for r in range(rounds):
        for c in rotated(range(len(commands)), r):
            before_each()
            run, settled = quiet.over(commands[c], quiet.settle())
            runs[c].append(run)
            settlings.append(settled)
    return runs, settlings


def per_round_ratio(numerators: Sequence[float], denominators: Sequence[float]) -> float:
    """The median of the ratios taken within each round. A drift of the machine's speed over
    the run moves both terms of a round alike, so it cancels out; a ratio of two medians, each
    over the whole run, would carry it."""
    return statistics.median(n / d for n, d in zip(numerators, denominators, strict=True))


def _landing(scratch: Path, kind: str, tag: str, config: Path) -> Run:
    """One cold landing (``--land``: passes until nothing is pending) into a root never used."""
    _fresh(scratch / f"{kind}-{tag}", scratch / "used")
    return run_child([sys.executable, str(CHILDREN), "land", str(config)],
                     inner=lambda text: float(json.loads(text)["elapsed_s"]))


def issue_table(work: Path, scratch: Path, repeat: int, with_strace: bool, quiet: Quiet,
                only: set[str] | None = None) -> TableReport:
    """Issue 21's table: each corpus's floor, a cold landing in one process and with default
    workers (CPU and wall), in rotation round by round, system calls and fsyncs per session, the
    no-op ``run`` at 2,000 sessions beside a stat-only process, and the peer."""
    import host_memory
    import pressure
    from table_report import TableReport, inodes_in_use

    made = TableReport((default_workers(DEFAULT_FROM_SESSIONS), default_workers(DECIDED_BY)), repeat,
                       inodes=inodes_in_use(scratch))
    if not quiet.pressure:
        made.notes.append(f"I/O and CPU pressure not read, the create cost alone decides: {pressure.unavailable()}")
    run_child([str(Path(sys.executable).with_name("asz-pipeline")), "--version"])  # writes bytecode
    wanted = [row for row in TABLE_ROWS if only is None or row[1] in only]
    with_noop = only is None or "noop" in only
    # every corpus is made first (a partial one replaced), so nothing is deleted once timing starts
    corpora = {kind: table_corpus(kind, work) for _, kind, _ in wanted}
    if with_noop:
        table_corpus("many-small", work)
    shared_cold: Run | None = None
    for title, kind, (target_one, target_many) in wanted:
        projects = corpora[kind]
        files = sorted(p for p in projects.rglob("*.jsonl") if p.is_file())
        size = sum(p.stat().st_size for p in files)
        ranges = [(str(p), 0) for p in files]
        configs = _configs(scratch, kind, {"claude-code-local": projects})
        floor_child(ranges, scratch)  # a warm-up, untimed: the transcripts in the page cache
        backed = host_memory.unreported_free_mb()
        (floors, one, many), settlings = in_rotation(
            [partial(floor_child, ranges, scratch), partial(_landing, scratch, kind, "1", configs[1]),
             partial(_landing, scratch, kind, "w", configs[None])], repeat, quiet)
        made.settlings += settlings
        floor_run, cold1, coldn = median(floors), median(one), median(many)
        landed_summary = json.loads(cold1.out.splitlines()[0])
        sessions, files_landed = int(landed_summary["sessions"]), max(1, int(landed_summary["landed"]))
        counts = None
        if with_strace:
            _fresh(scratch / f"{kind}-1", scratch / "used")
            counts = strace_counts([sys.executable, str(CHILDREN), "land", str(configs[1])], scratch)
        if kind == "shared":
            shared_cold = cold1
        # CPU time is what a loaded machine leaves steady; the wall with workers is what they buy
        share1 = per_round_ratio([r.cpu for r in floors], [r.cpu for r in one])
        sharen_wall = per_round_ratio([r.wall for r in floors], [r.wall for r in many])
        each_one = [f"{f.cpu / o.cpu * 100:.1f}" for f, o in zip(floors, one, strict=True)]
        each_many = [f"{f.wall / m.wall * 100:.1f}" for f, m in zip(floors, many, strict=True)]
        pool = "" if backed is None else f"free memory the host still backs as its rounds began {backed:,.0f} MB; "
        made.notes.append(f"{title}: each round's % of the floor, 1 process {', '.join(each_one)}; workers (wall) "
                          f"{', '.join(each_many)}; {pool}{quiet.describe(settlings)}")
        made.rounds.append(f"{title} {', '.join(each_one)} % in one process and {', '.join(each_many)} % "
                           f"with workers")
        made.rows.append((title, f"{sessions:,}", f"{size / MB:.1f}",
                          f"{floor_run.cpu:.2f} / {floor_run.wall:.2f}",
                          f"{cold1.cpu:.2f} / {cold1.wall:.2f}", f"{share1 * 100:.1f} %",
                          f"{coldn.cpu:.2f} / {coldn.wall:.2f}", f"{sharen_wall * 100:.1f} %",
                          f"{counts[0] / sessions:.0f}" if counts else "-",
                          f"{counts[1] / sessions:.2f} ({counts[1] / files_landed:.2f} a file)" if counts else "-",
                          " / ".join(f"≥ {t} %" if t else "–" for t in (target_one, target_many))))  # noqa: RUF001
    if with_noop:
        noop_row(work, scratch, repeat, with_strace, quiet, made)
    cmd = peer_installed()
    if cmd is None:
        made.notes.append(f"{PEER}: not installed; to compare, `python -m venv {PEER_VENV.name} && "
                          f"{PEER_VENV.name}/bin/pip install {PEER}` (or set CLAUDE_CODE_LOG to its command)")
    elif shared_cold is not None:
        try:
            peer_run = repeated(max(1, repeat - 1),
                                partial(_peer_cold, cmd, table_corpus("shared", work), scratch, itertools.count()))
            made.rows.append((f"`{PEER}`, shared transcripts, empty cache", "", "", "",
                              f"{peer_run.cpu:.2f} / {peer_run.wall:.2f}",
                              f"{peer_run.cpu / shared_cold.cpu:.1f}x asz's CPU", "", "", "", "",
                              f"peak RSS {peer_run.rss:.0f} MB"))
        except RuntimeError as exc:
            made.notes.append(f"{PEER} failed: {str(exc).splitlines()[-1][:300]}")
    return made


def _peer_args(cmd: list[str], projects: Path, work: Path, n: int) -> tuple[list[str], dict[str, str]]:
    """The peer's command and environment for its run ``n``: its own output directory and cache."""
    env = {**child_env(), "CLAUDE_CODE_LOG_CACHE_PATH": str(work / f"peer-cache-{n}.db")}
    return [*cmd, "--all-projects", "--projects-dir", str(projects), "-o", str(work / f"peer-html-{n}")], env


def _peer_cold(cmd: list[str], projects: Path, work: Path, runs: Iterator[int]) -> Run:
    """The peer over ``projects`` with an empty cache: each run writes a new output directory
    and cache, no earlier one deleted (for the reason the roots are not: see :func:`measure`)."""
    args, env = _peer_args(cmd, projects, work, next(runs))
    return run_child(args, env=env)


def noop_row(work: Path, scratch: Path, repeat: int, with_strace: bool, quiet: Quiet, made: TableReport) -> None:
    """The no-op ``run`` at 2,000 sessions (every adapter, its parse included) beside a
    stat-only process, as the issue measures it: the first run lands and parses everything and
    is not measured; runs 2, 3, ... each make a round with the stat-only process, in rotation,
    and every one counts (the target holds for every run after the first)."""
    corpus = work / "many-small"
    sources = [corpus / ".claude" / "projects", corpus / "provider-bodies", corpus / ".kiro"]
    config = land_config(scratch / "noop.yaml", scratch / "noop-root", dict(zip(ADAPTERS, sources, strict=True)), None,
                         derive=True)
    run_cmd = [str(Path(sys.executable).with_name("asz-pipeline")), "run", "--json", "--config", str(config)]
    stat_cmd = [sys.executable, "-c", STAT_PROCESS, *map(str, sources)]
    first = run_child(run_cmd)  # lands and parses everything: not what is measured
    run_child(stat_cmd)  # the stat-only process's warm-up; asz's runs after the first all count
    (noops, stats), settlings = in_rotation([partial(run_child, run_cmd), partial(run_child, stat_cmd)], repeat,
                                            quiet)
    made.settlings += settlings
    noop, stat = median(noops), median(stats)
    each = [n.cpu / s.cpu for n, s in zip(noops, stats, strict=True)]
    ratio = per_round_ratio([n.cpu for n in noops], [s.cpu for s in stats])
    counts = strace_counts(run_cmd, scratch) if with_strace else None
    sessions = int(json.loads(noop.out.splitlines()[0])["sessions"])
    made.rows.append((f"no-op `run`, {sessions:,} sessions", f"{sessions:,}", "",
                      f"stat-only {stat.cpu:.3f} / {stat.wall:.3f}",
                      f"{noop.cpu:.3f} / {noop.wall:.3f}", f"{ratio:.1f}x the stats' CPU (worst {max(each):.1f}x)",
                      "", "", f"{counts[0] / sessions:.1f}" if counts else "-",
                      f"{counts[1]} in all" if counts else "-", "≤ 5x"))
    made.notes.append(f"no-op: runs 2-{repeat + 1} after the first, each over the stat-only process's CPU in its "
                      f"round: {', '.join(f'{r:.1f}x' for r in each)}; {quiet.describe(settlings)}")
    made.rounds.append("the no-op " + ", ".join(f"{r:.1f}x" for r in each))
    first_run = (f"The no-op's first run (landing all three adapters, then the first parse of every session and the "
                 f"first metrics derivation) took {first.cpu:.1f} s of CPU, {first.wall:.1f} s of wall.")
    made.notes.append(first_run)
    made.after.append(first_run)


def peer_installed() -> list[str] | None:
    """The ``claude-code-log`` command when it is installed (never installed from here)."""
    explicit = os.environ.get("CLAUDE_CODE_LOG")
    if explicit:
        return [explicit]
    exe = PEER_VENV / "bin" / PEER
    if exe.exists():
        return [str(exe)]
    found = shutil.which(PEER)
    return [found] if found else None


def profile(setup: Setup) -> int:
    """cProfile of one cold pass, in this process."""
    from asz_core.config import load_config
    from asz_core.host import PluginHost
    from asz_core.pipeline import run_pass

    write_config(setup)
    host = PluginHost().load_entry_points()
    config = load_config(host, str(setup.config))
    shutil.rmtree(setup.root, ignore_errors=True)
    prof = cProfile.Profile()
    prof.runcall(run_pass, host, config)
    stats = pstats.Stats(prof)
    stats.sort_stats("tottime").print_stats(30)
    stats.sort_stats("cumulative").print_stats(40)
    return 0


def readme_refusal(args: argparse.Namespace) -> str | None:
    """Why ``--readme`` cannot be honoured, said before anything is measured; ``None`` if it can."""
    import readme_block  # here, not at the top: see the note under "the table's method"

    if not args.table:
        return "--readme rewrites the README's table: give it with --table"
    if args.only:
        return "--readme rewrites the README's whole table: run it without --only"
    try:
        readme_block.check(args.readme)
    except (OSError, UnicodeDecodeError, readme_block.MarkersMissing) as exc:
        return f"{args.readme} not rewritten: {exc}"
    return None


def into_readme(made: TableReport, quiet: Quiet, readme: Path, arguments: Sequence[str]) -> int:
    """Put the table into ``readme``'s generated part when every run started quiet (else
    refuse, status 2: a disturbed table must not replace a quiet one). ``arguments``: this
    script's, which the README quotes as the command that made it."""
    import readme_block  # here, not at the top: see the note under "the table's method"

    if not made.quiet:
        loud = [s for s in made.settlings if not s.quiet]
        names = sorted({name for s in loud for name in s.loud})
        print(f"{readme} not rewritten: {len(loud)} of {len(made.settlings)} runs started with the machine not "
              f"quiet ({', '.join(names)} above {'its level' if len(names) == 1 else 'their levels'} when the "
              f"{quiet.most_wait:.0f} s wait ran out; each run's figures are above). Run it again when "
              f"nothing else runs here, or with a longer --quiet-wait.", file=sys.stderr)
        return 2
    script = Path(__file__).resolve().relative_to(REPO)
    command = readme_block.command([str(script), *arguments], REPO, os.environ.get("ASZ_SHARED"))
    try:
        changed = readme_block.rewrite(readme, made.readme(quiet, command, datetime.now(UTC)))
    except (OSError, readme_block.MarkersMissing) as exc:
        print(f"{readme} not rewritten: {exc}", file=sys.stderr)
        return 2
    print(f"{readme}: the generated part of the Performance section {'rewritten' if changed else 'unchanged'}",
          file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    import quiet as quiet_machine  # here, not at the top: see the note under "the table's method"

    quiet_at = quiet_machine.Levels()  # the quiet levels' defaults are the harness's own
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, help="a corpus written by corpus.py (made there when absent)")
    parser.add_argument("--preset", default="10mb", choices=sorted(corpus_gen.PRESETS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--adapters", default=",".join(ADAPTERS), help="comma-separated (default: all three)")
    parser.add_argument("--no-peer", action="store_true", help=f"do not run {PEER}")
    parser.add_argument("--peer-repeat", type=int, help=f"runs of {PEER} (default: --repeat)")
    parser.add_argument("--workers", type=int, default=default_workers(DECIDED_BY),
                        help="also a cold pass with this many worker processes (collector.workers; "
                             "default: what a pass of many sessions uses unset, one a CPU and one more, at most "
                             "4; 1: not measured)")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of one cold pass instead")
    parser.add_argument("--table", action="store_true",
                        help="print issue 21's table instead: the shared transcripts, the same x10, 2,000 small "
                             "sessions, one 200 MB transcript, the no-op run at 2,000 sessions, the peer")
    parser.add_argument("--work", type=Path, help="with --table: keep the generated corpora here between runs")
    parser.add_argument("--no-strace", action="store_true", help="with --table: no system call counts")
    parser.add_argument("--only", help="with --table: only these rows (shared, shared-x10, many-small, "
                                       "huge-transcript, noop; comma-separated)")
    parser.add_argument("--quiet-create-us", type=float, default=quiet_at.create_us,
                        help="with --table: the filesystem is quiet when creating a file or directory costs at most "
                             "this many µs of CPU (default %(default)g; see create_cost.py and quiet.Levels)")
    parser.add_argument("--quiet-io-pct", type=float, default=quiet_at.io,
                        help="with --table: and when some task stalled on I/O at most this %% of a 2 s window "
                             "(default %(default)g; /proc/pressure/io)")
    parser.add_argument("--quiet-cpu-pct", type=float, default=quiet_at.cpu,
                        help="with --table: and when some task waited for a CPU at most this %% of that window "
                             "(default %(default)g; /proc/pressure/cpu)")
    parser.add_argument("--quiet-wait", type=float, default=90.0,
                        help="with --table: seconds to wait for all three at most before each run (default 90)")
    parser.add_argument("--readme", type=Path,
                        help="with --table: rewrite the generated part of this README's Performance section "
                             "(between its two 'pass.py --table' comment lines) with the table, when every "
                             "run started quiet")
    args = parser.parse_args(argv)
    if args.readme:
        refused = readme_refusal(args)
        if refused:
            print(refused, file=sys.stderr)
            return 2
    global _launcher, _cache_home
    work = Path(tempfile.mkdtemp(prefix="asz-bench-pass-"))
    _launcher = Launcher(work)
    _cache_home = work / "cache"
    try:
        if args.table:
            corpora = args.work or work
            corpora.mkdir(parents=True, exist_ok=True)
            import pressure

            levels = quiet_machine.Levels(args.quiet_create_us, args.quiet_io_pct, args.quiet_cpu_pct)
            quiet = quiet_machine.Quiet(work, levels, args.quiet_wait, pressure=pressure.unavailable() is None)
            made = issue_table(corpora, work, args.repeat, not args.no_strace, quiet,
                               set(args.only.split(",")) if args.only else None)
            made.print()
            if args.readme:
                return into_readme(made, quiet, args.readme, sys.argv[1:] if argv is None else argv)
            return 0
        corpus = args.corpus or work / "corpus"
        if not (corpus / "corpus.json").is_file():
            spec = corpus_gen.Spec(seed=args.seed, **corpus_gen.PRESETS[args.preset])  # type: ignore[arg-type]
            print(f"generating the {args.preset} corpus into {corpus} ...", file=sys.stderr)
            corpus_gen.generate(corpus, spec)
        adapters = tuple(a for a in args.adapters.split(",") if a)
        setup = Setup(corpus, work, work / "asz.yaml", work / "root", adapters)
        if args.profile:
            return profile(setup)
        return measure(setup, args.repeat, not args.no_peer, args.workers, args.peer_repeat or args.repeat)
    finally:
        _launcher.close()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
