"""A live writer appends lines (some written in two halves) while passes run back to back."""

from __future__ import annotations

import threading
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
    done = threading.Event()
    ended = threading.Condition()  # notified as each pass ends
    passes = 0

    def a_whole_pass() -> None:
        """Wait until a pass that started after this call has ended (the one running may not see
        what was just written)."""
        with ended:
            target = passes + 2
            ended.wait_for(lambda: passes >= target or done.is_set())

    def write() -> None:
        try:
            with open(log, "ab", buffering=0) as f:
                for i in range(1, total + 1):
                    line = b'{"n":%d,"time":"2026-01-01T00:00:00Z","text":"%s"}\n' % (i, b"w" * (i * 37 % 500))
                    if i % 3 == 0:  # a write in two halves, the way a crash or a slow disk leaves it
                        f.write(line[: len(line) // 2])
                        a_whole_pass()  # a pass meets the half line
                        f.write(line[len(line) // 2:])
                    else:
                        f.write(line)  # while a pass may be reading
        finally:
            done.set()

    asz_pass.configure(**jsonl_config(src, max_delta_bytes=4096))
    writer = threading.Thread(target=write)
    writer.start()
    try:
        while not done.is_set():
            summary = asz_pass.run()
            assert not summary.failed, summary.errors
            with ended:
                passes += 1
                ended.notify_all()
    finally:
        with ended:  # a failed pass must not leave the writer waiting
            done.set()
            ended.notify_all()
        writer.join()
    asz_pass.run()
    records = [r for _, r in records_of(asz_pass.root, "live")]
    assert [r.ord for r in records] == list(range(1, total + 1))
    assert all(r.parts[0].k == "data" for r in records), "a partial line landed as not-JSON"
    assert passes > total // 3, "a pass ran while each split line was half written"
    assert_root_verifies(asz_pass.root)
