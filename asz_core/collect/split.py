"""Converting a large append source's new lines in worker processes, landing them in the pass's.

The lines of an append source are converted each by itself, so a source with many new bytes can
be converted in pieces at once on a machine with several CPUs. Only the conversion moves: what
lands, byte for byte, and every guarantee about a crash stay those of one process.

* The pass's process reads the source (:class:`~.lines.LineReader`, whose tail digest covers the
  very bytes landed) and cuts its complete lines into chunks of about :data:`CHUNK_BYTES`, a
  block of lines as it was read (:meth:`~.lines.LineReader.runs`): the worker splits them into
  lines, not the pass's process.
* Each chunk goes, in turn, to one of the worker processes forked for the source (one for each
  CPU but the pass's), which hold the source's dialect as the source made it (inherited, never
  pickled). A worker converts and encodes each line as the pass's process would
  (:func:`~.source.converted_lines`), with a part of the dialect of its own
  (:meth:`SplitDialect.split`), and sends back the encoded lines joined, where each ends, what
  the file writer reads of each record (its place, size, id and time, and which times sort after
  the one before: :func:`~asz_core.sessiondata.writer.times_following`; a record whole where a
  file's size may have to reduce it), the chunk's warnings and the dialect's part.
* Both ways a message is raw bytes on a pipe of the worker's own, written with one ``writev``:
  a header of 64-bit integers, then the bytes it counts, the lines as they are and each
  record's numbers as ``array("q")``; only the few small objects of a chunk are pickled (the
  framing is set out above :func:`_write_all`). A message cut short is the pipe's end, never
  a shorter chunk.
* The pass's process converts chunks too, on the CPU no worker has: when the chunk it is to land
  next has not begun to come back from its worker, it reads the next chunk and converts it at
  once, with a part of the dialect of its own, rather than wait (at most :data:`PASS_AHEAD` such
  chunks held, converted and not yet landed). So no process waits while a line is left to
  convert, and how many chunks each converts follows how fast each is, not a fixed share.
* The pass's process takes the chunks back in line order, joins each part into the source's
  dialect (:meth:`SplitDialect.join`, so what it keeps by line, for an index, is what it would
  have kept converting them itself) and fills the files as the collector does for lines it
  converted, a chunk's records that fit in a file in one write (:meth:`SplitRecords.fill`),
  saying each warning as its record is written; the collector makes the files durable and
  moves the cursor exactly as for lines it converted (:func:`~.append._land_windows`).
* A line longer than a chunk is converted in the pass's process at its turn, with the source's
  dialect, and no chunk is read beyond it before then: no process holds it, or more such lines at
  once, more often than one process landing alone would.
* At most :data:`CHUNKS_AHEAD` chunks a worker are out at once, so memory stays bounded, and the
  reader keeps the bytes a tail digest may need from the first line not yet landed
  (:meth:`~.lines.LineReader.hold`), however far ahead the chunks are read.
* A worker dies with the pass (``PR_SET_PDEATHSIG``); one that dies alone, or whose conversion
  fails, fails the source by name (:class:`ConversionFailed`), and a chunk the pass's process
  fails to convert fails it as in one process: what landed of it is complete, and the rest lands
  next pass, as after any failure in the middle of a source.

Splitting pays only for a source with much to land, on a machine with a CPU to spare
(:func:`split_workers`): never on fewer than :data:`SPLIT_FROM_CPUS`, in a pass told to use one
process, inside a worker process that lands sessions (its siblings use the other CPUs), nor for
a dialect that is no :class:`SplitDialect` (a prover takes what it can off the pass's process
instead: :mod:`.prove`).
"""

from __future__ import annotations

import os
import pickle
import struct
import sys
from array import array
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from asz_core.collect.lines import LineReader, TooLong, whole_lines
from asz_core.collect.pipes import PipedProcess, read_exactly, write_all
from asz_core.collect.source import Encoded, LineDialect, SourceLine, converted_lines, made_to_fit
from asz_core.context import AdapterContext
from asz_core.forking import explicit_workers, follow_the_pass, ready_to_fork
from asz_core.sessiondata.fields import RecordFields
from asz_core.sessiondata.writer import times_following

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

    from asz_core.root.landing import LandingFile

