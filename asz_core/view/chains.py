"""Line order within a stream: which records are repeats, and whether a line is missing.

A stream's records of one kind number their source's lines ``ord`` 1, 2, 3 across its files.
A record landed twice (a crash between landing and the cursor write) comes again with an ``ord``
already seen and the same ``off`` and ``sha``: a repeat, not a gap, and the first copy is the one
kept. A record whose ``ord`` skips ahead means a line is missing, so two calls that look
consecutive may not be: a stream with a gap joins no provider body (:mod:`asz_core.view.joins`).

Files that each hold one whole document (every file one record at ``ord`` 1, ``off`` 0: versions
of a sidecar) have no line order to break, so they never make a gap.
"""

from __future__ import annotations

from asz_core.sessiondata.model import Record

__all__ = ["LineChain"]


class LineChain:
    """The ``ord`` chain of one stream and kind, fed each record in landed order."""

    def __init__(self) -> None:
        self._want = 1
        self._seen: dict[int, tuple[int, str | None]] = {}
        self._skipped = False
        self._documents = True
        self.repeats = 0

    def feed(self, row: int, record: Record) -> bool:
        """Whether ``record`` is new (``False`` for a repeat of a record already fed)."""
        if row > 1 or record.ord != 1 or record.off != 0:
            self._documents = False
        if record.ord < self._want and self._seen.get(record.ord) == (record.off, record.sha):
            self.repeats += 1
            return False
        if record.ord != self._want:
            self._skipped = True
        self._seen[record.ord] = (record.off, record.sha)
        self._want = record.ord + 1
        return True

    @property
    def gap(self) -> bool:
        """Whether a line is missing (or came out of order)."""
        return self._skipped and not self._documents
