"""Where a cold pass spends its time per transcript line, stage by stage, beside the floor.

    python benchmarks/stages.py                 # the Claude Code transcripts of ../shared/corpus
    python benchmarks/stages.py --corpus DIR    # a corpus corpus.py wrote (its .claude/projects)
    python benchmarks/stages.py --by-type       # and the conversion's CPU by the lines' type

The append collector's path runs over every line up to one stage, then up to the next, each line
let go before the next is read, as in a pass (so the garbage collector's share is counted as it
is in a pass); a stage's time is the difference. The stages: reading the files into lines,
parsing each (``SourceLine``), converting it (the ``claude-code/1`` dialect), its ``sha``,
encoding the record, and writing it (the writer's digest and times; the bytes go nowhere).
Figures are µs of this process's CPU time per line (so other processes on the machine weigh
less), the median of ``--repeat`` rounds after a warm-up, every run once a round. Beside them:

* the parse's proof: the parse less the parse of each line told what it proves (as a pass whose
  prover proved its lines parses them, :mod:`asz_core.collect.prove`);
* issue 21's "minimal loop": the C-level work a record needs and nothing else (the line parsed,
  its ``sha`` and the file's digest, a record of its place, id, time and the line as one part
  encoded, written to the same sink), with no dialect, no proof and no checks;
* the floor: the same files read, ``orjson.loads`` and SHA-256 per line, as in ``pass.py``;
* ``--by-type``: the conversion's CPU for the lines of each common ``type``, measured as the
  conversion of every line less that of every line but those (each run the pass's streaming
  path), per line of that type and per line of the corpus.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import statistics
import sys
import time
from collections.abc import Callable, Iterator
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

#: what a line that is not an object is asked for its id and time
_NOTHING: dict[str, str] = {}


class _NullSink:
    def write(self, chunk: bytes) -> int:
        return len(chunk)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, help="a corpus written by corpus.py")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--limit-mb", type=float, default=40.0, help="read at most this much (default 40 MB)")
    parser.add_argument("--by-type", action="store_true", help="the conversion's CPU by the lines' type")
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

    def minimal_loop() -> None:
        for path in files:
            digest, sink, off = hashlib.sha256(), _NullSink(), 0
            with open(path, "rb") as f:
                for n, chunk in enumerate(f, start=1):
                    raw = chunk[:-1] if chunk.endswith(b"\n") else chunk
                    value = orjson.loads(raw)
                    get = value.get if type(value) is dict else _NOTHING.get
                    encoded = orjson.dumps({
                        "ord": n, "off": off, "bytes": len(raw), "sha": line_sha(raw), "id": get("uuid"),
                        "time": get("timestamp"), "parts": [{"k": "data", "data": orjson.Fragment(raw)}]},
                        option=orjson.OPT_APPEND_NEWLINE)
                    digest.update(encoded)
                    sink.write(encoded)
                    off += len(chunk)

    count = size = 0
    types: collections.Counter[str | None] = collections.Counter()
    #: each line's proof, in the order read, as a prover hands them to a pass
    proofs: list[int] = []
    for path in files:
        for raw in _lines(path):
            count += 1
            size += (raw.size if isinstance(raw, TooLong) else len(raw)) + 1
            if not isinstance(raw, TooLong):
                line = SourceLine(raw)
                types[_type_of(line)] += 1
                proofs.append(line.proof)

    def told() -> None:
        """The parse of each line told what it proves (:mod:`asz_core.collect.prove`)."""
        told_proofs = iter(proofs)
        for path in files:
            with open(path, "rb") as f:
                for n, (raw, off) in enumerate(LineReader(f.fileno(), 0).lines(), start=1):
                    if not isinstance(raw, TooLong):
                        SourceLine(raw, n, off, proved=next(told_proofs))

    def through(stage: int, but: frozenset[str | None] | None = None) -> Callable[[], object]:
        """The collector's path up to ``stage`` (1: read, ... 6: write), each line let go
        before the next, as in a pass; ``but``: up to the conversion, each line's ``type`` read,
        and the lines of these types not converted."""
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
                        if but is not None and _type_of(line) in but:
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

    stages = ["read the files into lines", "parse (SourceLine)", "convert (claude-code/1)",
              "the record's sha", "encode the record", "write it (digest, times)"]
    jobs: list[tuple[str, Callable[[], object]]] = [("floor", floor), ("minimal", minimal_loop), ("told", told)]
    jobs += [(name, through(n)) for n, name in enumerate(stages, start=1)]
    #: the types measured each by itself (a twentieth of the lines or more, most lines first: a
    #: difference of two totals is too noisy for fewer); the rest together
    kinds: list[tuple[str, frozenset[str | None]]] = []
    if args.by_type:
        common = [kind for kind, lines in types.most_common() if lines * 20 >= count]
        kinds = [(str(kind), frozenset([kind])) for kind in common]
        kinds.append(("every other type", frozenset(types) - frozenset(common)))
        jobs.append(("all types", through(3, frozenset())))
        jobs += [(f"but {name}", through(3, but)) for name, but in kinds]
    runs: dict[str, list[float]] = {name: [] for name, _ in jobs}
    for _, job in jobs:
        job()  # the warm-up
    for _ in range(args.repeat):  # round by round, so a slower minute weighs on every stage
        for name, job in jobs:
            started = time.process_time()
            job()
            runs[name].append(time.process_time() - started)
    rows = []
    sum_us = 0.0
    for name in stages:
        us = _us(runs[name], count)
        rows.append((name, f"{us - sum_us:.2f}"))
        sum_us = us
    floor_us = _us(runs["floor"], count)
    rows.append(("all of the above", f"{sum_us:.2f}"))
    proof_us = _us(runs["parse (SourceLine)"], count) - _us(runs["told"], count)
    rows.append(("(of the parse: its proof, told it as by a prover)", f"{proof_us:.2f}"))
    rows.append(("minimal loop (no dialect, no proof)", f"{_us(runs['minimal'], count):.2f}"))
    rows.append(("floor (read, orjson.loads, sha256)", f"{floor_us:.2f}"))
    print(f"{len(files)} files, {count} lines, {size / 1e6:.1f} MB ({size / count:.0f} bytes a line); "
          f"CPU µs per line, median of {args.repeat} rounds after a warm-up; per-line work is "
          f"{floor_us / sum_us:.0%} of the floor's speed")
    print(table(rows, ("stage", "µs per line")))
    if kinds:
        every = statistics.median(runs["all types"])
        by_type = []
        for name, but in kinds:
            lines = sum(types[kind] for kind in but)
            cost = every - statistics.median(runs[f"but {name}"])
            per_line = f"{cost / lines * 1e6:.2f}" if lines else "-"
            by_type.append((name, f"{lines:,}", per_line, f"{cost / count * 1e6:.2f}"))
        print()
        print(table(by_type, ("the conversion, lines of type", "lines", "µs per line of it", "µs per line of all")))
    return 0


def _lines(path: Path) -> Iterator[bytes | TooLong]:
    with open(path, "rb") as f:
        for raw, _ in LineReader(f.fileno(), 0).lines():
            yield raw


def _type_of(line: SourceLine) -> str | None:
    """A line's ``type`` (``None``: it names no text, or is no object)."""
    value = line.value
    kind = value.get("type") if type(value) is dict else None
    return kind if isinstance(kind, str) else None


def _us(seconds: list[float], count: int) -> float:
    return statistics.median(seconds) / count * 1e6


if __name__ == "__main__":
    raise SystemExit(main())
