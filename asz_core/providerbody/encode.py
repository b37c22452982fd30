"""Turning one body into a ``provider_body`` record, given what its session already holds.

The rules are upstream's (``spec/upstream/MAPPING-FACTS.md`` §11), so that its reader rebuilds
every body landed here and this code lands, byte for byte, what it lands:

1. A body that is not valid UTF-8, not valid JSON or not one object is not cut: it lands whole
   in one unknown part (:func:`whole_record`), its only segment ``part 0``, and ``why`` says why.
2. The body is cut into pieces (:mod:`~asz_core.providerbody.pieces`): each element of the
   arrays the rules name (a request's tool definitions), every other long string.
3. A request with a first message names its chain (the rules' ``chain`` of that message's
   bytes) and may copy its front from an earlier request: its chain's tip first, then the tips
   of other chains, most recently updated first, nine candidates at most, each within the depth
   limit; the longest common front wins (ties to the earlier candidate), cut back to the start
   of a piece it would split and to a character's start, and kept only when at least
   ``min_copy`` bytes long. The copy names the base by its whole digest.
4. Each piece: a piece this record already took → ``part`` again; one the session holds →
   ``piece``; else a new data part and a ``part`` segment. Everything else → ``lit``.
5. The record: ``ord`` 1, ``off`` 0, ``sha`` and ``bytes`` of the whole body, ``id``, a
   request's ``run``, a response's ``call``, ``model``, then the parts and the manifest last.

A data part is landed as its bytes; upstream's writer compacts it, so a piece with white space
between its tokens does not come back whole there and its body lands whole: so it does here,
with upstream's words.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from asz_core.providerbody.errors import ProviderBodyError
from asz_core.providerbody.manifest import CopySeg, LitSeg, Manifest, PartSeg, PieceSeg, Segment
from asz_core.providerbody.pieces import MIN_STRING, Span, find_pieces
from asz_core.providerbody.store import BodyStore
from asz_core.sessiondata.jsonbytes import NotJSON, compact, is_compact, loads_strict
from asz_core.sessiondata.model import Part, Record
from asz_core.sessiondata.rawjson import RawJSON, raw_json_of

__all__ = ["DEFAULT_DEPTH_LIMIT", "NOT_PARSED", "BodyInfo", "CutRules", "common_prefix", "encode_body", "uncuttable",
           "whole_record"]

#: A body copies from one at most this many copies away from a body that copies nothing, so a
#: reader rebuilding one body cold rebuilds at most this many others (upstream's bound).
DEFAULT_DEPTH_LIMIT = 32
#: How many tips of other chains a request is compared with besides its own chain's.
OTHER_TIPS = 8

#: ``why`` in upstream's words.
NOT_UTF8 = "the body is not valid UTF-8"
NOT_JSON = "the body is not valid JSON"
NOT_OBJECT = "the body is not a JSON object"


@dataclass
class BodyInfo:
    """What the caller knows about one body, in the format's terms (``None``: not carried)."""

    record_id: str                 #: the file name without ``.json``
    role: str                      #: ``request`` or ``response``
    src: str                       #: the file name
    model: str | None = None
    session: str | None = None     #: the session a request names
    run: str | None = None         #: the run (prompt) a request was sent in
    call: str | None = None        #: the provider call a response answers
    request: str | None = None     #: the provider's id of the request a response answers
    previous_request: str | None = None


def _no_chain(first: bytes) -> str | None:
    return None


@dataclass(frozen=True)
class CutRules:
    """How bodies are cut: which arrays hold one piece per element, how long a string piece
    is at least, how far copies may chain, how short a front is not worth a copy, and how a
    request's chain is named from the bytes of the first element of the ``first`` array."""

    arrays: tuple[tuple[str, ...], ...] = ()
    min_string: int = MIN_STRING
    depth_limit: int = DEFAULT_DEPTH_LIMIT
    min_copy: int = 4096
    first: tuple[str, ...] | None = None
    chain: Callable[[bytes], str | None] = _no_chain


#: ``uncuttable``'s ``value`` when the caller has not parsed the body.
NOT_PARSED: object = object()


def uncuttable(body: bytes, value: object = NOT_PARSED) -> str | None:
    """Why ``body`` cannot be cut (upstream's words), or ``None``.

    ``value`` is the body as :func:`~asz_core.sessiondata.jsonbytes.loads_strict` parsed it,
    when the caller already did (a body it parses is valid UTF-8); ``None`` means it did not
    parse.
    """
    if value is NOT_PARSED or value is None:
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            return NOT_UTF8
    if value is NOT_PARSED:
        try:
            value = loads_strict(body)
        except NotJSON:
            return NOT_JSON
    if value is None:
        return NOT_JSON
    if not isinstance(value, dict):
        return NOT_OBJECT
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
    request = info.role == "request"
    return Record(ord=1, off=0, sha=manifest.sha256[:12], bytes=len(body), id=info.record_id,
                  run=info.run if request else None, call=None if request else info.call,
                  model=info.model, parts=[*parts, Part.data_part(raw_json_of(manifest.to_json()))])


