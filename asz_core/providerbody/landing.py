"""Landing a session's new bodies, in write order, into ``<session>/provider_body/`` files.

A file ends before a record that would take it past ``max_delta_bytes`` (bytes as written). A
record larger than that lands alone, with its largest pieces taken out until it fits ("Too
large to land"); when even that does not fit, the body lands whole in one unknown part, and
that part is taken out.

Every record is checked before it lands: its line is decoded as a reader will decode it and
the body rebuilt from it and what the session already holds (a reduced record from the body
itself standing in for what was taken out). A body that is not one JSON object in valid UTF-8,
or does not come back whole, lands whole in one unknown part whose text says why. Each record,
once written, is registered in the store so that later bodies of the same pass can refer to
it. The caller hears about each file after it is installed, so that whatever it records about
the bodies is written only after they landed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import orjson

from asz_core.providerbody.encode import NOT_PARSED, BodyInfo, CutRules, encode_body, uncuttable, whole_record
from asz_core.providerbody.errors import ProviderBodyError
from asz_core.providerbody.store import OK, BodyEntry, BodyStore, manifest_of
from asz_core.root.landing import LandedFile, LandingFile
from asz_core.root.storage import SessionHandle
from asz_core.sessiondata.errors import SessionDataError
from asz_core.sessiondata.model import Header, Record
from asz_core.sessiondata.reader import decode_record
from asz_core.sessiondata.reduce import reduce_to_fit
from asz_core.sessiondata.writer import encode_record

__all__ = ["CUT", "REDUCED", "SUBDIR", "WHOLE", "BodyLander", "LandedBody"]

SUBDIR = "provider_body"
CUT = "cut"          #: landed as pieces, references and literals
WHOLE = "whole"      #: landed whole in one unknown part (see ``reason``)
REDUCED = "reduced"  #: landed with pieces taken out; rebuilds only from another copy
_CLOSING_ROOM = 128  # the closing line, with room to spare
_SEQ_ROOM = 24       # a header's seq can grow by this many digits over the estimate


@dataclass(frozen=True)
class LandedBody:
    """One body as it landed: where, and how."""

    info: BodyInfo
    sha256: str
    bytes: int
    how: str
    seq: int
    row: int
    reason: str | None = None


class BodyLander:
    """Lands bodies into one session's ``provider_body`` files. Use :meth:`add` for each new body
    in write order, then :meth:`finish`; :meth:`abort` drops a file not yet installed."""

    def __init__(self, session: SessionHandle, store: BodyStore, header: Callable[[], Header],
                 max_delta_bytes: int, rules: CutRules,
                 on_file: Callable[[LandedFile, list[LandedBody]], None] | None = None) -> None:
        self.session = session
        self.store = store
        self.rules = rules
        self.max_delta_bytes = max_delta_bytes
        self._header = header
        self._on_file = on_file
        self._file: LandingFile | None = None
        self._bodies: list[LandedBody] = []
        probe = header()
        probe.seq, probe.at, probe.session = 0, session.root.at, session.id
        self._header_room = len(orjson.dumps(probe.to_json())) + 1 + _SEQ_ROOM

    # ---- one body ------------------------------------------------------------------------

    def add(self, body: bytes, info: BodyInfo, value: object = NOT_PARSED) -> LandedBody:
        """Land ``body`` after every body added before it. ``value`` is the body parsed, when the
        caller already parsed it (``None``: it is not JSON), so it is not parsed again."""
        reason = uncuttable(body, value)
        how = CUT
        record: Record | None = None
        entry: BodyEntry | None = None
        chain: str | None = None
        line = b""
        if reason is None:
            record = encode_body(body, info, self.store, self.rules)
            if record.parts[0].k == "unknown":  # cut, it would not come back whole upstream
                how, reason = WHOLE, manifest_of(record).why
            line = encode_record(record)
            entry, problem = self._check(line, body)
            if entry is None:
                reason = f"the record does not rebuild the body after a round trip: {problem}"
                chain, record = manifest_of(record).chain, None
        if entry is None or record is None:
            how = WHOLE
            record = whole_record(body, info, reason or "the body was not cut", chain)
            line = encode_record(record)
            entry, problem = self._check(line, body)
            if entry is None:
                raise ProviderBodyError(f"{info.src}: even whole, the record does not rebuild ({problem})")
        budget = self.max_delta_bytes - self._header_room - 1 - _CLOSING_ROOM
        if len(line) > budget:
            self._flush()
            how, record, line, entry, reason = self._reduce(record, body, info, budget, how, reason)
            landed = self._write(record, line, entry, body, info, how, reason)
            self._flush()
            return landed
        if self._file is not None and self._file.writer.size + len(line) + 1 + _CLOSING_ROOM > self.max_delta_bytes:
            self._flush()
        return self._write(record, line, entry, body, info, how, reason)

    def _check(self, line: bytes, body: bytes) -> tuple[BodyEntry | None, str | None]:
        """Decode ``line`` as a reader will, and rebuild the body from it and what the session
        holds, with the body itself standing in for any piece taken out (each checked against
        its digest)."""
        try:
            entry = self.store.entry(decode_record(line))
            rebuilt = self.store.build(entry, body)
        except (SessionDataError, ProviderBodyError) as exc:
            return None, str(exc)
        if rebuilt != body:
            return None, "the rebuilt bytes differ"
        return entry, None

    def _reduce(self, record: Record, body: bytes, info: BodyInfo, budget: int, how: str,
                reason: str | None) -> tuple[str, Record, bytes, BodyEntry, str | None]:
        """The record made to fit ``budget``: its largest pieces taken out, else the body whole
        in one unknown part that is taken out. Checked against the body itself."""
        reduced, line = reduce_to_fit(record, budget)
        if len(line) <= budget:
            entry, problem = self._check(line, body)
            if entry is not None:
                return (REDUCED if how == CUT else how), reduced, line, entry, reason
            reason = f"the reduced body did not come back whole ({problem})"
        else:
            reason = reason or "the body is too large to land even with every piece taken out"
        reduced, line = reduce_to_fit(whole_record(body, info, reason), budget)
        entry, problem = self._check(line, body)
        if entry is None:
            raise ProviderBodyError(f"{info.src}: the reduced whole body does not rebuild ({problem})")
        return WHOLE, reduced, line, entry, reason

    def _write(self, record: Record, line: bytes, entry: BodyEntry, body: bytes, info: BodyInfo, how: str,
               reason: str | None) -> LandedBody:
        if self._file is None:
            self._file = self.session.begin(SUBDIR, self._header())
            self._bodies = []
        self._file.write(line, record.ord, record.off, record.bytes, record.time)
        entry.seq, entry.row = self._file.header.seq, self._file.writer.records
        self.store.register(entry)
        if entry.status == OK:
            self.store.remember(entry.id, body)
        landed = LandedBody(info, entry.manifest.sha256, len(body), how, entry.seq, entry.row, reason)
        self._bodies.append(landed)
        return landed

    # ---- files ---------------------------------------------------------------------------

    def _flush(self) -> None:
        if self._file is None:
            return
        landing, bodies = self._file, self._bodies
        self._file, self._bodies = None, []
        landed = self.session.commit(landing)
        if self._on_file is not None:
            self._on_file(landed, bodies)

    def finish(self) -> None:
        """Install the file being written, if any."""
        self._flush()

    def abort(self) -> None:
        """Drop the file being written; nothing of it was ever visible."""
        if self._file is not None:
            self._file.abort()
            self._file = None
            self._bodies = []
