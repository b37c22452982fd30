"""The words of the Unified Conversation Model that a round carries: kinds, relation types,
qualities and states. One table each, so assembly and its readers cannot disagree."""

from __future__ import annotations

from typing import Any, Final

__all__ = ["Entities", "STRUCTURE_KINDS"]

AVAILABLE: Final = "available"
UNAVAILABLE: Final = "unavailable"
OBSERVED_REPLAYABLE: Final = "observed_replayable"

EXACT_UNIQUE: Final = "exact_unique"
EXACT_AMBIGUOUS: Final = "exact_ambiguous"
STRONG_INFERENCE: Final = "strong_inference"
WEAK_INFERENCE: Final = "weak_inference"
UNRESOLVED: Final = "unresolved"
CONFLICT: Final = "conflict"
#: how much a quality licenses a reader to do; conflict is not on the scale (it never yields)
QUALITY_RANK: Final = {EXACT_UNIQUE: 5, EXACT_AMBIGUOUS: 4, STRONG_INFERENCE: 3, WEAK_INFERENCE: 2}

OPEN: Final = "open"
RESOLVED: Final = "resolved"
TERMINAL: Final = "terminal"

#: node kinds that are structure rather than steps (the header's ``steps`` counts the rest,
#: provider calls among them)
STRUCTURE_KINDS: Final = frozenset({"conversation", "session", "stream", "epoch", "talk", "run", "segment"})

#: an entity as a round carries it, without its frame type and revision: ``{"id": ..., ...}``
Entities = dict[str, dict[str, Any]]