__all__ = ["CHUNKS_AHEAD", "CHUNK_BYTES", "SPLIT_FROM_BYTES", "SPLIT_FROM_CPUS", "ConversionFailed", "SplitDialect",
           "SplitRecords", "helper_cpus", "split_records", "split_workers"]

#: A source splits once it has at least this many new bytes to land (``collector.split_from_bytes``
#: sets another; 0: never). Below it, starting the workers costs more than they save
#: (figures: benchmarks/README.md, "One large transcript over two CPUs").
SPLIT_FROM_BYTES = 16 << 20
#: A chunk holds at most this many bytes of lines; a longer line is converted in the pass's
#: process.
CHUNK_BYTES = 1 << 19
#: Chunks out at once per worker: one it converts, one waiting for it.
CHUNKS_AHEAD = 2
#: Chunks the pass's process converted itself while the chunk it lands next was in a worker, held
#: until their turn: the memory a split may hold beyond its workers' chunks (figures:
#: benchmarks/README.md, "Figures behind the code's constants").
PASS_AHEAD = 2
#: ... in at most this many workers.
MOST_WORKERS = 4
#: A source splits only where this process may use this many CPUs or more: one for the pass's
#: process, which reads, writes every record and converts chunks too, and one for each worker.
#: With two CPUs and the pass converting, one worker beside it took a fifth off the 200 MB
#: transcript's wall (figures: benchmarks/README.md, "Figures behind the code's constants"),
#: where two workers beside a pass that only waited for them had taken longer than one process.
SPLIT_FROM_CPUS = 2


@runtime_checkable
class SplitDialect(Protocol):
    """A dialect whose lines can be converted in several processes at once: what it keeps from
    line to line (for an index, say) can be kept in parts and joined in line order."""

    name: str
    reads_non_json: bool

    def convert(self, line: SourceLine) -> RecordFields: ...

    def split(self) -> SplitDialect:
        """A dialect for some of this source's lines: as this one was made, keeping nothing of
        what this one kept; it must pickle (it is sent back to be joined)."""
        ...

    def join(self, part: SplitDialect) -> None:
        """Keep what ``part`` kept of its lines, as if this dialect had converted them; parts
        come in line order, after every line this dialect converted before them."""
        ...


class ConversionFailed(RuntimeError):
    """A worker converting a source's lines died or failed: the source lands no further this pass."""


def helper_cpus(ctx: AdapterContext, new_bytes: int) -> int:
    """The CPUs this process may use, when a source with ``new_bytes`` to land may have processes
    of its own beside the pass's (to convert its lines here, or to prove them: :mod:`.prove`);
    0 when it may not: fewer new bytes than ``collector.split_from_bytes`` (default
    :data:`SPLIT_FROM_BYTES`; 0: never), not Linux, a pass told to use one process, or a session's
    worker process, whose siblings have the other CPUs."""
    collector = ctx.options.get("collector", {})
    split_from = collector.get("split_from_bytes", SPLIT_FROM_BYTES)
    if not split_from or new_bytes < split_from:
        return 0
    if sys.platform != "linux":  # as for sessions in workers (:mod:`asz_core.workers`)
        return 0
    if explicit_workers(ctx.options) == 1:
        return 0
    import multiprocessing  # only for a source this large

    if multiprocessing.current_process().daemon or "fork" not in multiprocessing.get_all_start_methods():
        return 0  # a session's worker process: its siblings have the other CPUs
    return len(os.sched_getaffinity(0))


def split_workers(ctx: AdapterContext, dialect: LineDialect, new_bytes: int) -> int:
    """How many worker processes convert a source with ``new_bytes`` to land in ``dialect``:
    one for each CPU this process may use but its own (at most :data:`MOST_WORKERS`) when it may
    use :data:`SPLIT_FROM_CPUS` or more (:func:`helper_cpus`), or 0 (no split).

    The CPUs are asked first: for almost every source the size alone says no, and asking a
    runtime-checkable protocol whether the dialect is one walks its members in Python, tens of
    microseconds a source (figures: benchmarks/README.md, round 26)."""
    cpus = helper_cpus(ctx, new_bytes)
    if cpus < SPLIT_FROM_CPUS or not isinstance(dialect, SplitDialect):
        return 0
    return min(cpus - 1, MOST_WORKERS)


