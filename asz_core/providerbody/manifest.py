"""The ``provider_body/1`` manifest: the last part of a provider body record.

It says what the body is (``role``, ``src``, ``sha256``, ``bytes``, the ids a view joins it by)
and how to put it back together from ``segments``, in order:

* ``{"copy": {"from": <record id>, "sha256": <its digest>, "len": n}}`` — the first ``n`` bytes
  of an earlier body of the session, named by the SHA-256 of that whole body (files an earlier
  version of this project landed name the digest of the copied front: a reader takes either);
* ``{"lit": "<text>"}`` — bytes of the body, as text;
* ``{"part": i}`` — the data of this record's part ``i``;
* ``{"piece": "<sha256>"}`` — a piece the session already holds, by the digest of its bytes.

References are by digest or record id, never by file and row, so ``asz repack`` can renumber.
A body that was not cut is the record's one unknown part, whole: its only segment is
``{"part": 0}`` and ``why`` says why it was not cut. (Files an earlier version landed name no
segment and say why in ``reason``; a reader takes either.)

Keys are written in upstream's order, the ids left out when the body does not carry them:
``schema``, ``role``, ``src``, ``sha256``, ``bytes``, ``depth``, ``chain``, ``why``, ``model``,
``session``, ``run``, ``call``, ``request``, ``previous_request``, ``segments``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final, TypeGuard

__all__ = ["SCHEMA", "CopySeg", "LitSeg", "Manifest", "ManifestError", "PartSeg", "PieceSeg", "Segment"]

SCHEMA: Final = "provider_body/1"
#: a SHA-256 in lowercase hexadecimal (a manifest names one per piece and copy: matched, not
#: taken apart into a set of its characters)
_DIGEST: Final = re.compile("[0-9a-f]{64}")
#: The keys written only when set, in the order they are written.
_OPTIONAL: Final = ("chain", "why", "model", "session", "run", "call", "request", "previous_request")


class ManifestError(ValueError):
    """A value that is not a ``provider_body/1`` manifest."""


@dataclass(frozen=True, slots=True)
class CopySeg:
    source: str   #: the record id of the earlier body
    sha256: str   #: SHA-256 of that whole body (earlier versions: of the copied front)
    length: int


@dataclass(frozen=True, slots=True)
class LitSeg:
    text: str


@dataclass(frozen=True, slots=True)
class PartSeg:
    index: int


@dataclass(frozen=True, slots=True)
class PieceSeg:
    sha256: str


Segment = CopySeg | LitSeg | PartSeg | PieceSeg


@dataclass
class Manifest:
    """One body's manifest. Optional ids are ``None`` when the body does not carry them."""

    role: str
    src: str
    sha256: str
    bytes: int
    depth: int = 0
    chain: str | None = None
    why: str | None = None     #: why a body landed whole instead of cut
    model: str | None = None
    session: str | None = None
    run: str | None = None
    call: str | None = None
    request: str | None = None
    previous_request: str | None = None
    segments: list[Segment] = field(default_factory=list)

    @property
    def copies(self) -> list[CopySeg]:
        return [s for s in self.segments if isinstance(s, CopySeg)]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"schema": SCHEMA, "role": self.role, "src": self.src,
                               "sha256": self.sha256, "bytes": self.bytes, "depth": self.depth}
        for key in _OPTIONAL:
            value = getattr(self, key)
            if value:
                out[key] = value
        out["segments"] = [_segment_json(s) for s in self.segments]
        return out

    @classmethod
    def from_json(cls, value: object) -> Manifest:
        """Read a manifest strictly; ``ManifestError`` says what is wrong."""
        if not isinstance(value, dict) or value.get("schema") != SCHEMA:
            raise ManifestError(f"the last part is not a {SCHEMA} manifest")
        role, src, digest = value.get("role"), value.get("src"), value.get("sha256")
        size, depth = value.get("bytes"), value.get("depth", 0)
        if not isinstance(role, str) or not isinstance(src, str):
            raise ManifestError("role and src must be strings")
        if not _is_digest(digest):
            raise ManifestError("sha256 is not a SHA-256 in hexadecimal")
        if not _is_count(size) or not _is_count(depth):
            raise ManifestError("bytes and depth must be whole non-negative numbers")
        ids = {}
        for key in (*_OPTIONAL, "reason"):
            item = value.get(key)
            if item is not None and not isinstance(item, str):
                raise ManifestError(f"{key} is not a string")
            ids[key] = item or None
        reason = ids.pop("reason")
        ids["why"] = ids["why"] or reason  # earlier versions wrote ``reason``
        segments = value.get("segments")
        if segments is None:
            segments = []
        if not isinstance(segments, list):
            raise ManifestError("segments is not a list")
        return cls(role=role, src=src, sha256=digest, bytes=size, depth=depth,
                   segments=[_segment_of(s, n) for n, s in enumerate(segments)], **ids)


def _is_digest(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and _DIGEST.fullmatch(value) is not None


def _is_count(value: object) -> TypeGuard[int]:
    return type(value) is int and 0 <= value < 2**63


def _segment_json(seg: Segment) -> dict[str, Any]:
    if isinstance(seg, LitSeg):
        return {"lit": seg.text}
    if isinstance(seg, PartSeg):
        return {"part": seg.index}
    if isinstance(seg, PieceSeg):
        return {"piece": seg.sha256}
    return {"copy": {"from": seg.source, "sha256": seg.sha256, "len": seg.length}}


def _segment_of(value: object, n: int) -> Segment:
    if not isinstance(value, dict) or len(value) != 1:
        raise ManifestError(f"segment {n} is not an object with one key")
    ((key, item),) = value.items()
    if key == "lit" and isinstance(item, str):
        return LitSeg(item)
    if key == "part" and _is_count(item):
        return PartSeg(item)
    if key == "piece" and _is_digest(item):
        return PieceSeg(item)
    if key == "copy" and isinstance(item, dict):
        source, digest, length = item.get("from"), item.get("sha256"), item.get("len")
        if isinstance(source, str) and source and _is_digest(digest) and _is_count(length):
            return CopySeg(source, digest, length)
    raise ManifestError(f"segment {n} ({key!r}) is not a copy, lit, part or piece")
