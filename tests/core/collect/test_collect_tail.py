"""The line reader hands out every complete line once, and its tail digest, kept from the blocks
it read, is the digest of the MiB before any line end a cursor may move to."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asz_core.collect.lines import BLOCK_BYTES, TAIL_BYTES, LineReader
from tests.helpers import examples

_SIZES = st.sampled_from([1, 2, 100, 5000, BLOCK_BYTES - 1, BLOCK_BYTES, BLOCK_BYTES + 1, 2 * BLOCK_BYTES + 7,
                          TAIL_BYTES // 2, TAIL_BYTES - 1, TAIL_BYTES, TAIL_BYTES + 3])


def _digest_before(data: bytes, end: int) -> str:
    return hashlib.sha256(data[max(0, end - TAIL_BYTES):end]).hexdigest()


@settings(max_examples=examples(40))
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


def test_a_held_offset_keeps_its_tail_digest_however_far_lines_are_read_past_it(tmp_path: Path) -> None:
    # a collector converting lines ahead of landing them (asz_core.collect.split) may stop at an
    # offset several MiB behind the last line read: its cursor's digest is of those very bytes
    lines = [b"%06d" % i + b"x" * (900 + i % 300) for i in range(12_000)]
    data = b"\n".join(lines) + b"\n"
    path = tmp_path / "source"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        reader = LineReader(fd, 0)
        ends = []
        for raw, offset in reader.lines():
            assert isinstance(raw, bytes)
            ends.append(offset + len(raw) + 1)
            if len(ends) == 100:
                reader.hold(ends[-1])
        assert data.count(b"\n") == len(ends) and ends[-1] - ends[99] > 4 * TAIL_BYTES
        for end in (ends[99], ends[100], ends[-1]):
            assert reader.tail_digest(end) == hashlib.sha256(data[max(0, end - TAIL_BYTES):end]).hexdigest()
        unheld = LineReader(fd, 0)
        for _ in unheld.lines():
            pass
        with pytest.raises(AssertionError):
            unheld.tail_digest(ends[99])
    finally:
        os.close(fd)


@pytest.mark.parametrize("size", [0, 5, 16, 17, 1 << 20], ids=["empty then", "mid-line then", "exact", "a byte more",
                                                               "larger"])
def test_the_size_a_reader_is_given_never_changes_the_lines_it_reads(tmp_path: Path, size: int) -> None:
    # the size sizes only the first read: a source that grew past it since is read on as a whole block
    path = tmp_path / "source.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":22}\n{"c"')
    fd = os.open(path, os.O_RDONLY)
    try:
        reader = LineReader(fd, 0, size=size)
        assert list(reader.lines()) == [(b'{"a":1}', 0), (b'{"b":22}', 8)]
        assert reader.waiting == 4
        assert reader.tail_digest(17) == hashlib.sha256(b'{"a":1}\n{"b":22}\n').hexdigest()
    finally:
        os.close(fd)


def test_a_source_longer_than_a_block_reads_the_same_with_its_size_given(tmp_path: Path) -> None:
    path = tmp_path / "source.jsonl"
    lines = [b"x" * 1000 + str(n).encode() for n in range(BLOCK_BYTES // 500)]
    path.write_bytes(b"\n".join(lines) + b"\n")
    fd = os.open(path, os.O_RDONLY)
    try:
        for size in (None, 10, os.fstat(fd).st_size):
            assert [line for line, _ in LineReader(fd, 0, size=size).lines()] == lines
    finally:
        os.close(fd)
