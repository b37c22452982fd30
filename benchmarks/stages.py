"""Where a cold pass spends its time per transcript line, stage by stage, beside the floor.

    python benchmarks/stages.py                 # the Claude Code transcripts of ../shared/corpus
    python benchmarks/stages.py --corpus DIR    # a corpus corpus.py wrote (its .claude/projects)

The append collector's path runs over every line up to one stage, then up to the next, each line
let go before the next is read, as in a pass (so the garbage collector's share is counted as it
is in a pass); a stage's time is the difference. The stages: reading the files into lines,
parsing each (``SourceLine``), converting it (the ``claude-code/1`` dialect), its ``sha``,
encoding the record, and writing it (the writer's digest and times; the bytes go nowhere). The
floor is the same files read, ``orjson.loads`` and SHA-256 per line, as in ``pass.py``. Figures
are µs of this process's CPU time per line (so other processes on the machine weigh less), the
median of ``--repeat`` rounds after a warm-up, every stage run once a round.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import corpus, jsonl_files, table

from asz_adapters.claude_code_local.dialect import ClaudeCodeDialect
from asz_adapters.claude_code_local.source_facts import TRANSCRIPT, SourceFacts
from asz_core.collect.lines import LineReader, TooLong
from asz_core.collect.source import SourceLine, convert_line, line_sha
from asz_core.sessiondata import Header, SessionDataWriter
from asz_core.sessiondata.writer import encode_fields


class _NullSink:
    def write(self, chunk: bytes) -> int:
        return len(chunk)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, help="a corpus written by corpus.py")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--limit-mb", type=float, default=40.0, help="read at most this much (default 40 MB)")
    args = parser.parse_args(argv)
    root = args.corpus / ".claude" / "projects" if args.corpus else corpus() / "claude-code" / "projects"
    files: list[Path] = []
    total = 0
    for path in jsonl_files(root):
        if total >= args.limit_mb * 1e6:
            break
        files.append(path)
        total += path.stat().st_size

    def floor() -> None:
        for path in files:
            with open(path, "rb") as f:
                for chunk in f:
                    orjson.loads(chunk[:-1] if chunk.endswith(b"\n") else chunk)
                    hashlib.sha256(chunk).digest()

    def through(stage: int) -> Callable[[], object]:
        """The collector's path up to ``stage`` (1: read, ... 6: write), each line let go
        before the next, as in a pass."""
        def run() -> None:
            for path in files:  # one file landed per source, as the 100mb preset's sessions are
                writer = SessionDataWriter(_NullSink(), Header(  # type: ignore[arg-type]
                    kind="transcript", session="s", src="x", dialect="claude-code/1", adapter="bench"))
                dialect = ClaudeCodeDialect(SourceFacts(TRANSCRIPT, "s", "main"))
                with open(path, "rb") as f:
                    for n, (raw, off) in enumerate(LineReader(f.fileno(), 0).lines(), start=1):
                        if stage < 2 or isinstance(raw, TooLong):  # a line past the read limit is never held
                            continue
                        line = SourceLine(raw, n, off)
                        if stage < 3:
                            continue
                        record = convert_line(dialect, line)
                        record["ord"], record["off"], record["bytes"] = n, off, len(raw)
                        if stage < 4:
                            continue
                        record["sha"] = line_sha(raw)
                        if stage < 5:
                            continue
                        encoded = encode_fields(record)
                        if stage < 6:
                            continue
                        writer.write(encoded, n, off, len(raw), record.get("time"))
                writer.close()
        return run

    count = size = 0
    for path in files:
        with open(path, "rb") as f:
            for raw, _ in LineReader(f.fileno(), 0).lines():
                count += 1
                size += (raw.size if isinstance(raw, TooLong) else len(raw)) + 1
    stages = ["read the files into lines", "parse (SourceLine)", "convert (claude-code/1)",
              "the record's sha", "encode the record", "write it (digest, times)"]
    runs: dict[str, list[float]] = {name: [] for name in ["floor", *stages]}
    jobs: list[tuple[str, Callable[[], object]]] = [("floor", floor)]
    jobs += [(name, through(n)) for n, name in enumerate(stages, start=1)]
    for _, job in jobs:
        job()  # the warm-up
    for _ in range(args.repeat):  # round by round, so a slower minute weighs on every stage
        for name, job in jobs:
            started = time.process_time()
            job()
            runs[name].append(time.process_time() - started)
    floor_s = statistics.median(runs["floor"])
    rows = []
    sum_us = 0.0
    for name in stages:
        us = statistics.median(runs[name]) / count * 1e6
        rows.append((name, f"{us - sum_us:.2f}"))
        sum_us = us
    floor_us = floor_s / count * 1e6
    rows.append(("all of the above", f"{sum_us:.2f}"))
    rows.append(("floor (read, orjson.loads, sha256)", f"{floor_us:.2f}"))
    print(f"{len(files)} files, {count} lines, {size / 1e6:.1f} MB ({size / count:.0f} bytes a line); "
          f"CPU µs per line, median of {args.repeat} rounds after a warm-up; per-line work is "
          f"{floor_us / sum_us:.0%} of the floor's speed")
    print(table(rows, ("stage", "µs per line")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
