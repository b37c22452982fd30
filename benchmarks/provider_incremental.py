"""An incremental pass of the claude-code-provider adapter: the largest session of a body
directory gets its last bodies in a pass of their own, as a long session does between passes.

    python benchmarks/provider_incremental.py                  # the shared corpus's bodies
    python benchmarks/provider_incremental.py --new 10 --rounds 5 --work DIR

The directory's bodies are landed once into a root (with every session's index written from
the transcripts beforehand, as ``provider_bodies.py`` does), the largest session's last
``--new`` bodies held back. Each round then copies that root (times kept) and lands the held-back
bodies into the copy; what is printed is each round's pass time, wall and CPU, in this process
(the first round also imports the landing code). ``--work`` keeps the roots, so that a later run
(say, of another checkout's interpreter) reuses the same plan and compares like with like;
``--profile`` prints a cProfile of the last round.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import corpus
from provider_bodies import index_transcripts

from asz_core.config import load_config
from asz_core.context import PassSummary
from asz_core.host import PluginHost
from asz_core.pipeline import run_pass
from asz_core.providerbody import ProviderBodies


def _land(host: PluginHost, root: Path, bodies: Path) -> PassSummary:
    config = root.parent / f"{root.name}.json"
    config.write_text(json.dumps({"storage": {"root": str(root)}, "adapters": [
        {"name": "claude-code-provider", "source_root": str(bodies), "exclude": [],
         "collector": {"workers": 1}},
        {"name": "claude-code-local", "enabled": False}, {"name": "kiro", "enabled": False}]}), "utf-8")
    return run_pass(host, load_config(host, str(config)))


def _plan(host: PluginHost, work: Path, bodies: Path, projects: Path, new: int) -> dict[str, object]:
    """The largest session and its last ``new`` bodies (kept in ``work`` for later runs)."""
    path = work / "plan.json"
    if path.is_file():
        plan: dict[str, object] = json.loads(path.read_text("utf-8"))
        if plan.get("asked") == new:
            return plan
    full = work / "root-full"
    shutil.rmtree(full, ignore_errors=True)
    index_transcripts(projects, full)
    _land(host, full, bodies)
    largest = max((p for p in full.iterdir() if (p / "provider_body").is_dir()),
                  key=lambda p: sum(1 for _ in ProviderBodies(p).entries()))
    srcs = [e.manifest.src for e in ProviderBodies(largest).entries()]
    plan = {"asked": new, "session": largest.name, "bodies": len(srcs), "new": srcs[-new:]}
    path.write_text(json.dumps(plan), "utf-8")
    shutil.rmtree(full)
    return plan


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bodies", type=Path, help="a directory of body files (default: the shared corpus's)")
    parser.add_argument("--transcripts", type=Path, help="their ~/.claude/projects tree")
    parser.add_argument("--new", type=int, default=10, help="bodies of the largest session held back")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--work", type=Path, help="where the roots are kept (default: a temporary directory)")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)
    source = args.bodies or corpus() / "provider-bodies"
    projects = args.transcripts or corpus() / "claude-code" / "projects"
    with tempfile.TemporaryDirectory(prefix="asz-bench-") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        host = PluginHost().load_entry_points()
        plan = _plan(host, work, source, projects, args.new)
        held = [str(name) for name in plan["new"]]  # type: ignore[attr-defined]
        bodies, base = work / "bodies", work / "root-base"
        if not base.is_dir():
            shutil.rmtree(bodies, ignore_errors=True)
            shutil.copytree(source, bodies, copy_function=shutil.copy2)
            for name in held:
                (bodies / name).unlink()
            index_transcripts(projects, base)
            if _land(host, base, bodies).errors:
                print("the first pass failed", file=sys.stderr)
                return 1
        rounds: list[tuple[float, float]] = []
        for n in range(args.rounds):
            root = work / "root-run"
            shutil.rmtree(root, ignore_errors=True)
            shutil.copytree(base, root, symlinks=True)  # copy2: times kept
            for name in held:
                shutil.copy2(source / name, bodies / name)
            wall, cpu = time.perf_counter(), time.process_time()
            if args.profile and n == args.rounds - 1:
                prof = cProfile.Profile()
                summary = prof.runcall(_land, host, root, bodies)
                pstats.Stats(prof).sort_stats("cumulative").print_stats(30)
            else:
                summary = _land(host, root, bodies)
            rounds.append((time.perf_counter() - wall, time.process_time() - cpu))
            if summary.totals.records != len(held) or summary.failed:
                print(f"round {n}: landed {summary.totals.records} of {len(held)} bodies", file=sys.stderr)
                return 1
            if n < args.rounds - 1:
                for name in held:
                    (bodies / name).unlink()
        later = rounds[1:] or rounds
        print(f"session {plan['session']} ({plan['bodies']} bodies), {len(held)} landed in a pass of their own")
        print("pass wall / CPU, s: " + " ; ".join(f"{w:.3f} / {c:.3f}" for w, c in rounds))
        print(f"median after the first round: {statistics.median(w for w, _ in later):.3f} / "
              f"{statistics.median(c for _, c in later):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