def _manifest(body: bytes, info: BodyInfo, chain: str | None = None) -> Manifest:
    return Manifest(role=info.role, src=info.src, sha256=hashlib.sha256(body).hexdigest(),
                    bytes=len(body), chain=chain, model=info.model, session=info.session,
                    run=info.run, call=info.call, request=info.request,
                    previous_request=info.previous_request)


def whole_record(body: bytes, info: BodyInfo, why: str, chain: str | None = None) -> Record:
    """The body whole, in one unknown part (base64 when it is not UTF-8) whose text, and the
    manifest's ``why``, say why; its one segment is that part."""
    manifest = _manifest(body, info, chain)
    manifest.why, manifest.segments = why, [PartSeg(0)]
    return _record(body, info, [Part.unknown(body, why)], manifest)


def _candidates(store: BodyStore, chain: str) -> list[str]:
    """Record ids of the bodies a request of ``chain`` may copy its front from, in order."""
    out = [store.tips[chain]] if chain in store.tips else []
    for other in reversed(store.tips):
        if len(out) > OTHER_TIPS:
            break
        if other != chain:
            out.append(store.tips[other])
    return out


def _front(body: bytes, spans: list[Span], store: BodyStore, chain: str, rules: CutRules) -> CopySeg | None:
    """The copy the body's front becomes, or ``None``."""
    best: CopySeg | None = None
    for base_id in _candidates(store, chain):
        entry = store.bodies[base_id]
        if entry.manifest.depth + 1 > rules.depth_limit:
            continue
        try:
            base = store.body(base_id)
        except ProviderBodyError:
            continue
        length = common_prefix(body, base)
        if best is None or length > best.length:
            best = CopySeg(base_id, entry.manifest.sha256, length)
    if best is None:
        return None
    length = best.length
    # End the front at a piece's start rather than inside it, and on a character's start: the
    # rest is a literal string.
    i = bisect.bisect_left([s.start for s in spans], length) - 1
    if i >= 0 and spans[i].end > length:
        length = spans[i].start
    while 0 < length < len(body) and 0x80 <= body[length] < 0xC0:
        length -= 1
    if length < rules.min_copy:
        return None
    return CopySeg(best.source, best.sha256, length)


def encode_body(body: bytes, info: BodyInfo, store: BodyStore, rules: CutRules) -> Record:
    """The record of ``body`` (one JSON object in valid UTF-8: check with :func:`uncuttable`);
    ``store`` holds what the session landed before this body."""
    spans, first = find_pieces(body, rules.arrays, rules.min_string, store.known, rules.first)
    manifest = _manifest(body, info)
    pos = 0
    if info.role == "request" and first is not None and first.end > first.start:
        manifest.chain = rules.chain(body[first.start : first.end])
        copy = _front(body, spans, store, manifest.chain, rules) if manifest.chain else None
        if copy is not None:
            manifest.segments.append(copy)
            manifest.depth = store.bodies[copy.source].manifest.depth + 1
            pos = copy.length
    segments: list[Segment] = manifest.segments
    parts: list[Part] = []
    new_parts: dict[str, int] = {}
    for span in spans:
        if span.start < pos:
            continue
        if span.start > pos:
            segments.append(LitSeg(body[pos : span.start].decode("utf-8")))
        piece = body[span.start : span.end]
        digest = hashlib.sha256(piece).hexdigest()
        index = new_parts.get(digest)
        if index is not None:
            segments.append(PartSeg(index))
        elif store.holds_piece(digest):
            segments.append(PieceSeg(digest))
        else:
            index = new_parts[digest] = len(parts)
            parts.append(Part.data_part(RawJSON(piece)))
            segments.append(PartSeg(index))
        pos = span.end
    if pos < len(body):
        segments.append(LitSeg(body[pos:].decode("utf-8")))
    if not all(is_compact(bytes(p.data or b"")) for p in parts):
        return whole_record(body, info, _not_back_whole(info, parts, segments, len(body)), manifest.chain)
    return _record(body, info, parts, manifest)


def _not_back_whole(info: BodyInfo, parts: list[Part], segments: list[Segment], size: int) -> str:
    """Upstream's words for a record whose parts its writer compacts: the rebuilt size is the
    body's less the white space taken out of each part, as often as a segment names it."""
    lost = sum(len(parts[s.index].data or b"") - len(compact(bytes(parts[s.index].data or b"")))
               for s in segments if isinstance(s, PartSeg))
    return (f"the record does not rebuild the body after a round trip: providerbody: {info.record_id} "
            f"rebuilds to {size - lost} bytes that do not match its digest")
