"""The line reader hands out every complete line once, and its tail digest, kept from the blocks
it read, is the digest of the MiB before any line end a cursor may move to."""

from __future__ import annotations

import hashlib
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asz_core.collect.lines import BLOCK_BYTES, TAIL_BYTES, LineReader

_SIZES = st.sampled_from([1, 2, 100, 5000, BLOCK_BYTES - 1, BLOCK_BYTES, BLOCK_BYTES + 1, 2 * BLOCK_BYTES + 7,
                          TAIL_BYTES // 2, TAIL_BYTES - 1, TAIL_BYTES, TAIL_BYTES + 3])


def _digest_before(data: bytes, end: int) -> str:
    return hashlib.sha256(data[max(0, end - TAIL_BYTES):end]).hexdigest()


@settings(max_examples=40)
@given(st.sampled_from([0, 1, 100, 5000, TAIL_BYTES - 1, TAIL_BYTES, TAIL_BYTES + 3]),
       st.lists(_SIZES, max_size=6), st.integers(0, 255), st.integers(0, 3000))
def test_lines_and_tail_digests(tmp_path_factory: pytest.TempPathFactory, seed_size: int, sizes: list[int], byte: int,
                                partial: int) -> None:
    seed = bytes([byte]) * (seed_size - 1) + b"\n" if seed_size else b""
    lines = [bytes([(byte + n + 1) % 256 or 1]).replace(b"\n", b"m") * (size - 1) for n, size in enumerate(sizes)]
    data = seed + b"".join(line + b"\n" for line in lines) + b"x" * partial  # the partial line waits
    path = tmp_path_factory.mktemp("tail") / "source.jsonl"
    path.write_bytes(data)
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            before = seed[-TAIL_BYTES:]
            reader = LineReader(fd, len(seed), before)
            got = []
            for raw, offset in reader.lines():
                # a cursor may stop before the line just handed out (it did not fit) ...
                assert reader.tail_digest(offset) == _digest_before(data, offset)
                got.append((raw, offset))
            offsets = [len(seed) + sum(len(x) + 1 for x in lines[:n]) for n in range(len(lines))]
            assert got == list(zip(lines, offsets, strict=True))
            end = len(seed) + sum(len(x) + 1 for x in lines)
            if lines:  # ... or after it
                assert reader.tail_digest(end) == _digest_before(data, end)
        finally:
            os.close(fd)
    finally:
        path.unlink()
