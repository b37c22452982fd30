"""What the benchmark scripts share: finding the corpus, timing, printing a table."""

from __future__ import annotations

import os
import resource
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("ASZ_SHARED", REPO.parent / "shared"))


def corpus() -> Path:
    path = SHARED / "corpus"
    if not path.is_dir():
        sys.exit(f"the shared corpus is not at {path}; set ASZ_SHARED to the directory holding corpus/")
    return path


def jsonl_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.jsonl") if p.is_file())


def lines_of(paths: Sequence[Path]) -> Iterator[bytes]:
    for path in paths:
        with open(path, "rb") as f:
            for chunk in f:
                if chunk.endswith(b"\n"):
                    yield chunk[:-1]


def median_time(fn: Callable[[], object], repeat: int = 5) -> float:
    """Median wall time of ``repeat`` runs after one warm-up run."""
    fn()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def table(rows: Sequence[Sequence[object]], heads: Sequence[str]) -> str:
    text = [[str(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in text)) for i, h in enumerate(heads)]
    out = ["  ".join(h.ljust(w) for h, w in zip(heads, widths, strict=True))]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in text]
    return "\n".join(out)
