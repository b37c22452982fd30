"""Turning one body into a ``provider_body`` record, given what its session already holds.

The body is cut into pieces (:mod:`~asz_core.providerbody.pieces`). Then, from the front:

* the longest front the body shares with one of the candidate earlier bodies the caller names
  (complete ones, within the depth limit) becomes one ``copy`` segment;
* each piece the session already holds becomes a ``piece`` reference by its SHA-256 (one taken
  out to fit is held too, by the spec; one only a skeleton names is not, and lands again);
* each new piece becomes a data part of this record and a ``part`` segment (a piece that
  occurs twice in the body is one part named twice);
* everything else becomes ``lit`` segments.

The manifest is the record's last part. Which earlier bodies are worth comparing is the
caller's knowledge (what a runtime's message list is, and its spellings), so it is passed in.
A body that is not one JSON object in valid UTF-8 is not cut: :func:`whole_record` lands it in
one unknown part, with the reason.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from asz_core.providerbody.manifest import CopySeg, LitSeg, Manifest, PartSeg, PieceSeg, Segment
from asz_core.providerbody.pieces import MIN_STRING, Span, find_pieces
from asz_core.providerbody.store import BodyStore
from asz_core.sessiondata.jsonbytes import NotJSON, loads_strict
from asz_core.sessiondata.model import Part, RawJSON, Record

__all__ = ["DEFAULT_DEPTH_LIMIT", "NOT_PARSED", "BodyInfo", "CutRules", "common_prefix", "encode_body", "uncuttable",
           "whole_record"]

#: A body copies from one at most this many copies away from a body that copies nothing, so a
#: reader rebuilding one body cold rebuilds at most this many others. A body whose best front is
#: past the limit copies nothing (depth 0) but still names the pieces its session holds: the
#: limit bounds how far copies chain, and a piece is read from its part directly.
DEFAULT_DEPTH_LIMIT = 64


@dataclass
class BodyInfo:
    """What the caller knows about one body, in the format's terms."""

    record_id: str                 #: the file name without ``.json``
    role: str                      #: ``request`` or ``response``
    src: str                       #: the file name
    chain: str | None = None
    model: str | None = None
    session: str | None = None
    run: str | None = None
    previous_request: str | None = None
    call: str | None = None        #: the record's ``call``: the provider call id a transcript records
    time: str | None = None
    from_: str | None = None
    flags: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class CutRules:
    """How bodies are cut: which arrays hold one piece per element, how long a string piece
    is at least, how far copies may chain, and how short a front is not worth a copy."""

    arrays: tuple[tuple[str, ...], ...] = ()
    min_string: int = MIN_STRING
    depth_limit: int = DEFAULT_DEPTH_LIMIT
    min_copy: int = 256


#: ``uncuttable``'s ``value`` when the caller has not parsed the body.
NOT_PARSED: object = object()


def uncuttable(body: bytes, value: object = NOT_PARSED) -> str | None:
    """Why ``body`` cannot be cut (not one JSON object in valid UTF-8), or ``None``.

    ``value`` is the body as :func:`~asz_core.sessiondata.jsonbytes.loads_strict` parsed it,
    when the caller already did (a body it parses is valid UTF-8); ``None`` means it did not
    parse.
    """
    if value is NOT_PARSED:
        try:
            body.decode("utf-8")
        except UnicodeDecodeError as exc:
            return f"the body is not valid UTF-8 ({exc.reason} at byte {exc.start})"
        try:
            value = loads_strict(body)
        except NotJSON as exc:
            return f"the body is not JSON ({exc})"
    elif value is None:
        try:
            body.decode("utf-8")
        except UnicodeDecodeError as exc:
            return f"the body is not valid UTF-8 ({exc.reason} at byte {exc.start})"
        return "the body is not JSON"
    if not isinstance(value, dict):
        return "the body is JSON but not one object"
    return None


