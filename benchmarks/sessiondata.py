"""Writer and reader throughput of the Session Data library, beside the floor of the same run.

The floor is what any collector must do to every line anyway: ``orjson.loads`` and SHA-256.
The writer row converts each line to a record with the source's own JSON as one data part (the
fast path, or the exact slow path where a line needs it) and writes it, digest included; the
reader row reads those files back strictly, type checks and all.

    python benchmarks/sessiondata.py            # the Claude Code transcripts of ../shared/corpus
"""

from __future__ import annotations

import hashlib
import io
import sys
import tempfile
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import corpus, jsonl_files, lines_of, median_time, table

from asz_core.collect.source import SourceLine, line_sha
from asz_core.sessiondata import Header, Part, Record, SessionDataWriter, open_file


def main() -> None:
    lines = list(lines_of(jsonl_files(corpus() / "claude-code" / "projects")))
    size = sum(len(line) for line in lines)

    def floor() -> None:
        for line in lines:
            orjson.loads(line)
            hashlib.sha256(line).digest()

    def write(sink: io.BufferedIOBase) -> None:
        writer = SessionDataWriter(sink, Header(kind="transcript", session="s", src="x", dialect="bench/1",
                                                adapter="bench/0"))
        off = 0
        for n, raw in enumerate(lines, start=1):
            line = SourceLine(raw, n, off)
            record = (Record(parts=[Part.data_part(line.data_at())]) if line.is_json
                      else line.unknown_record())
            record.ord, record.off, record.bytes, record.sha = n, off, len(raw), line_sha(raw)
            writer.write(record)
            off += len(raw) + 1
        writer.close()

    with tempfile.TemporaryDirectory() as tmp:
        landed = Path(tmp) / "bench.sd"
        with open(landed, "wb") as f:
            write(f)  # type: ignore[arg-type]

        def read() -> None:
            for _ in open_file(landed):
                pass

        t_floor = median_time(floor)
        t_write = median_time(lambda: write(io.BytesIO()))  # type: ignore[arg-type]
        t_read = median_time(read)
        written = landed.stat().st_size
    mb = size / 1e6
    rows = [("floor (orjson.loads + sha256)", f"{t_floor:.3f}", f"{mb / t_floor:.0f}", "1.00"),
            ("writer (convert + write + digest)", f"{t_write:.3f}", f"{mb / t_write:.0f}", f"{t_floor / t_write:.2f}"),
            ("reader (strict, streaming)", f"{t_read:.3f}", f"{mb / t_read:.0f}", f"{t_floor / t_read:.2f}")]
    print(f"{len(lines)} source lines, {mb:.1f} MB; landed {written / 1e6:.1f} MB; median of 5 after a warm-up")
    print(table(rows, ("what", "seconds", "MB/s (source)", "x floor speed")))


if __name__ == "__main__":
    main()
