"""Every node of an ``asz.view`` document, in the order a reader meets them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

__all__ = ["walk"]


def walk(doc: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every node of the document's trees, depth first: its talks, then what no talk contains
    (``loose``)."""
    stack = [*reversed(doc.get("talks", [])), *reversed(doc.get("loose", []))]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.get("children", [])))
