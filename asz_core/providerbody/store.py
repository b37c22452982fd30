"""What a session holds of its provider bodies, and rebuilding a body from it.

:class:`BodyStore` is fed a session's provider body records in the order they landed. Each
record registers its pieces (by the SHA-256 of their bytes) and its body (by record id); a
later record can refer to both. Rebuilding follows the manifest's segments; a ``copy`` rebuilds
the earlier body first, without recursion, keeping recently rebuilt bodies in a cache bounded
by bytes so that reading a session in order rebuilds each body once.

The rules are those of ``spec/session-data.txt``, "Provider bodies": references only to what
landed earlier (or to this record's own parts); the first record with an id is the one kept; a
piece taken out ("too large to land") is registered by its ``sha256`` like any piece, and a body
that needs it rebuilds only from another copy of the body. A copy names its base by the digest
of the whole base body and is one deeper than it (a record an earlier version landed named the
digest of the copied front instead: it reads as well). The store also keeps each chain's *tip*,
its latest request, for :mod:`~asz_core.providerbody.encode` to choose a copy's base from, as
upstream does.

A store may also know bodies and pieces *held elsewhere*: landed in the root, but not read by
this store (:mod:`~asz_core.providerbody.summary` restores what a session holds from a summary
of its files). Such a piece is held like any other, and a body checked against itself
(``build(entry, other)``) takes its bytes from ``other``, each checked against its digest; such
a body's bytes come from :attr:`BodyStore.fetch`, checked against its manifest's ``bytes`` and
``sha256``.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

import orjson

from asz_core.providerbody.errors import (
    BodyDamaged,
    BodyTooLarge,
    BodyUnavailable,
    OtherCopyMismatch,
)
from asz_core.providerbody.manifest import CopySeg, LitSeg, Manifest, ManifestError, PartSeg, PieceSeg
from asz_core.providerbody.pieces import KnownValues
from asz_core.sessiondata.model import Part, Record

__all__ = ["DAMAGED", "OK", "TOO_LARGE", "UNAVAILABLE", "BodyEntry", "BodyStore", "manifest_of"]

OK: Final = "ok"
TOO_LARGE: Final = "too_large"      #: a piece was taken out; rebuilds from another copy
UNAVAILABLE: Final = "unavailable"  #: the root kept only a skeleton of it
DAMAGED: Final = "damaged"          #: does not rebuild at all
_RANK = {OK: 0, TOO_LARGE: 1, UNAVAILABLE: 2, DAMAGED: 3}

DEFAULT_CACHE_BYTES = 64 * 1024 * 1024
#: Chains whose tip is kept; the one updated longest ago is forgotten first (upstream's bound).
MAX_TIPS: Final = 64
#: The most bytes a body may claim (upstream's bound): a record is small, but a damaged one could
#: otherwise make a rebuild hold far more than any body.
MAX_BYTES: Final = 256 * 1024 * 1024


def manifest_of(record: Record) -> Manifest:
    """The record's manifest (its last part); ``ManifestError`` if it has none."""
    if not record.parts or record.parts[-1].data is None:
        raise ManifestError("the record has no manifest part")
    part = record.parts[-1]
    try:
        # The record's line was read strictly already, its nesting bound included, so its
        # manifest is not walked for depth again (a long one has hundreds of segments and each
        # cold rebuild reads a session's every manifest); what orjson refuses is read strictly.
        value = orjson.loads(part.data)  # type: ignore[arg-type]
    except orjson.JSONDecodeError:
        value = part.value()
    return Manifest.from_json(value)


@dataclass
class BodyEntry:
    """One provider body record as the store knows it."""

    id: str
    manifest: Manifest
    parts: list[Part]                 #: the record's parts before the manifest
    own: list[bytes | None]           #: each part's bytes; None when taken out or removed
    own_pieces: dict[str, bytes | None] = field(default_factory=dict)
    status: str = OK
    problem: str = ""
    index: int = 0                    #: order of registration in the store
    seq: int = 0
    row: int = 0
    #: landed, but not read by this store: its bytes come from :attr:`BodyStore.fetch`
    elsewhere: bool = False

    @property
    def complete(self) -> bool:
        return self.status == OK


