"""What crosses the pipes between a pass and the workers converting a large source's lines
(:mod:`asz_core.collect.split`): a chunk reaches a worker as its whole lines, a converted chunk
comes back whole, and a message cut short, or a worker that dies, fails the source by name
instead of landing less."""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import os
import select
import threading
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from asz_core.collect import SourceLine, pipes, split
from asz_core.collect.lines import LineReader
from asz_core.collect.split import ConversionFailed, SplitDialect
from asz_core.sessiondata import RecordFields, data_part, record


class _Counting:
    """A dialect that counts its lines, in parts it joins (as an index would)."""

    name = "test/1"
    reads_non_json = False

    def __init__(self, seen: int = 0) -> None:
        self.seen = seen

    def convert(self, line: SourceLine) -> RecordFields:
        self.seen += 1
        return record(from_="runtime", parts=[data_part(line.data_at())])

    def split(self) -> _Counting:
        return _Counting()

    def join(self, part: SplitDialect) -> None:
        assert isinstance(part, _Counting)
        self.seen += part.seen


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read, write = os.pipe()
    yield read, write
    for fd in (read, write):
        with contextlib.suppress(OSError):  # a test closed it
            os.close(fd)


def _converted(lines: list[bytes]) -> split._Converted:
    ends = array("q")
    end = 0
    for line in lines:
        end += len(line) + 1
        ends.append(end)
    count = len(lines)
    return split._Converted(7, b"\n".join(lines), ends, array("q", range(100, 100 + count)),
                            array("q", range(count)), [f"id-{i}" if i % 2 else None for i in range(count)],
                            ["2026-12-03T00:00:00Z" if i % 3 else None for i in range(count)],
                            bytes(i % 2 for i in range(count)), {1: record(from_="runtime")},
                            [(0, "a warning")], _Counting(count))


def _same(a: split._Converted, b: split._Converted) -> None:
    for field in ("first", "lines", "ends", "offs", "sizes", "ids", "times", "follows", "whole", "warnings"):
        assert getattr(a, field) == getattr(b, field), field
    assert isinstance(b.part, _Counting) and isinstance(a.part, _Counting) and b.part.seen == a.part.seen


def test_a_chunk_reaches_a_worker_as_the_whole_lines_of_its_runs_and_nothing_after_them(
        pipe: tuple[int, int]) -> None:
    read, write = pipe
    # each run as the reader hands it out: whole lines, then the start of a line the next block reads again
    chunk = split._Chunk(41, 9000, [b'{"a":1}\n{"b":2}\n{"par', b'{"c":3}\n', b'{"d":4}\n{"e"'])
    pipes.write_all(write, split._chunk_message(chunk))
    pipes.write_all(write, [split._NO_MORE])
    got = split._read_chunk(read)
    assert got is not None and (got.first, got.start) == (41, 9000)
    assert list(got.lines()) == [b'{"a":1}', b'{"b":2}', b'{"c":3}', b'{"d":4}']
    assert split._read_chunk(read) is None  # the pass says there are no more
    os.close(write)
    assert split._read_chunk(read) is None  # or it has ended


def test_a_converted_chunk_comes_back_with_every_record_and_what_the_writer_reads_of_it(
        pipe: tuple[int, int]) -> None:
    read, write = pipe
    sent = _converted([b'{"ord":%d}' % i for i in range(50)])
    pipes.write_all(write, split._done_message(sent))
    _same(sent, _received(read))


def test_a_converted_chunk_larger_than_its_pipe_arrives_whole_however_the_pipe_cuts_it(
        pipe: tuple[int, int]) -> None:
    read, write = pipe
    sent = _converted([b"x" * 3000 + b"%d" % i for i in range(2000)])  # 6 MB: several pipes' worth
    writer = threading.Thread(target=pipes.write_all, args=(write, split._done_message(sent)))
    writer.start()
    got = _received(read)
    writer.join()
    _same(sent, got)


def test_a_chunk_with_no_records_comes_back_empty(pipe: tuple[int, int]) -> None:
    read, write = pipe
    sent = _converted([])
    pipes.write_all(write, split._done_message(sent))
    got = _received(read)
    assert got.lines == b"" and len(got.ends) == 0 and got.first == 7


def test_a_conversion_that_failed_comes_back_as_its_text(pipe: tuple[int, int]) -> None:
    read, write = pipe
    pipes.write_all(write, split._failed_message("ValueError: a dialect's bug"))
    assert split._read_done(read) == "ValueError: a dialect's bug"


@pytest.mark.parametrize("cut", [0, 5, split._DONE.size, split._DONE.size + 30, -1])
def test_a_message_cut_short_is_the_end_of_the_pipe_not_a_shorter_chunk(pipe: tuple[int, int], cut: int) -> None:
    read, write = pipe
    whole = b"".join(bytes(memoryview(part).cast("B")) for part in split._done_message(_converted([b"{}"] * 10)))
    os.write(write, whole[:cut])
    os.close(write)
    with pytest.raises(EOFError):
        split._read_done(read)


