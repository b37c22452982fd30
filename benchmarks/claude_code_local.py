"""Measure the ``claude-code-local`` adapter against the floor of the same machine and run.

    .venv/bin/python benchmarks/claude_code_local.py [PROJECTS_DIR] [--repeat N] [--profile]
    .venv/bin/python benchmarks/claude_code_local.py --generate 1000 --big-line 50

* cold pass: one pass over every session of ``PROJECTS_DIR`` (default: the shared corpus) into an
  empty storage root, in MB of source per second, beside the floor: reading every source file,
  and for every line ``orjson.loads`` and SHA-256 — what any reader of these files must do;
* no-op pass: a second pass that finds nothing new, beside a bare ``os.stat`` of every source;
* ``--generate MB``: the same over a corpus of that size made of the shared corpus's lines
  (eight sessions, new ids), with ``--big-line MB`` one tool result line of that size in it, and
  the peak RSS of a process that runs one cold pass over it.

Each time is the best of ``--repeat`` runs (default 5; 1 with ``--generate``). ``--profile``
prints a cProfile of one cold pass instead. ``--no-fsync`` makes ``os.fsync`` do nothing, to
show what a pass costs besides making every landed file, cursor and directory durable (which,
on a corpus of many small files, is most of it; never run a real pass like that).
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import os
import pstats
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import orjson
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED

from asz_core.config import load_config
from asz_core.host import PluginHost
from asz_core.pipeline import run_pass

DEFAULT = SHARED / "corpus" / "claude-code" / "projects"
SOURCE_SUFFIXES = (".jsonl", ".json", ".js")


def source_files(projects: Path) -> list[Path]:
    return sorted(p for p in projects.rglob("*") if p.is_file() and p.name.endswith(SOURCE_SUFFIXES))


def floor(files: list[Path]) -> None:
    for path in files:
        with open(path, "rb") as f:
            for line in f:
                raw = line.rstrip(b"\n")
                try:  # noqa: SIM105 - a context manager per line would slow the floor it measures
                    orjson.loads(raw)
                except orjson.JSONDecodeError:
                    pass
                hashlib.sha256(raw).digest()


def stat_all(files: list[Path]) -> None:
    for path in files:
        os.stat(path)


def best(repeat: int, run: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def generate(corpus: Path, target: Path, megabytes: int, big_line_mb: int) -> None:
    """``megabytes`` of transcripts in eight sessions, cycling the corpus's transcript lines."""
    lines = [line for p in sorted(corpus.rglob("*.jsonl")) for line in p.read_bytes().splitlines(keepends=True)
             if line.endswith(b"\n")]
    per_session = megabytes * 1_000_000 // 8
    project = target / "-home-bench-projects-generated"
    project.mkdir(parents=True)
    for n in range(8):
        with open(project / f"{uuid.UUID(int=n + 1)}.jsonl", "wb") as out:
            written = 0
            if n == 0 and big_line_mb:
                text = "x" * (big_line_mb * 1_000_000)
                big = {"type": "user", "uuid": str(uuid.UUID(int=99)), "timestamp": "2026-01-01T00:00:00.000Z",
                       "message": {"role": "user", "content": [
                           {"type": "tool_result", "tool_use_id": "toolu_bench", "content": text}]}}
                written += out.write(orjson.dumps(big) + b"\n")
            while written < per_session:
                for line in lines:
                    written += out.write(line)
                    if written >= per_session:
                        break


def one_pass_rss(config_path: Path) -> int:
    """Peak RSS (bytes) of a fresh process that runs one pass."""
    code = ("import sys; from asz_core.config import load_config; from asz_core.host import PluginHost; "
            "from asz_core.pipeline import run_pass; h = PluginHost().load_entry_points(); "
            "s = run_pass(h, load_config(h, sys.argv[1])); sys.exit(1 if s.failed else 0)")
    subprocess.run([sys.executable, "-c", code, str(config_path)], check=True)
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("projects", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--repeat", type=int, default=0)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--generate", type=int, default=0, metavar="MB")
    parser.add_argument("--big-line", type=int, default=0, metavar="MB")
    parser.add_argument("--no-fsync", action="store_true")
    args = parser.parse_args()
    if args.no_fsync:
        os.fsync = lambda fd: None
    repeat = args.repeat or (1 if args.generate else 5)
    if not args.projects.is_dir():
        parser.error(f"{args.projects} is not a directory (set ASZ_SHARED, or name one)")
    work = Path(tempfile.mkdtemp(prefix="asz-bench-"))
    try:
        projects = args.projects
        if args.generate:
            projects = work / "projects"
            generate(args.projects, projects, args.generate, args.big_line)
        return measure(args, projects, work, repeat)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure(args: argparse.Namespace, projects: Path, work: Path, repeat: int) -> int:
    files = source_files(projects)
    total = sum(p.stat().st_size for p in files)
    host = PluginHost().load_entry_points()
    config_path = work / "asz.yaml"
    root = work / "root"
    config_path.write_text(yaml.safe_dump({
        "storage": {"root": str(root)},
        "adapters": [{"name": "claude-code-local", "source_root": str(projects), "exclude": []}]}), "utf-8")
    config = load_config(host, str(config_path))

    def cold() -> None:
        shutil.rmtree(root, ignore_errors=True)
        summary = run_pass(host, config)
        assert not summary.failed and summary.totals.landed, summary.as_dict()

    if args.profile:
        cProfile.runctx("cold()", globals(), {"cold": cold}, str(work / "prof"))
        pstats.Stats(str(work / "prof")).sort_stats("cumulative").print_stats(35)
        return 0
    floor_s = best(repeat, lambda: floor(files))
    cold_s = best(repeat, cold)
    noop_s = best(max(repeat, 5), lambda: run_pass(host, config))  # over the last cold pass's root
    stat_s = best(max(repeat, 5), lambda: stat_all(files))
    mb = total / 1e6
    print(f"corpus: {len(files)} files, {mb:.1f} MB ({projects})")
    print(f"floor (read + orjson.loads + sha256 per line): {floor_s:8.3f} s  {mb / floor_s:6.1f} MB/s")
    print(f"cold pass:                                      {cold_s:8.3f} s  {mb / cold_s:6.1f} MB/s"
          f"  = {floor_s / cold_s:.0%} of the floor's speed")
    print(f"os.stat of every source file:                   {stat_s * 1000:8.2f} ms")
    print(f"no-op second pass:                              {noop_s * 1000:8.2f} ms"
          f"  = {noop_s / stat_s:.0f}x the stats")
    if args.generate:
        shutil.rmtree(root, ignore_errors=True)
        print(f"peak RSS of one cold pass:                      {one_pass_rss(config_path) / 1e6:8.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