#: a line without its newline, or a line too long to read, as the reader hands them out
_Line = bytes | TooLong


class _Chunk:
    """Consecutive lines of the source, from line number ``first`` at offset ``start``: runs of
    whole lines, each with its newline, as read; or one line longer than a chunk (or too long to
    read), converted in the pass's process.

    This and :class:`_Converted` are plain classes (docs/architecture.md, "Classes a pass imports"): neither is compared
    or printed.
    """

    __slots__ = ("first", "long", "runs", "start")

    def __init__(self, first: int, start: int, runs: list[bytes], long: _Line | None = None) -> None:
        self.first = first
        self.start = start
        self.runs = runs  #: each let go of (``b""``) once split; what follows a run's last newline is no line
        self.long = long  #: a chunk of one line, converted in the pass's process

    @property
    def local(self) -> bool:
        return self.long is not None

    def lines(self) -> Iterator[_Line]:
        """Its lines, without their newlines, each run let go of as it is split."""
        if self.long is not None:
            line, self.long = self.long, None
            yield line
            return
        runs = self.runs
        for index, run in enumerate(runs):
            runs[index] = b""
            for line, _ in whole_lines(run, 0):
                yield line


class _Converted:
    """A chunk's records, converted and encoded (:func:`_convert_chunk`), as the file writer
    takes them a run at a time (:meth:`~asz_core.sessiondata.writer.SessionDataWriter.write_lines`):
    their lines joined, where each ends, and what the writer reads of each record. Record ``i``
    of it is line number ``first + i``."""

    __slots__ = ("ends", "first", "follows", "ids", "lines", "offs", "part", "sizes", "times", "warnings", "whole")

    def __init__(self, first: int, lines: bytes, ends: array[int], offs: array[int], sizes: array[int],
                 ids: list[str | None], times: list[str | None], follows: bytes, whole: dict[int, RecordFields],
                 warnings: list[tuple[int, str]], part: SplitDialect | None) -> None:
        self.first = first
        self.lines = lines  #: the encoded lines joined by newlines
        self.ends = ends  #: where each record's line ends in ``lines``, past its newline (the last's added)
        self.offs = offs
        self.sizes = sizes  #: each record's ``bytes``
        self.ids = ids
        self.times = times
        self.follows = follows  #: :func:`~asz_core.sessiondata.writer.times_following` of ``times``
        self.whole = whole  #: by index in the chunk: a record a file's size may reduce
        self.warnings = warnings  #: ``(index in the chunk, warning)``
        self.part = part  #: the dialect's part that converted them (none in the pass's process)


def _gather(dialect: LineDialect, chunk: _Chunk, path: Path, limit: int, read_limit: int,
            whole_above: int) -> _Converted:
    """``chunk``'s lines converted in ``dialect`` as the collector converts lines in its own
    process (:func:`~.source.converted_lines`), each let go of as it is taken."""
    encoded: list[bytes] = []
    # machine integers, not a list of int objects: sent to the pass as their bytes, as they are
    ends: array[int] = array("q")
    offs: array[int] = array("q")
    sizes: array[int] = array("q")
    ids: list[str | None] = []
    times: list[str | None] = []
    whole: dict[int, RecordFields] = {}
    warnings: list[tuple[int, str]] = []
    end = 0
    # a warning is given as its record is made, before it is handed out: its index is the count so far
    converted = converted_lines(_placed(chunk), chunk.first, dialect, path, limit, read_limit,
                                lambda warning: warnings.append((len(encoded), warning)))
    for index, (line, _, off, size, time, record_id, kept) in enumerate(converted):
        encoded.append(line)
        end += len(line) + 1
        ends.append(end)
        offs.append(off)
        sizes.append(size)
        ids.append(record_id)
        times.append(time)
        if len(line) > whole_above and kept is not None:  # kept: a line within WHOLE_WITHIN of ``limit``
            whole[index] = kept
    return _Converted(chunk.first, b"\n".join(encoded), ends, offs, sizes, ids, times, times_following(times),
                      whole, warnings, None)


