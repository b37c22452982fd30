"""Entity ids of Session Flow: readable paths built from stable evidence, never positions.

Parts are joined with ``/``; an empty part is left out and a ``/`` inside a part becomes ``_``,
so an id stays readable in a round file and in an error message and is never a hash.
"""

from __future__ import annotations

__all__ = ["Ref", "node_id", "ref_id", "relation_id", "unresolved_id"]

#: ``(seq, row, block)``: a landed record, or one of its parts when block is not ``None``
Ref = tuple[int, int, "int | None"]


def node_id(prefix: str, *parts: str) -> str:
    return "/".join([prefix, *(p.replace("/", "_") for p in parts if p)])


def ref_id(prefix: str, ref: Ref) -> str:
    """``<prefix>/<seq>/<row>``, with ``:<block>`` for one part of the record."""
    seq, row, block = ref
    text = f"{prefix}/{seq}/{row}"
    return text if block is None else f"{text}:{block}"


def relation_id(kind: str, source: str, target: str) -> str:
    return node_id("rel", kind, source, target)


def unresolved_id(kind: str, ref: str) -> str:
    return node_id("unres", kind, ref)
