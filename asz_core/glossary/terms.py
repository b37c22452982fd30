"""The objects an adapter declares its vocabulary in, and their gathering from every adapter."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from asz_core.host import PluginHost

__all__ = ["Glossary", "Term", "gather"]


@dataclass(frozen=True)
class Term:
    """One name of the model, as one runtime has it."""

    model: str   #: the model's name (``run``, ``llm.call``, ``parent``)
    native: str  #: what the runtime calls it (a field, a record type, a block)
    where: str   #: where the runtime records it
    note: str = ""  #: what a reader going back to the source must know (not read, also found in…)


@dataclass(frozen=True)
class Glossary:
    """Every name one dialect reads from its runtime."""

    dialect: str
    runtime: str
    terms: tuple[Term, ...]

    def __post_init__(self) -> None:
        names = [t.model for t in self.terms]
        if len(set(names)) != len(names):  # one row per name: a second would contradict the first
            raise ValueError(f"glossary {self.dialect}: a model name is declared twice")


def gather(host: PluginHost) -> list[Glossary]:
    """Every installed adapter's glossaries, in dialect order.

    A dialect declared by two adapters keeps the first one's (adapters load in name order)."""
    _ = host.adapters  # imports every installed adapter, so each one's hook is registered
    seen: dict[str, Glossary] = {}
    for declared in host.pm.hook.asz_glossary():
        for glossary in declared or ():
            seen.setdefault(glossary.dialect, glossary)
    return [seen[d] for d in sorted(seen)]
