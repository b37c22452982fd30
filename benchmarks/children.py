"""The processes ``pass.py`` times, each importing what its own work needs and nothing else.

    python benchmarks/children.py floor LISTING            # LISTING: JSON [[path, offset], ...]
    python benchmarks/children.py write-floor LISTING DEST # LISTING: JSON [path, ...]
    python benchmarks/children.py land CONFIG              # passes until nothing is pending

A ratio of the table is one process's CPU over another's, start-ups included, so what a child
imports is part of what it measures. Run as ``pass.py --floor``, the floor's process imported the
harness (``argparse``, ``corpus``, ``cProfile``, ...) and ``asz_core.workers`` before reading a
line: about 0.14 s of CPU that is not reading, parsing or digesting, and asz's landing paid the
harness's 0.10 s too (benchmarks/README.md, "The floor and the landing in processes of their
own"). Here both import ``orjson`` and ``hashlib`` (the floor's work, and asz's too), the
landing asz's own modules when it runs; each prints the seconds its work took inside the process.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time

import orjson  # the floor's parser; asz's landing imports it as well


def floor(ranges: list[tuple[str, int]]) -> int:
    """Read each file from its offset; ``orjson.loads`` and SHA-256 every complete line."""
    size = 0
    for path, start in ranges:
        with open(path, "rb") as f:
            f.seek(start)
            for line in f:
                raw = line[:-1] if line.endswith(b"\n") else line
                size += len(line)
                try:  # noqa: SIM105 - a context manager per line would slow the floor it measures
                    orjson.loads(raw)
                except orjson.JSONDecodeError:
                    pass
                hashlib.sha256(raw).digest()
    return size


def write_floor(files: list[str], dest: str) -> int:
    """Copy each file into a new directory under ``dest`` as a durable landing writes one."""
    size = 0
    for n, path in enumerate(files):
        directory = os.path.join(dest, str(n))
        os.mkdir(directory, 0o700)
        final = os.path.join(directory, os.path.basename(path))
        temporary = final + ".tmp"
        with open(path, "rb") as source, open(temporary, "xb") as out:
            while chunk := source.read(1 << 20):
                out.write(chunk)
                size += len(chunk)
            out.flush()
            os.fsync(out.fileno())
        os.rename(temporary, final)
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    return size


def land(config: str) -> dict[str, object]:
    """Passes until nothing is pending, no parse: what landing costs. What they landed, and the
    seconds they took by their own account."""
    import gc

    # as the command line starts a pass (asz_core.cli): the collector off while start-up builds
    # what lives as long as the process, then on with that frozen out of its walks
    gc.disable()
    from asz_core.config import load_config
    from asz_core.host import PluginHost
    from asz_core.pipeline import run_pass

    host = PluginHost().load_entry_points()
    loaded = load_config(host, config)
    gc.freeze()
    gc.enable()
    elapsed, sessions, landed = 0.0, 0, 0
    while True:
        summary = run_pass(host, loaded).as_dict()
        elapsed += float(summary["elapsed_s"])
        sessions = max(sessions, int(summary["sessions"]))
        landed += int(summary["landed"])
        if not summary["pending"] or summary["errors"] or summary["conflicts"]:
            break
    return {"elapsed_s": elapsed, "sessions": sessions, "landed": landed}


def main(argv: list[str]) -> int:
    command, *args = argv
    if command == "land":
        print(json.dumps(land(args[0])))
        import gc

        gc.freeze()  # as the command line ends: what is alive goes with the process, not walked again
        return 0
    if command not in ("floor", "write-floor"):
        print(__doc__, file=sys.stderr)
        return 2
    with open(args[0], "rb") as listing:
        listed = json.loads(listing.read())
    started = time.perf_counter()
    if command == "floor":
        floor([(path, offset) for path, offset in listed])
    else:
        write_floor(listed, args[1])
    print(f"{time.perf_counter() - started:.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