def _placed(chunk: _Chunk) -> Iterator[tuple[_Line, int]]:
    """Each line of ``chunk`` with its offset (which follows from the sizes of the lines before
    it)."""
    offset = chunk.start
    for raw in chunk.lines():
        yield raw, offset
        offset += (raw.size if isinstance(raw, TooLong) else len(raw)) + 1


def _convert_chunk(dialect: SplitDialect, chunk: _Chunk, path: Path, limit: int, read_limit: int,
                   whole_above: int) -> _Converted:
    """In a worker: ``chunk`` converted with a part of ``dialect`` of its own."""
    part = dialect.split()
    done = _gather(part, chunk, path, limit, read_limit, whole_above)
    done.part = part
    return done


# ---- the pipes between the pass and a worker -----------------------------------------------
# Every message is a header of 64-bit integers and the bytes it counts, written with one
# ``writev`` and read with as few ``read`` calls as the pipe allows (see the module's rules):
#
# * to a worker, a chunk: ``first, start, size`` and ``size`` bytes of whole lines, each with
#   its newline (the chunk's runs, up to each one's last newline, one after the other);
#   ``size`` -1 ends the worker;
# * back, a converted chunk: ``first, count, size, rest`` then the ``size`` bytes of its encoded
#   lines joined, ``count`` ends, offsets and sizes as machine integers (``array("q")``), the
#   ``count`` bytes of ``follows``, and ``rest`` bytes of the ids, times, whole records, warnings
#   and the dialect's part, pickled (a few small objects a chunk, where each line's bytes and
#   numbers are not); ``count`` -1: the conversion failed, and ``size`` bytes of its text follow.
#
# The pass and a worker are one program forked, so both ends agree on the integers' order and
# size.

#: a chunk's header
_CHUNK = struct.Struct("=qqq")
#: a converted chunk's header
_DONE = struct.Struct("=qqqq")
#: bytes of an ``array("q")`` item
_Q = array("q").itemsize


def _chunk_message(chunk: _Chunk) -> list[ReadableBuffer]:
    """What a worker is sent of ``chunk``: its header, then each run up to its last newline."""
    runs: list[ReadableBuffer] = []
    size = 0
    for run in chunk.runs:
        cut = run.rfind(b"\n") + 1
        runs.append(run if cut == len(run) else memoryview(run)[:cut])
        size += cut
    return [_CHUNK.pack(chunk.first, chunk.start, size), *runs]


#: what ends a worker: no chunk
_NO_MORE = _CHUNK.pack(0, 0, -1)


def _read_chunk(fd: int) -> _Chunk | None:
    """In a worker: the next chunk sent, ``None`` once the pass says there is none (or has
    closed the pipe: it ended)."""
    try:
        first, start, size = _CHUNK.unpack(read_exactly(fd, _CHUNK.size))
    except EOFError:
        return None
    if size < 0:
        return None
    return _Chunk(first, start, [read_exactly(fd, size)])


def _done_message(done: _Converted) -> list[ReadableBuffer]:
    """What a worker sends back of a converted chunk."""
    rest = pickle.dumps((done.ids, done.times, done.whole, done.warnings, done.part), pickle.HIGHEST_PROTOCOL)
    return [_DONE.pack(done.first, len(done.ends), len(done.lines), len(rest)), done.lines, done.ends, done.offs,
            done.sizes, done.follows, rest]


def _failed_message(text: str) -> list[ReadableBuffer]:
    """What a worker sends back when converting a chunk failed."""
    data = text.encode("utf-8", "replace")
    return [_DONE.pack(0, -1, len(data), 0), data]


