"""Provider bodies: raw model request/response bodies, landed without the repeats.

A model request repeats most of the one before it: the whole message list, the system prompt,
the tool schemas. A ``provider_body`` record keeps only what its session does not hold yet and
says, in its ``provider_body/1`` manifest, how to put the rest back (``spec/session-data.txt``,
"Provider bodies"). This package is the format-level half, with no runtime's vocabulary:

* :func:`find_pieces`, :func:`encode_body`, :class:`CutRules`, :class:`BodyInfo` — cutting a
  body into pieces, references, a copied front and literals;
* :class:`BodyLander` — landing a session's new bodies into files, each record checked first;
* :class:`ProviderBodies` — rebuilding any landed body by ``{seq, row}``
  (:meth:`~ProviderBodies.body`, :meth:`~ProviderBodies.body_from`);
* :class:`Manifest` and the errors :class:`BodyTooLarge`, :class:`BodyDamaged`, ...

``asz-pipeline verify`` rebuilds every landed body (:mod:`asz_core.providerbody.check`).
"""

from __future__ import annotations

from asz_core.providerbody.encode import (
    DEFAULT_DEPTH_LIMIT,
    BodyInfo,
    CutRules,
    common_prefix,
    encode_body,
    uncuttable,
    whole_record,
)
from asz_core.providerbody.errors import (
    BodyDamaged,
    BodyNotFound,
    BodyTooLarge,
    BodyUnavailable,
    OtherCopyMismatch,
    ProviderBodyError,
)
from asz_core.providerbody.landing import CUT, REDUCED, SUBDIR, WHOLE, BodyLander, LandedBody
from asz_core.providerbody.manifest import (
    SCHEMA,
    CopySeg,
    LitSeg,
    Manifest,
    ManifestError,
    PartSeg,
    PieceSeg,
    Segment,
)
from asz_core.providerbody.pieces import MIN_STRING, KnownValues, Span, find_pieces
from asz_core.providerbody.reader import ProviderBodies, provider_body_files
from asz_core.providerbody.store import BodyEntry, BodyStore, manifest_of

__all__ = [
    "CUT",
    "DEFAULT_DEPTH_LIMIT",
    "MIN_STRING",
    "REDUCED",
    "SCHEMA",
    "SUBDIR",
    "WHOLE",
    "BodyDamaged",
    "BodyEntry",
    "BodyInfo",
    "BodyLander",
    "BodyNotFound",
    "BodyStore",
    "BodyTooLarge",
    "BodyUnavailable",
    "CopySeg",
    "CutRules",
    "KnownValues",
    "LandedBody",
    "LitSeg",
    "Manifest",
    "ManifestError",
    "OtherCopyMismatch",
    "PartSeg",
    "PieceSeg",
    "ProviderBodies",
    "ProviderBodyError",
    "Segment",
    "Span",
    "common_prefix",
    "encode_body",
    "find_pieces",
    "manifest_of",
    "provider_body_files",
    "uncuttable",
    "whole_record",
]