def common_prefix(a: bytes, b: bytes) -> int:
    """How many leading bytes ``a`` and ``b`` share (compared in growing chunks, then halved)."""
    n = min(len(a), len(b))
    lo, step = 0, 4096
    while lo < n:
        hi = min(n, lo + step)
        if a[lo:hi] != b[lo:hi]:
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if a[lo:mid] == b[lo:mid]:
                    lo = mid
                else:
                    hi = mid
            return lo
        lo, step = hi, step * 2
    return n


def _record(body: bytes, info: BodyInfo, parts: list[Part], manifest: Manifest) -> Record:
    digest = manifest.sha256
    return Record(ord=1, off=0, sha=digest[:12], bytes=len(body), id=info.record_id, call=info.call,
                  from_=info.from_, time=info.time, flags=list(info.flags), model=info.model,
                  parts=[*parts, Part.data_part(RawJSON.of(manifest.to_json()))])


def _manifest(body: bytes, info: BodyInfo, depth: int, segments: list[Segment],
              reason: str | None = None) -> Manifest:
    return Manifest(role=info.role, src=info.src, sha256=hashlib.sha256(body).hexdigest(),
                    bytes=len(body), depth=depth, chain=info.chain, model=info.model,
                    session=info.session, run=info.run, previous_request=info.previous_request,
                    segments=segments, reason=reason)


def whole_record(body: bytes, info: BodyInfo, reason: str) -> Record:
    """The body whole, in one unknown part whose text (and the manifest's ``reason``) says why."""
    return _record(body, info, [Part.unknown(body, reason)], _manifest(body, info, 0, [], reason))


def _front(body: bytes, spans: list[Span], store: BodyStore, bases: Sequence[str],
           rules: CutRules) -> tuple[int, str, int]:
    """``(length, base id, base depth)`` of the longest usable front, or ``(0, "", 0)``."""
    best = (0, "", 0)
    for base_id in bases:
        entry = store.bodies.get(base_id)
        if entry is None or not entry.complete or entry.manifest.depth >= rules.depth_limit:
            continue
        length = common_prefix(body, store.body(base_id))
        if length > best[0]:
            best = (length, base_id, entry.manifest.depth)
    length = best[0]
    if length < len(body):
        # End the front at a piece's start rather than inside it, and on a character boundary.
        starts = [s.start for s in spans]
        i = bisect.bisect_left(starts, length) - 1
        if i >= 0 and spans[i].end > length:
            length = spans[i].start
        while length > 0 and 0x80 <= body[length] < 0xC0:
            length -= 1
    if length < rules.min_copy:
        return 0, "", 0
    return length, best[1], best[2]


def encode_body(body: bytes, info: BodyInfo, store: BodyStore, rules: CutRules,
                bases: Sequence[str] = ()) -> Record:
    """The record of ``body`` (one JSON object in valid UTF-8: check with :func:`uncuttable`).

    ``bases`` are record ids of earlier bodies of the session worth copying a front from, best
    first; ``store`` holds what the session landed before this body.
    """
    spans = find_pieces(body, rules.arrays, rules.min_string, store.known)
    length, base_id, base_depth = _front(body, spans, store, bases, rules)
    segments: list[Segment] = []
    parts: list[Part] = []
    new_parts: dict[str, int] = {}
    depth = 0
    if length:
        segments.append(CopySeg(base_id, hashlib.sha256(body[:length]).hexdigest(), length))
        depth = base_depth + 1
    pos = length
    for span in spans:
        if span.start < pos:
            continue
        if span.start > pos:
            segments.append(LitSeg(body[pos : span.start].decode("utf-8")))
        piece = body[span.start : span.end]
        digest = hashlib.sha256(piece).hexdigest()
        if store.holds_piece(digest):
            segments.append(PieceSeg(digest))
        else:
            index = new_parts.get(digest)
            if index is None:
                index = new_parts[digest] = len(parts)
                parts.append(Part.data_part(RawJSON(piece)))
            segments.append(PartSeg(index))
        pos = span.end
    if pos < len(body):
        segments.append(LitSeg(body[pos:].decode("utf-8")))
    return _record(body, info, parts, _manifest(body, info, depth, segments))