def _read_done(fd: int) -> _Converted | str:
    """In the pass: the next converted chunk a worker sent, or the text of its failure."""
    first, count, size, rest = _DONE.unpack(read_exactly(fd, _DONE.size))
    if count < 0:
        return read_exactly(fd, size).decode("utf-8", "replace")
    lines = read_exactly(fd, size)
    tail = memoryview(read_exactly(fd, (3 * _Q + 1) * count + rest))
    numbers = []
    for which in range(3):
        values: array[int] = array("q")
        values.frombytes(tail[which * _Q * count:(which + 1) * _Q * count])
        numbers.append(values)
    at = 3 * _Q * count
    follows = bytes(tail[at:at + count])
    ids, times, whole, warnings, part = pickle.loads(tail[at + count:])
    return _Converted(first, lines, numbers[0], numbers[1], numbers[2], ids, times, follows, whole, warnings, part)


def _serve(inbox: int, outbox: int, others: tuple[int, ...], dialect: SplitDialect, path: Path, limit: int,
           read_limit: int, whole_above: int) -> None:
    """A worker process: convert each chunk of its inbox and send it back, in the order received,
    until the pass says there are no more. A failure is sent back as its text: the pass fails the
    source with it. ``others``: the pass's ends of the pipes, which it forked with."""
    follow_the_pass()
    for fd in others:
        os.close(fd)
    try:
        while (chunk := _read_chunk(inbox)) is not None:
            try:
                message = _done_message(_convert_chunk(dialect, chunk, path, limit, read_limit, whole_above))
            except Exception as exc:  # noqa: BLE001 - the pass fails the source with it
                message = _failed_message(f"{type(exc).__name__}: {exc}")
            del chunk
            write_all(outbox, message)
            del message
    finally:
        os.close(outbox)


class _Worker(PipedProcess):
    """A worker process, the pipe its chunks go out on and the one they come back on.

    The pass sends a worker a chunk only while it has fewer than :data:`CHUNKS_AHEAD` out, and
    so at most one it has not started: the worker reads that one as soon as it has sent the one
    before back, waiting for nothing the pass does. So the pass never waits long sending, and
    never while the worker waits for the pass to read.
    """

    def __init__(self, context: Any, dialect: SplitDialect, path: Path, limit: int, read_limit: int,
                 whole_above: int, others: tuple[int, ...]) -> None:
        super().__init__(context, _serve, (dialect, path, limit, read_limit, whole_above), others)
        self.path = path
        self.out = 0  #: chunks sent and not received back

    def send(self, chunk: _Chunk) -> None:
        """Hand it ``chunk``; :class:`ConversionFailed` if it died."""
        try:
            write_all(self.outbox, _chunk_message(chunk))
        except OSError:
            raise self._died() from None
        self.out += 1

    def receive(self) -> _Converted:
        """The next chunk it converted; :class:`ConversionFailed` if it died or failed first."""
        try:
            done = _read_done(self.inbox)
        except (EOFError, OSError, struct.error):
            raise self._died() from None
        self.out -= 1
        if isinstance(done, str):
            raise ConversionFailed(f"{self.path}: converting its lines failed: {done}")
        return done

    def _died(self) -> ConversionFailed:
        self.process.join()
        return ConversionFailed(
            f"{self.path}: a worker process converting its lines died (exit code {self.process.exitcode}); "
            f"what landed of it is complete, and the rest lands next pass")

    def stop(self, finished: bool) -> None:
        """End it: let it end by itself when it was ``finished`` with (nothing is left for it to
        send), else kill it."""
        self.end(_NO_MORE if finished else None)


def _reads_on(out: deque[tuple[int, _Worker | _Converted | _Chunk]], most: int) -> bool:
    """Whether :func:`_converted_chunks` may read another chunk ahead: fewer than ``most`` are
    out, and the last one read is no long line (held whole until its turn: no chunk is read
    beyond it before then, so the pass holds one such line at a time, as one process does)."""
    return len(out) < most and not (out and isinstance(out[-1][1], _Chunk))