class BodyStore:
    """Pieces by digest and bodies by record id, for one session."""

    def __init__(self, cache_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self.pieces: dict[str, bytes | None] = {}
        self.piece_sizes: dict[str, int] = {}
        self.piece_states: dict[str, str] = {}  #: why a registered piece holds no bytes
        #: every piece held with its bytes that is an object or array, for cutting later bodies
        self.known = KnownValues()
        self.bodies: dict[str, BodyEntry] = {}
        #: pieces the root holds with their bytes that this store did not read, by digest: size
        self.elsewhere: dict[str, int] = {}
        #: the bytes of a body held elsewhere (checked here against its manifest)
        self.fetch: Callable[[BodyEntry], bytes] | None = None
        self.count = 0  #: records registered (what numbers the next one)
        #: each chain's latest request (its record id), the chain updated longest ago first
        self.tips: OrderedDict[str, str] = OrderedDict()
        self._cache: OrderedDict[str, bytes] = OrderedDict()
        self._cache_bytes = 0
        self._cache_limit = cache_bytes

    # ---- registering ---------------------------------------------------------------------

    def entry(self, record: Record, *, seq: int = 0, row: int = 0, skeleton: bool = False) -> BodyEntry:
        """Read ``record`` against what the store holds, without registering it.

        A record that is not a provider body at all is returned with status ``damaged``.
        """
        record_id = record.id or ""
        try:
            manifest = manifest_of(record)
        except ManifestError as exc:
            empty = Manifest(role="", src="", sha256="0" * 64, bytes=0)
            return BodyEntry(record_id, empty, [], [], status=DAMAGED, problem=str(exc), seq=seq, row=row)
        if not record_id:
            record_id = manifest.src.removesuffix(".json")
        parts = record.parts[:-1]
        own: list[bytes | None] = []
        own_pieces: dict[str, bytes | None] = {}
        for part in parts:
            data = _part_bytes(part) if not skeleton else None
            own.append(data)
            if part.k == "unknown":
                continue
            if data is None:
                if part.sha256:
                    own_pieces.setdefault(part.sha256, None)
            else:
                own_pieces[hashlib.sha256(data).hexdigest()] = data
        entry = BodyEntry(record_id, manifest, parts, own, own_pieces, seq=seq, row=row)
        entry.status, entry.problem = self._judge(entry, skeleton)
        return entry

    def add(self, record: Record, *, seq: int = 0, row: int = 0, skeleton: bool = False) -> BodyEntry:
        """Register ``record`` (the next one the session landed) and return its entry."""
        entry = self.entry(record, seq=seq, row=row, skeleton=skeleton)
        self.register(entry)
        return entry

    def register(self, entry: BodyEntry) -> None:
        """Make ``entry``'s pieces and body available to the records after it."""
        self.count += 1
        entry.index = self.count
        for digest, data in entry.own_pieces.items():
            if data is not None or digest not in self.pieces:
                self.pieces[digest] = data
            if data is not None:
                self.known.add(data)
        for part, data in zip(entry.parts, entry.own, strict=True):
            if data is None and part.sha256 and part.k != "unknown":
                self.piece_sizes.setdefault(part.sha256, part.bytes)
                self.piece_states.setdefault(part.sha256, UNAVAILABLE if part.state == "removed" else TOO_LARGE)
        if entry.id and entry.id not in self.bodies and entry.manifest.src:
            self.bodies[entry.id] = entry  # the first copy of a record landed twice is kept
            self.set_tip(entry)

    def set_tip(self, entry: BodyEntry) -> None:
        """Make ``entry`` its chain's tip, when it is a request with a chain that reads (a record
        that does not rebuild is one upstream's reader refuses, so it is no tip there)."""
        chain = entry.manifest.chain
        if entry.manifest.role != "request" or not chain or entry.status == DAMAGED:
            return
        self.tips.pop(chain, None)
        self.tips[chain] = entry.id
        if len(self.tips) > MAX_TIPS:
            self.tips.popitem(last=False)

    def holds_piece(self, digest: str) -> bool:
        """Whether a later body may name this piece: its bytes are in the root, or it was taken
        out to fit (and is named like any piece); a piece only a skeleton remembers is not."""
        if digest not in self.pieces:
            return False
        return (self.pieces[digest] is not None or digest in self.elsewhere
                or self.piece_states.get(digest) == TOO_LARGE)

    def remember(self, record_id: str, body: bytes) -> None:
        """Keep ``body`` (known from elsewhere, e.g. its source file) as the bytes of ``record_id``."""
        self._keep(record_id, body)

    # ---- judging without building ----------------------------------------------------------

    def _judge(self, entry: BodyEntry, skeleton: bool) -> tuple[str, str]:
        m = entry.manifest
        if skeleton:  # its literals and data are gone, whatever its references resolve to
            return UNAVAILABLE, "the root keeps only a skeleton of this body"
        if not m.segments:
            unknown = [i for i, p in enumerate(entry.parts) if p.k == "unknown"]
            if len(unknown) != 1:
                return DAMAGED, "no segments, and not exactly one unknown part holding the whole body"
            return self._own_state(entry, unknown[0], skeleton)
        if m.bytes > MAX_BYTES:
            return DAMAGED, f"it claims {m.bytes} bytes, more than a body may ({MAX_BYTES})"
        if not m.copies and m.depth:
            return DAMAGED, f"depth {m.depth}, and it copies nothing"
        worst, why = OK, ""
        for seg in m.segments:
            state, problem = OK, ""
            if isinstance(seg, PartSeg):
                if seg.index >= len(entry.parts):
                    return DAMAGED, f"a segment names part {seg.index}, which the record lacks"
                state, problem = self._own_state(entry, seg.index, skeleton)
            elif isinstance(seg, PieceSeg):
                state, problem = self._piece_state(entry, seg.sha256)
            elif isinstance(seg, CopySeg):
                base = self.bodies.get(seg.source)
                if base is None:
                    return DAMAGED, f"copy from {seg.source!r}, which no earlier record of the session holds"
                if seg.length > base.manifest.bytes:
                    return DAMAGED, f"copy of {seg.length} bytes from {seg.source!r}, which has {base.manifest.bytes}"
                if m.depth != base.manifest.depth + 1:
                    return DAMAGED, f"depth {m.depth} over a copy from {seg.source!r}, of depth {base.manifest.depth}"
                if base.status == DAMAGED:
                    return DAMAGED, f"copy from {seg.source!r}, which does not rebuild"
                state, problem = base.status, f"copies from {seg.source!r}: {base.problem}"
            if state == DAMAGED:
                return state, problem
            if _RANK[state] > _RANK[worst]:
                worst, why = state, problem
        return worst, why

    def _own_state(self, entry: BodyEntry, index: int, skeleton: bool) -> tuple[str, str]:
        if entry.own[index] is not None:
            return OK, ""
        part = entry.parts[index]
        if part.state == "too_large" or (part.state == "truncated" and not skeleton):
            return TOO_LARGE, f"part {index} was taken out (too large to land)"
        if skeleton or part.state == "removed":
            return UNAVAILABLE, "the root keeps only a skeleton of this body"
        return DAMAGED, f"part {index} holds no data"

    def _piece_state(self, entry: BodyEntry, digest: str) -> tuple[str, str]:
        if digest in entry.own_pieces:
            data = entry.own_pieces[digest]
        elif digest in self.pieces:
            data = self.pieces[digest]
        else:
            return DAMAGED, f"piece {digest[:12]} is held by nothing before it"
        if data is not None or digest in self.elsewhere:
            return OK, ""
        state = self.piece_states.get(digest, TOO_LARGE)
        return state, f"piece {digest[:12]} was taken out (too large to land)"

    # ---- building ----------------------------------------------------------------------------

    def build(self, entry: BodyEntry, other: bytes | None = None) -> bytes:
        """The body's exact bytes. ``other``, another copy of the body, stands in for what was
        taken out. Raises :class:`BodyTooLarge`, :class:`BodyUnavailable`, :class:`BodyDamaged`
        or :class:`OtherCopyMismatch`."""
        if entry.status == DAMAGED:
            raise BodyDamaged(f"{entry.id}: {entry.problem}")
        if other is None and entry.status != OK:
            raise (BodyTooLarge if entry.status == TOO_LARGE else BodyUnavailable)(f"{entry.id}: {entry.problem}")
        if other is None:
            cached = self._cache.get(entry.id)
            if cached is not None and self.bodies.get(entry.id) is entry:
                self._cache.move_to_end(entry.id)
                return cached
        if entry.elsewhere:
            return self._fetched(entry)
        bases = self._build_bases(entry)
        body = self._assemble(entry, bases, other)
        if other is not None and entry.status != OK:
            return body  # not kept: the root alone does not give these bytes
        if self.bodies.get(entry.id) is entry:
            self._keep(entry.id, body)
        return body

    def body(self, record_id: str) -> bytes:
        """The bytes of the registered body ``record_id``."""
        entry = self.bodies.get(record_id)
        if entry is None:
            raise BodyDamaged(f"no body {record_id!r} in the session")
        return self.build(entry)

    def _fetched(self, entry: BodyEntry) -> bytes:
        """The bytes of a body held elsewhere, from :attr:`fetch`, checked and kept."""
        if self.fetch is None:
            raise BodyUnavailable(f"{entry.id}: landed, but not read by this store")
        body = self.fetch(entry)
        if len(body) != entry.manifest.bytes or hashlib.sha256(body).hexdigest() != entry.manifest.sha256:
            raise BodyDamaged(f"{entry.id}: the bytes fetched do not match the manifest's bytes/sha256")
        self._keep(entry.id, body)
        return body

    def _build_bases(self, entry: BodyEntry) -> dict[str, bytes]:
        """Every complete body ``entry`` copies from, directly or not, built oldest first and
        held here until ``entry`` is built (the cache may drop them meanwhile)."""
        held: dict[str, bytes] = {}
        need: dict[str, BodyEntry] = {}
        todo = [entry]
        while todo:
            current = todo.pop()
            for seg in current.manifest.copies:
                base = self.bodies.get(seg.source)
                if base is None or not base.complete or base.id in need or base.id in held:
                    continue
                cached = self._cache.get(base.id)
                if cached is not None:
                    self._cache.move_to_end(base.id)
                    held[base.id] = cached
                    continue
                if base.elsewhere:  # fetched whole: what it copies from is not needed
                    held[base.id] = self._fetched(base)
                    continue
                need[base.id] = base
                todo.append(base)
        for base in sorted(need.values(), key=lambda e: e.index):
            body = self._assemble(base, held, None)
            held[base.id] = body
            self._keep(base.id, body)
        return held

    def _assemble(self, entry: BodyEntry, bases: dict[str, bytes], other: bytes | None) -> bytes:
        m = entry.manifest
        out = bytearray()
        if not m.segments:
            index = next(i for i, p in enumerate(entry.parts) if p.k == "unknown")
            data = entry.own[index]
            out += data if data is not None else _take(other, 0, m.bytes, m.sha256, "the whole body")
        for seg in m.segments:
            pos = len(out)
            if isinstance(seg, LitSeg):
                out += seg.text.encode("utf-8", "surrogatepass")
            elif isinstance(seg, PartSeg):
                data = entry.own[seg.index]
                if data is None:
                    part = entry.parts[seg.index]
                    data = _take(other, pos, part.bytes, part.sha256 or "", f"part {seg.index}")
                out += data
            elif isinstance(seg, PieceSeg):
                data = entry.own_pieces.get(seg.sha256) if seg.sha256 in entry.own_pieces \
                    else self.pieces.get(seg.sha256)
                if data is None:
                    size = self.elsewhere.get(seg.sha256)
                    if size is None:
                        size = self.piece_sizes.get(seg.sha256, -1)
                    elif other is None:
                        raise BodyUnavailable(f"{entry.id}: piece {seg.sha256[:12]} is landed, but not read "
                                              f"by this store")
                    data = _take(other, pos, size, seg.sha256, f"piece {seg.sha256[:12]}")
                out += data
            else:
                out += self._front(entry, seg, bases, other, pos)
            if len(out) > m.bytes:  # references can name large pieces many times over: stop at once
                raise BodyDamaged(f"{entry.id}: rebuilds past the {m.bytes} bytes it claims")
        body = bytes(out)
        if len(body) != m.bytes or hashlib.sha256(body).hexdigest() != m.sha256:
            if other is not None and body != other:
                raise OtherCopyMismatch(f"{entry.id}: the other copy does not rebuild to the manifest's sha256")
            raise BodyDamaged(f"{entry.id}: rebuilt {len(body)} bytes do not match the manifest's bytes/sha256")
        return body

    def _front(self, entry: BodyEntry, seg: CopySeg, bases: dict[str, bytes], other: bytes | None,
               pos: int) -> bytes:
        """The front ``seg`` copies. It names the base's whole digest (which the base's bytes were
        checked against when built), or, in a record an earlier version landed, the front's own digest."""
        base = self.bodies.get(seg.source)
        whole = base is not None and base.manifest.sha256 == seg.sha256
        if seg.source in bases:
            front = bases[seg.source][: seg.length]
        elif whole:  # the base is not complete: the other copy's bytes, checked with the whole body
            if other is None:
                raise BodyTooLarge(f"the copy from {seg.source} was taken out (too large to land); "
                                   f"rebuild it from another copy")
            front = other[pos : pos + seg.length]
        else:
            front = _take(other, pos, seg.length, seg.sha256, f"the copy from {seg.source}")
        if len(front) != seg.length or not (whole or hashlib.sha256(front).hexdigest() == seg.sha256):
            raise BodyDamaged(f"{entry.id}: the copy from {seg.source!r} does not match its len/sha256")
        return front

    def _keep(self, record_id: str, body: bytes) -> None:
        old = self._cache.pop(record_id, None)
        if old is not None:
            self._cache_bytes -= len(old)
        if len(body) > self._cache_limit:
            return
        self._cache[record_id] = body
        self._cache_bytes += len(body)
        while self._cache_bytes > self._cache_limit:
            _, dropped = self._cache.popitem(last=False)
            self._cache_bytes -= len(dropped)


def _part_bytes(part: Part) -> bytes | None:
    """What a part contributes to a body: an unknown part's original bytes, any other part's data."""
    if part.data is None or part.state in ("too_large", "removed"):
        return None
    if part.k == "unknown":
        try:
            return part.raw()
        except ValueError:
            return None
    return bytes(part.data)


def _take(other: bytes | None, pos: int, size: int, digest: str, what: str) -> bytes:
    if other is None:
        raise BodyTooLarge(f"{what} was taken out (too large to land); rebuild it from another copy")
    chunk = other[pos : pos + size] if size >= 0 else b""
    if size < 0 or len(chunk) != size or hashlib.sha256(chunk).hexdigest() != digest:
        raise OtherCopyMismatch(f"the other copy does not hold {what} at byte {pos}")
    return chunk
