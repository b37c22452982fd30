"""A landing file's bytes reach the descriptor once each, in order: what the writer hands the
sink, the file holds, whether a chunk is gathered or written at once (``root/landing.py``), the
module compiled by mypyc or not."""

from __future__ import annotations

import os
from pathlib import Path

from asz_core.root import landing


def test_the_sink_writes_every_chunk_once_in_order_gathered_or_whole(tmp_path: Path) -> None:
    small = [b"%d\n" % n for n in range(1000)]
    large = b"x" * (landing._BUFFER + 7)  # written at once, after what was gathered before it
    fd = os.open(tmp_path / "file", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        sink = landing._FileSink(fd)
        for chunk in small:
            sink.write(chunk)
        sink.write(large)
        sink.write(b"end\n")
        sink.flush()
        sink.flush()  # nothing gathered: nothing written again
    finally:
        os.close(fd)
    assert (tmp_path / "file").read_bytes() == b"".join(small) + large + b"end\n"
