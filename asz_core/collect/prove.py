"""A large source's lines digested and proved in a second process while the pass's converts them.

For each line the collector's process parses it, encodes it once more to prove what slicing it
needs (that it re-encodes to its own bytes and nests no deeper than a record holds:
:attr:`~asz_core.sessiondata.jsonbytes.JSONLine.proof`), and takes its ``sha``; the last two
depend on the line's bytes alone. Where a source cannot split (:mod:`.split`: its dialect keeps
what it keeps in one piece), one with as many new bytes as a split needs has them worked out by
one forked process beside the pass's, the prover:

1. the pass's process reads the source as it always does (:meth:`~.lines.LineReader.runs`) and
   sends the prover each block's whole lines before converting them, while the prover has fewer
   than :data:`BLOCKS_AHEAD` blocks to work on: it keeps its own bytes, and the prover reads
   nothing of the source, so both work on the very bytes that land;
2. the prover sends back, for each block, its size and, for each of its lines in order, one
   digit of what parsing it proved and its ``sha``;
3. the pass's process takes a block's proofs if they are there by the time it converts the
   block, and converts each line as it always does, told its ``sha`` and proof
   (:data:`~.source.LineProof`), so it neither digests nor encodes the line again: what lands is
   what lands without a prover, byte for byte, both being the same functions of the same bytes;
4. it never waits for the prover: a block whose proofs are not back yet, a block not sent (the
   prover has enough), a line longer than a block, and every line after the prover has died,
   are worked out by the pass's process itself (proofs that come back late are read and let
   go). A prover only ever saves work, and a source never fails for it.

The prover dies with the pass (``PR_SET_PDEATHSIG``) and is killed when the source is done with.
"""

from __future__ import annotations

import os
import struct
from collections import deque
from collections.abc import Generator, Iterable, Iterator
from itertools import chain, repeat
from typing import TYPE_CHECKING, Any

from asz_core.collect.lines import LineReader, TooLong, whole_lines
from asz_core.collect.pipes import PipedProcess, read_exactly, write_all
from asz_core.collect.source import LineProof, line_sha
from asz_core.collect.split import helper_cpus
from asz_core.forking import follow_the_pass, ready_to_fork
from asz_core.sessiondata.jsonbytes import NOT_PROVED, JSONLine, NotJSON

if TYPE_CHECKING:
    from asz_core.context import AdapterContext

__all__ = ["BLOCKS_AHEAD", "proved_lines", "proves"]

#: Blocks sent to the prover and not yet proved back: it has the next to work on as it sends one
#: back, and a pass that got ahead of it (the prover parses a line as the pass does) does not
#: send it more than it can catch up with (figures: benchmarks/README.md, "Figures behind the
#: code's constants").
BLOCKS_AHEAD = 3
#: a block sent: its size; a block proved: its size and its lines
_SENT = struct.Struct("=q")
_PROVED = struct.Struct("=qq")
#: a line's proof as it comes back: the proof's digit and the line's ``sha``
_PROOF_CHARS = 13


def proves(ctx: AdapterContext, new_bytes: int) -> bool:
    """Whether a source with ``new_bytes`` to land, which does not split, has a prover: where a
    split would have processes of its own (:func:`~.split.helper_cpus`) and there is a second
    CPU for it."""
    return helper_cpus(ctx, new_bytes) >= 2


def proved_lines(reader: LineReader, offset: int,
                 proofs: deque[LineProof]) -> tuple[Iterator[tuple[bytes | TooLong, int]], Generator[Any, None, None]]:
    """The reader's complete lines from ``offset`` with their offsets, as
    :meth:`~.lines.LineReader.lines` hands them out, each one's :data:`~.source.LineProof` at the
    right of ``proofs`` by the time it is handed out (for :func:`~.source.converted_lines` to
    take from the left); and what to close once the source is done with (which ends the prover).

    Chained in C, as the reader's own lines are: a line passes from the block's splitter to the
    caller with no frame of this module resumed on the way."""
    blocks = _blocks(reader, offset, proofs)
    return chain.from_iterable(blocks), blocks


