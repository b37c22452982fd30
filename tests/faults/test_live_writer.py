"""A live writer appends lines (some written in two halves) while passes run back to back."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from asz_core.testing import PassRunner
from tests.helpers import jsonl_config, records_of


def test_every_line_lands_once_and_no_partial_line_ever_lands(asz_pass: PassRunner, tmp_path: Path,
                                                              assert_root_verifies) -> None:
    src = tmp_path / "src"
    src.mkdir()
    log = src / "live.jsonl"
    log.write_bytes(b"")
    total = 60
    stop = threading.Event()

    def write() -> None:
        with open(log, "ab", buffering=0) as f:
            for i in range(1, total + 1):
                line = b'{"n":%d,"time":"2026-01-01T00:00:00Z","text":"%s"}\n' % (i, b"w" * (i * 37 % 500))
                if i % 3 == 0:  # a write in two halves, the way a crash or a slow disk leaves it
                    f.write(line[: len(line) // 2])
                    time.sleep(0.03)
                    f.write(line[len(line) // 2:])
                else:
                    f.write(line)
                time.sleep(0.1)  # ~10 Hz
        stop.set()

    asz_pass.configure(**jsonl_config(src, max_delta_bytes=4096))
    writer = threading.Thread(target=write)
    writer.start()
    passes = 0
    while not stop.is_set():
        summary = asz_pass.run()
        assert not summary.failed, summary.errors
        passes += 1
    writer.join()
    asz_pass.run()
    records = [r for _, r in records_of(asz_pass.root, "live")]
    assert [r.ord for r in records] == list(range(1, total + 1))
    assert all(r.parts[0].k == "data" for r in records), "a partial line landed as not-JSON"
    assert passes > 5
    assert_root_verifies(asz_pass.root)