def _chunks(reader: LineReader, ordinal: int) -> Iterator[_Chunk]:
    """The reader's complete lines in chunks of at most :data:`CHUNK_BYTES` (runs of lines as
    the reader read them, counted, not split), the first line numbered ``ordinal + 1``; a line
    longer than a chunk, or too long to read, a chunk alone, converted in the pass's process."""
    runs: list[bytes] = []
    size = start = count = 0
    first = ordinal + 1
    sparse = False  #: whether the block before held lines of :data:`_SPARSE_LINE` bytes or more
    for data, offset, run in reader.runs():
        if not run:
            if type(data) is bytes and len(data) <= CHUNK_BYTES:  # longer than a block only
                data, run = data + b"\n", len(data) + 1
            else:
                if runs:
                    yield _Chunk(first, start, runs)
                    first += count
                    runs, size, count = [], 0, 0
                yield _Chunk(first, offset, [], data)
                first += 1
                continue
        assert type(data) is bytes  # sent whole: what follows its last newline is no line there
        if size + run > CHUNK_BYTES and runs:
            yield _Chunk(first, start, runs)
            first += count
            runs, size, count = [], 0, 0
        if not runs:
            start = offset
        runs.append(data)
        size += run
        found = _newlines(data) if sparse else data.count(b"\n")
        count += found
        sparse = run >= _SPARSE_LINE * found  # the next block is likely as this one was
    if runs:
        yield _Chunk(first, start, runs)


#: Lines of about this many bytes or more are counted faster one ``find`` a line than by
#: ``bytes.count``, which reads every byte: :func:`_chunks` counts a block's lines the way that
#: was faster for the block before it.
_SPARSE_LINE = 512


def _newlines(data: bytes) -> int:
    """The newlines in ``data``, found one ``find`` (``memchr``) a line."""
    found = 0
    find = data.find
    at = find(b"\n")
    while at >= 0:
        found += 1
        at = find(b"\n", at + 1)
    return found


class SplitRecords:
    """A split source's records in line order, a converted chunk at a time, as the collector
    fills its files with them (:meth:`fill`); each chunk's warnings are said as its records
    are written."""

    def __init__(self, chunks: Generator[_Converted, None, None], warn: Callable[[str], None]) -> None:
        self._chunks = chunks
        self._warn = warn
        self._chunk: _Converted | None = None
        self._at = 0  #: the chunk's next record to write
        self._said = 0  #: the chunk's warnings said
        self._next_chunk()

    @property
    def more(self) -> bool:
        """Whether a record is left to write."""
        return self._chunk is not None

    def fill(self, landing: LandingFile, room: int) -> str:
        """Write records into ``landing`` until the next would take more than ``room`` bytes
        (each with its newline), as the collector does a record at a time: a record too large
        for the file it starts lands alone in it, reduced to fit. The records of a chunk that
        fit go in one :meth:`~asz_core.root.landing.LandingFile.write_lines`, the records that
        fit found from where their lines end. Returns the id of the last record written."""
        chunk, at = self._chunk, self._at
        assert chunk is not None
        last_id: str | None = None
        ends = chunk.ends
        base = ends[at - 1] if at else 0
        if ends[at] - base > room:  # alone in its file, made to fit as the collector makes any record
            alone: Encoded = (chunk.lines[base:ends[at] - 1], chunk.first + at, chunk.offs[at], chunk.sizes[at],
                              chunk.times[at], chunk.ids[at], chunk.whole.get(at))
            line, ord_, off, size, time, record_id, _ = made_to_fit(alone, room - 1)
            self._say(chunk, at + 1)
            landing.write(line, ord_, off, size, time)
            self._move_to(chunk, at + 1)
            return record_id or ""
        while True:
            end = bisect_right(ends, base + room, at)
            if end == at:  # a chunk after the first, whose first record does not fit
                return last_id or ""
            self._say(chunk, end)
            last = end - 1
            stop = ends[last]
            lines = chunk.lines
            if base or stop - 1 < len(lines):
                lines = lines[base:stop - 1]
            landing.write_lines(lines, end - at, chunk.first + last, chunk.offs[last], chunk.sizes[last],
                                chunk.times[at:end], chunk.follows[at:end])
            last_id = chunk.ids[last]
            room -= stop - base
            if not self._move_to(chunk, end):
                return last_id or ""
            chunk, at, base = self._chunk, 0, 0
            if chunk is None:
                return last_id or ""
            ends = chunk.ends

    def _move_to(self, chunk: _Converted, at: int) -> bool:
        """Make record ``at`` of ``chunk`` the next to write; True if that is the next chunk's first."""
        if at < len(chunk.ends):
            self._at = at
            return False
        self._next_chunk()
        return True

    def _next_chunk(self) -> None:
        self._at = self._said = 0
        self._chunk = next(self._chunks, None)
        while self._chunk is not None and not self._chunk.ends:  # no lines: nothing to write
            self._chunk = next(self._chunks, None)

    def _say(self, chunk: _Converted, end: int) -> None:
        """Say the warnings of ``chunk``'s records before ``end`` not yet said."""
        warnings = chunk.warnings
        while self._said < len(warnings) and warnings[self._said][0] < end:
            self._warn(warnings[self._said][1])
            self._said += 1

    def close(self) -> None:
        """End the workers, whether every record was written or not."""
        self._chunk = None
        self._chunks.close()