def _blocks(reader: LineReader, offset: int,
            proofs: deque[LineProof]) -> Generator[Iterable[tuple[bytes | TooLong, int]], None, None]:
    """Each block's lines, by the rules above, as an iterable of ``(line, offset)``."""
    reader.hold(offset)
    ready_to_fork()
    prover: _Prover | None = _Prover()
    out: deque[tuple[bytes | TooLong, int, int, int]] = deque()  #: read: data, offset, run, number sent (-1: not)
    runs = reader.runs()
    try:
        more = True
        while True:
            # no block is read ahead of a line longer than a block: such a line is held once, as
            # one process landing alone holds it
            while more and len(out) < BLOCKS_AHEAD and not (out and not out[-1][2]):
                read = next(runs, None)
                if read is None:
                    more = False
                    break
                data, at, run = read
                sent = prover.send(data, run) if prover is not None and run else -1
                out.append((data, at, run, sent))
                del read, data
            if not out:
                break
            data, at, run, sent = out.popleft()
            # lines read ahead of this block must not drop what a tail digest in it needs
            reader.hold(at)
            if not run:  # one line longer than a block
                proofs.append("")
                yield ((data, at),)
                del data  # converted and let go of by the collector: not held while reading on
                continue
            assert type(data) is bytes
            proved = prover.take(sent, run) if prover is not None and sent >= 0 else None
            if prover is not None and prover.dead:
                prover.stop()
                prover = None
            proofs.extend(proved if proved is not None else repeat("", data.count(b"\n", 0, run)))
            yield whole_lines(data, at)
            del data
    finally:
        if prover is not None:
            prover.stop()


def _proved(block: bytes) -> bytes:
    """In the prover: what it sends back of ``block`` (rule 2)."""
    out: list[str] = []
    for line, _ in whole_lines(block, 0):
        try:
            proof = JSONLine(line).proof
        except NotJSON:
            proof = NOT_PROVED
        out.append(f"{proof}{line_sha(line)}")
    return _PROVED.pack(len(block), len(out)) + "".join(out).encode("ascii")


def _serve(inbox: int, outbox: int, others: tuple[int, ...]) -> None:
    """The prover: prove each block of its inbox and send it back, in the order received, until
    it is ended. ``others``: the pass's ends of the pipes, which it forked with."""
    follow_the_pass()
    for fd in others:
        os.close(fd)
    try:
        while True:
            try:
                (size,) = _SENT.unpack(read_exactly(inbox, _SENT.size))
            except EOFError:  # the pass has ended
                return
            write_all(outbox, [_proved(read_exactly(inbox, size))])
    finally:
        os.close(outbox)


class _Prover(PipedProcess):
    """The prover process and its pipes (:class:`~.pipes.PipedProcess`), and how many blocks it
    was sent and has sent back."""

    def __init__(self) -> None:
        import multiprocessing

        super().__init__(multiprocessing.get_context("fork"), _serve, ())
        self.sent = 0  #: blocks sent
        self.back = 0  #: blocks whose proofs were read (taken or let go)
        self.dead = False

    def send(self, data: bytes | TooLong, run: int) -> int:
        """Hand it the first ``run`` bytes of ``data`` if it has fewer than :data:`BLOCKS_AHEAD`
        to work on: the block's number, else -1."""
        if self.dead or self.sent - self.back >= BLOCKS_AHEAD:
            return -1
        assert type(data) is bytes
        try:
            write_all(self.outbox, [_SENT.pack(run), memoryview(data)[:run]])
        except OSError:
            self.dead = True
            return -1
        self.sent += 1
        return self.sent - 1

    def take(self, number: int, size: int) -> list[LineProof] | None:
        """The proofs of block ``number`` (``size`` bytes) if they are back already, letting go
        of those of earlier blocks that came back late; ``None`` if they are not back yet (they
        are let go of later) or it has died."""
        try:
            while self.back < number and self.ready():
                self._read()
            if self.back == number and self.ready():
                proved_size, text = self._read()
                if proved_size == size:  # else the proofs of other bytes: never, but never landed if so
                    return [text[at:at + _PROOF_CHARS] for at in range(0, len(text), _PROOF_CHARS)]
                self.dead = True
        except (EOFError, OSError, struct.error, UnicodeDecodeError):
            self.dead = True
        return None

    def _read(self) -> tuple[int, str]:
        size, count = _PROVED.unpack(read_exactly(self.inbox, _PROVED.size))
        text = read_exactly(self.inbox, _PROOF_CHARS * count).decode("ascii")
        self.back += 1
        return size, text

    def stop(self) -> None:
        """End it, killed: it holds nothing the pass needs, and proofs it still has to send back
        (of blocks the pass has worked out itself) could fill its pipe, where it would wait for
        a goodbye it never reads."""
        self.end(None)
