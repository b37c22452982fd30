"""What a new session costs in user-space instructions: two landings under callgrind, the
difference a session.

A session's thread CPU moves with this VM's file system from one minute to the next (a create
after a large deletion costs three to six times as much: ``create_cost.py``), and pairs of whole
processes tell a change of a few percent from noise only over many pairs. The instructions a
landing executes in user space do not move: the same code over the same sessions, with the hash
seed fixed, executes the same count to a few parts in ten thousand, so a change to a new
session's path is measured to a tenth of a percent here. What the kernel does for it (the
creates, the page cache) is not counted: whole-process pairs measure that.

1. the sessions are ``many-small``'s (``session_phases.sessions_and_roots``), each transcript cut
   to its first ``--lines`` lines, in two sets: the project directories in name order until
   ``--few`` sessions, and until ``--many``;
2. each set is landed once as it will be measured, uncounted (what an editable install compiles
   to bytecode is compiled then, and the entry points' cache written: a first landing counted
   some 0.3 G more), then under ``valgrind --tool=callgrind`` by ``children.py land`` with
   ``collector.workers`` from ``--workers`` (1) and ``PYTHONHASHSEED=0``, each into a new root;
3. printed: each landing's instructions, and their difference over the difference of their
   sessions: a session's, the start-up (the same in both) cancelled. With ``--workers N`` the
   sessions land in N forked processes and the count is the pass's own process's (callgrind
   counts each forked process on its own, a worker's from what the pass had run when it forked):
   what the pass spends a session beside its workers. That count is not exact as the others
   are: how many claims a task holds is sized from the CPU its workers report, and what the pass
   does while it waits for them follows their timing, so runs of the same build differ by up to
   a fifth.

It needs valgrind (an OS package); the roots go at the end, as ``session_phases.py``'s do.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import session_phases  # found on the path just given: the sessions and the configuration

CHILDREN = Path(__file__).resolve().parent / "children.py"
#: what callgrind says when a process it ran ends: its pid and its count
_COLLECTED = re.compile(rb"^==(\d+)== Collected : (\d+)", re.MULTILINE)


def subset(projects: Path, sessions: int, out: Path) -> tuple[Path, int]:
    """The project directories of ``projects`` in name order, copied under ``out`` (once) until
    they hold ``sessions`` main transcripts or more; how many they hold."""
    held = 0
    chosen = []
    for project in sorted(p for p in projects.iterdir() if p.is_dir()):
        if held >= sessions:
            break
        chosen.append(project)
        held += sum(1 for _ in project.glob("*.jsonl"))
    if not (out / ".done").is_file():
        shutil.rmtree(out, ignore_errors=True)
        for project in chosen:
            shutil.copytree(project, out / project.name)
        (out / ".done").touch()
    return out, held


def instructions(config: Path, root: Path, scratch: Path) -> int:
    """The user-space instructions of one landing of ``config`` (into ``root``) under callgrind:
    the process it starts (not its workers)."""
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    command = [sys.executable, str(CHILDREN), "land", str(config)]
    subprocess.run(command, env=env, check=True, capture_output=True)  # uncounted: see step 2
    shutil.rmtree(root)
    out = scratch / "callgrind.out"
    done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *command], env=env,
                          check=True, capture_output=True)
    out.unlink(missing_ok=True)
    counts = dict(_COLLECTED.findall(done.stderr))
    started = re.search(rb"^==(\d+)==", done.stderr, re.MULTILINE)  # the process valgrind started
    if started is None or started.group(1) not in counts:
        raise SystemExit(f"callgrind said no count: {done.stderr[-500:].decode(errors='replace')}")
    return int(counts[started.group(1)])


def main() -> None:
    parser = session_phases.parser(__doc__.splitlines()[0])
    parser.add_argument("--few", type=int, default=100, help="sessions of the smaller landing (at least)")
    parser.add_argument("--many", type=int, default=400, help="sessions of the larger landing (at least)")
    parser.add_argument("--workers", type=int, default=1,
                        help="collector.workers (more than 1: the pass's own process is counted, "
                             "to a fifth: its work follows its workers' timing)")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    projects, roots = session_phases.sessions_and_roots(args)
    counted: list[tuple[int, int]] = []
    try:
        for name, wanted in (("few", args.few), ("many", args.many)):
            chosen, sessions = subset(projects, wanted, args.work / f"subset-{args.lines or 'all'}-{wanted}")
            config = session_phases.write_config(roots / f"{name}.yaml", roots / name, chosen, args.workers)
            counted.append((sessions, instructions(config, roots / name, roots)))
    finally:
        shutil.rmtree(roots, ignore_errors=True)
    (few, few_count), (many, many_count) = counted
    if many <= few:
        raise SystemExit(f"--many ({many} sessions) must hold more sessions than --few ({few})")
    kept = f"the first {args.lines} lines of each transcript" if args.lines else "whole transcripts"
    where = "one process" if args.workers <= 1 else f"{args.workers} workers, the pass's own process"
    print(f"new sessions ({kept}), {where}, user-space instructions (callgrind, hash seed 0):")
    print(f"  {few:>6,} sessions  {few_count / 1e9:8.3f} G")
    print(f"  {many:>6,} sessions  {many_count / 1e9:8.3f} G")
    print(f"  a session: {(many_count - few_count) / (many - few) / 1e6:.4f} M instructions")


if __name__ == "__main__":
    main()