def split_records(reader: LineReader, offset: int, ordinal: int, dialect: SplitDialect, path: Path, limit: int,
                  warn: Callable[[str], None], workers: int, whole_above: int) -> SplitRecords:
    """The records of each complete line the reader hands out from ``offset`` (line
    ``ordinal + 1``), in order, converted in ``workers`` forked processes (see the module's
    rules).

    ``whole_above``: a record whose encoded line is longer than this comes back whole (a file's
    size may reduce it); of the others, what the file writer reads of them.
    """
    return SplitRecords(_converted_chunks(reader, offset, ordinal, dialect, path, limit, workers, whole_above),
                        warn)


def _converted_chunks(reader: LineReader, offset: int, ordinal: int, dialect: SplitDialect, path: Path,
                      limit: int, workers: int, whole_above: int) -> Generator[_Converted, None, None]:
    """The chunks of the reader's lines from ``offset`` converted, in line order (the workers
    started here, and ended when this ends)."""
    import multiprocessing

    reader.hold(offset)
    ready_to_fork()
    context = multiprocessing.get_context("fork")
    read_limit = reader.read_limit
    started: list[_Worker] = []
    #: read, in line order, not yet handed on: where each chunk starts, and the worker converting
    #: it, the chunk converted here ahead, or one long line to convert here at its turn
    out: deque[tuple[int, _Worker | _Converted | _Chunk]] = deque()
    most_out = CHUNKS_AHEAD * workers + PASS_AHEAD
    chunks = _chunks(reader, ordinal)
    turn = 0
    held = 0  #: chunks converted here ahead, in ``out``
    finished = False
    try:
        for _ in range(workers):
            started.append(_Worker(context, dialect, path, limit, read_limit, whole_above,
                                   tuple(fd for worker in started for fd in worker.fds)))
        more = True
        while True:
            while more and _reads_on(out, most_out) and started[turn % workers].out < CHUNKS_AHEAD:
                chunk = next(chunks, None)
                if chunk is None:
                    more = False
                    break
                if chunk.local:
                    out.append((chunk.start, chunk))
                    continue
                worker = started[turn % workers]
                turn += 1
                worker.send(chunk)
                out.append((chunk.start, worker))  # its runs are the worker's now
                del chunk
            if not out:
                break
            start, head = out[0]
            if (isinstance(head, _Worker) and more and held < PASS_AHEAD and _reads_on(out, most_out)
                    and not head.ready()):
                # the chunk to land next is still in its worker: convert the next one here meanwhile
                chunk = next(chunks, None)
                if chunk is None:
                    more = False
                elif chunk.local:
                    out.append((chunk.start, chunk))
                else:
                    out.append((chunk.start, _convert_chunk(dialect, chunk, path, limit, read_limit, whole_above)))
                    held += 1
                del chunk
                continue
            out.popleft()
            # the collector lands nothing before this chunk from now on: the lines read ahead
            # of it must not drop what a tail digest there needs
            reader.hold(start)
            if isinstance(head, _Chunk):  # one long line, converted here at its turn
                yield _gather(dialect, head, path, limit, read_limit, whole_above)
                continue
            if isinstance(head, _Worker):
                done = head.receive()
            else:
                done, held = head, held - 1
            assert done.part is not None
            dialect.join(done.part)
            done.part = None
            yield done
        finished = True
    finally:
        for worker in started:
            worker.stop(finished)
