"""``parse`` over the shared Claude Code corpus: a first parse, a parse with nothing new, and a
parse after one new landed file, beside the landing pass that made the root.

    python benchmarks/parse.py [--corpus DIR]

A first parse reads every landed file once and writes each session's derived entry cache; a
parse with nothing new lists the sessions' directories and reads no landed file; a parse after
one new file reads that file and the cache of the rest.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from _common import corpus, peak_rss_mb, table

from asz_core.assembly import evidence
from asz_core.assembly.parse import parse_root
from asz_core.testing import PassRunner


def _timed(fn):  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    result = fn()
    return time.perf_counter() - started, result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--corpus", type=Path, help="a projects/ directory (default: the shared corpus's)")
    args = ap.parse_args()
    projects = args.corpus or corpus() / "claude-code" / "projects"
    work = Path(tempfile.mkdtemp(prefix="asz-bench-parse-"))
    try:
        runner = PassRunner(work, work / "root")
        runner.configure(adapters=[{"name": "claude-code-local", "source_root": str(projects), "exclude": []}])
        land_s, summary = _timed(runner.run)
        root = work / "root"
        seqs = {s.name: evidence.landed_seqs(s) for s in root.iterdir() if s.is_dir() and not s.name.startswith("_")}
        files = sum(len(v) for v in seqs.values())
        size = sum(p.stat().st_size for v in seqs.values() for p in v.values())
        first_s, first = _timed(lambda: parse_root(root))
        rounds = sum(p.stat().st_size for r in first for p in r.rounds)
        noop_s, noop = _timed(lambda: parse_root(root))
        # one session grows by one landed file: a copy of its last, renumbered, as a new pass lands
        session = max(seqs, key=lambda s: len(seqs[s]))
        last_seq = max(seqs[session])
        src = seqs[session][last_seq]
        grown = src.with_name(src.name.replace(f"-{last_seq:06d}.sd", f"-{last_seq + 1:06d}.sd"))
        shutil.copyfile(src, grown)
        one_s, one = _timed(lambda: parse_root(root, [session]))
        rows = [
            ["landing pass (for scale)", f"{land_s:.2f}", f"{summary.totals.sessions} sessions, {files} files, "
                                                         f"{size / 1e6:.1f} MB landed"],
            ["first parse", f"{first_s:.2f}", f"{sum(len(r.rounds) for r in first)} rounds, {rounds / 1e6:.2f} MB, "
                                              f"{sum(r.files_read for r in first)} landed files read"],
            ["parse, nothing new", f"{noop_s:.3f}", f"{sum(len(r.rounds) for r in noop)} rounds, "
                                                    f"{sum(r.files_read for r in noop)} landed files read"],
            ["parse, one new file", f"{one_s:.3f}", f"{len(one[0].rounds)} round, {one[0].files_read} landed file "
                                                    f"read, of {len(seqs[session]) + 1} ({session[:8]})"],
        ]
        print(table(rows, ["what", "seconds", "detail"]))
        print(f"peak RSS {peak_rss_mb():.0f} MB")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