def _received(read: int) -> split._Converted:
    got = split._read_done(read)
    assert isinstance(got, split._Converted)
    return got


def _worker(tmp_path: Path) -> split._Worker:
    return split._Worker(multiprocessing.get_context("fork"), _Counting(), tmp_path / "source.jsonl", 1 << 20,
                         1 << 20, 1 << 19, ())


def _a_chunk() -> split._Chunk:
    return split._Chunk(1, 0, [b'{"a":1}\n' * 100])


def test_a_worker_converts_its_chunks_with_a_part_of_the_dialect_of_its_own(tmp_path: Path) -> None:
    worker = _worker(tmp_path)
    try:
        worker.send(_a_chunk())
        done = worker.receive()
    finally:
        worker.stop(True)
    assert len(done.ends) == 100 and done.first == 1 and done.offs[99] == 99 * 8
    assert isinstance(done.part, _Counting) and done.part.seen == 100
    assert worker.process.exitcode == 0


def test_a_worker_that_dies_converting_fails_the_source_by_name_with_its_exit_code(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def dies(*args: Any) -> Any:
        os._exit(7)

    monkeypatch.setattr(split, "_convert_chunk", dies)
    worker = _worker(tmp_path)
    try:
        worker.send(_a_chunk())
        with pytest.raises(ConversionFailed, match=r"source\.jsonl: a worker process converting its lines died "
                                                   r"\(exit code 7\)"):
            worker.receive()
    finally:
        worker.stop(False)


def test_a_worker_that_dies_in_the_middle_of_sending_a_chunk_back_fails_the_source(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    the_pass = os.getpid()
    real = pipes.write_all

    def half_then_dies(fd: int, parts: list[Any]) -> None:
        if os.getpid() == the_pass:
            real(fd, parts)
            return
        whole = b"".join(bytes(memoryview(part).cast("B")) for part in parts)
        os.write(fd, whole[:len(whole) // 2])
        os._exit(9)

    monkeypatch.setattr(split, "write_all", half_then_dies)
    worker = _worker(tmp_path)
    try:
        worker.send(_a_chunk())
        with pytest.raises(ConversionFailed, match=r"died \(exit code 9\)"):
            worker.receive()
    finally:
        worker.stop(False)


def test_a_worker_that_dies_while_another_lives_fails_the_source(tmp_path: Path) -> None:
    # the second is forked after the first: were the first's end of its pipe back open in the
    # second too, the pass would wait on that pipe for as long as the second lives
    first = _worker(tmp_path)
    second = split._Worker(multiprocessing.get_context("fork"), _Counting(), tmp_path / "source.jsonl", 1 << 20,
                           1 << 20, 1 << 19, first.fds)
    try:
        second.send(_a_chunk())
        assert len(second.receive().ends) == 100
        first.process.kill()
        first.process.join()
        assert select.select([first.inbox], [], [], 30)[0], "the pass waits on the pipe of a worker that died"
        with pytest.raises(ConversionFailed, match="died"):
            first.receive()
    finally:
        first.stop(False)
        second.stop(True)
    assert second.process.exitcode == 0


def test_chunks_number_their_lines_whether_a_block_of_short_or_of_long_lines_came_before(tmp_path: Path) -> None:
    # short lines (counted by ``bytes.count``), long ones (one ``find`` a line), short again
    lines = ([b'{"n":%d}' % i for i in range(40_000)] + [b'{"long":"%s"}' % (b"y" * (700 + i % 900))
                                                       for i in range(3_000)]
             + [b'{"m":%d}' % i for i in range(40_000)])
    source = tmp_path / "source.jsonl"
    data = b"\n".join(lines) + b"\n"
    source.write_bytes(data)
    fd = os.open(source, os.O_RDONLY)
    try:
        chunks = list(split._chunks(LineReader(fd, 0, size=len(data)), 0))
    finally:
        os.close(fd)
    assert len(chunks) > 5
    for chunk in chunks:
        assert chunk.first == data.count(b"\n", 0, chunk.start) + 1
    assert sum(len(list(chunk.lines())) for chunk in chunks) == len(lines)


class _WholeOnly:
    """A dialect that keeps what it keeps in one piece: it cannot be split."""

    name = "test/1"
    reads_non_json = False

    def convert(self, line: SourceLine) -> RecordFields:
        return record(from_="runtime", parts=[data_part(line.data_at())])


class _Options:
    """What :func:`split.split_workers` reads of an adapter's context: its options."""

    def __init__(self, split_from_bytes: int) -> None:
        self.options = {"collector": {"split_from_bytes": split_from_bytes}}


@pytest.mark.parametrize(("cpus", "new_bytes", "dialect", "workers"), [
    (2, 1 << 20, _Counting(), 1),   # large enough, a CPU beside the pass's, a dialect that splits
    (3, 1 << 20, _Counting(), 2),   # a worker for each CPU but the pass's
    (8, 1 << 20, _Counting(), split.MOST_WORKERS),
    (2, 1 << 20, _WholeOnly(), 0),  # a dialect that cannot be split never is
    (1, 1 << 20, _Counting(), 0),   # one CPU: the pass's alone
    (3, 1023, _Counting(), 0),      # below the threshold
])
def test_a_source_splits_from_the_threshold_in_a_worker_for_each_cpu_but_the_pass_s_and_only_in_a_dialect_that_splits(
        cpus: int, new_bytes: int, dialect: Any, workers: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASZ_WORKERS", raising=False)
    monkeypatch.setattr(split.os, "sched_getaffinity", lambda pid: set(range(cpus)))
    assert split.split_workers(_Options(1024), dialect, new_bytes) == workers  # type: ignore[arg-type]


def _one_block_chunks_and_a_worker(monkeypatch: pytest.MonkeyPatch, ready: bool) -> None:
    """Chunks of one block as read, and a worker that never (or always) says its chunk is back:
    the pass converts every chunk it may (or none) itself."""
    monkeypatch.setattr(split, "CHUNK_BYTES", 4096)
    monkeypatch.setattr(split._Worker, "ready", lambda self: ready)


def _split_in_one_worker(tmp_path: Path, lines: list[bytes], dialect: _Counting) -> list[split._Converted]:
    """``lines`` written to a source, converted by one worker and the pass, in the order handed on."""
    source = tmp_path / "source.jsonl"
    data = b"\n".join(lines) + b"\n"
    source.write_bytes(data)
    fd = os.open(source, os.O_RDONLY)
    try:
        return list(split._converted_chunks(LineReader(fd, 0, size=len(data)), 0, 0, dialect, source, 1 << 20, 1,
                                            1 << 19))
    finally:
        os.close(fd)


@pytest.mark.parametrize("worker_ready", [False, True])
def test_the_pass_converts_chunks_itself_while_the_next_is_in_a_worker_and_hands_all_on_in_line_order(
        worker_ready: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # either way every line, in order, once
    _one_block_chunks_and_a_worker(monkeypatch, worker_ready)
    the_pass = os.getpid()
    here = []
    real = split._convert_chunk

    def spy(*args: Any) -> Any:
        if os.getpid() == the_pass:
            here.append(args[1].first)
        return real(*args)

    monkeypatch.setattr(split, "_convert_chunk", spy)
    lines = [b'{"n":%d,"pad":"%s"}' % (i, b"p" * (i % 200)) for i in range(20_000)]  # 2.2 MB: 9 blocks
    dialect = _Counting()
    converted = _split_in_one_worker(tmp_path, lines, dialect)
    assert [chunk.first for chunk in converted] == list(itertools.accumulate(
        [1] + [len(chunk.ends) for chunk in converted[:-1]]))
    landed = b"\n".join(chunk.lines for chunk in converted).split(b"\n")
    assert [orjson.loads(line)["parts"][0]["data"]["n"] for line in landed] == list(range(20_000))
    assert dialect.seen == 20_000  # every part joined, the pass's own too
    if worker_ready:
        assert not here
    else:
        assert 0 < len(here) < len(converted)  # the worker converted its share meanwhile


@pytest.mark.parametrize("worker_ready", [False, True])
def test_no_chunk_is_read_beyond_a_long_line_before_its_turn(
        worker_ready: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # lines longer than a chunk among short ones: each is held whole until the pass converts it
    # at its turn, so at most one is held at a time, whoever converts the chunks around it
    _one_block_chunks_and_a_worker(monkeypatch, worker_ready)
    the_pass = os.getpid()
    held = [0]
    most = [0]
    real_chunks, real_gather = split._chunks, split._gather

    def counted_chunks(*args: Any) -> Iterator[split._Chunk]:
        for chunk in real_chunks(*args):
            if chunk.local:
                held[0] += 1
                most[0] = max(most[0], held[0])
            yield chunk

    def counted_gather(*args: Any) -> Any:
        if os.getpid() == the_pass and args[1].local:
            held[0] -= 1
        return real_gather(*args)

    monkeypatch.setattr(split, "_chunks", counted_chunks)
    monkeypatch.setattr(split, "_gather", counted_gather)
    lines = []
    for i in range(3_000):
        pad = b"q" * (300_000 if i % 100 == 50 else i % 200)  # 30 lines longer than a block
        lines.append(b'{"n":%d,"pad":"%s"}' % (i, pad))
    converted = _split_in_one_worker(tmp_path, lines, _Counting())
    assert sum(len(chunk.ends) for chunk in converted) == 3_000
    assert most == [1] and held == [0]
