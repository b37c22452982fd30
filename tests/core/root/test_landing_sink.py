"""A landing file's bytes reach the descriptor once each, in order: what the writer hands the
sink, the file holds, whether a chunk is gathered or written at once (``root/landing.py``), the
module compiled by mypyc or not; and a large file's writeback is started as it is written, a small
file's left to its durable step."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from asz_core.root import durable, landing


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


def _sink_writes(path: Path, chunks: list[bytes], monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int, int]]:
    """What the sink asks the disk to start writing (``sync_file_range``'s offset, length and
    flags) while it writes ``chunks`` into a new file at ``path`` and flushes it, as a landing's
    close does."""
    started: list[tuple[int, int, int]] = []

    def record(fd: int, offset: int, length: int, flags: int) -> int:
        started.append((offset, length, flags))
        return 0

    monkeypatch.setattr(durable, "_writeback_fn", record)  # a global the compiled module reads too
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        sink = landing._FileSink(fd)
        for chunk in chunks:
            sink.write(chunk)
        sink.flush()
    finally:
        os.close(fd)
    assert path.read_bytes() == b"".join(chunks)
    return started


def test_a_large_file_has_its_writeback_started_as_it_goes_and_all_of_it_by_its_close(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [b"%07d\n" % n for n in range(400_000)]  # 3.2 MB in small chunks, gathered a buffer at a time
    started = _sink_writes(tmp_path / "large", lines, monkeypatch)
    size = len(b"".join(lines))
    assert len(started) == size // landing._BUFFER + 1  # a start each full buffer, and the rest at the close
    assert all(flags == durable._SYNC_FILE_RANGE_WRITE for _, _, flags in started)
    ends = [0] + [offset + length for offset, length, _ in started]
    assert [offset for offset, _, _ in started] == ends[:-1] and ends[-1] == size  # every byte once, in order


def test_a_file_smaller_than_the_buffer_is_left_to_its_durable_step(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _sink_writes(tmp_path / "small", [b"x" * 1000] * 100, monkeypatch) == []


def test_a_chunk_as_large_as_the_buffer_is_started_with_what_was_gathered_before_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chunks = [b"a" * 10, b"b" * landing._BUFFER, b"c" * 10]
    started = _sink_writes(tmp_path / "whole", chunks, monkeypatch)
    first = 10 + landing._BUFFER
    assert [(offset, length) for offset, length, _ in started] == [(0, first), (first, 10)]
