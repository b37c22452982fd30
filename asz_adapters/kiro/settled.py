"""Which Kiro sessions a pass may judge settled from a stat alone
(:class:`~asz_core.root.settled.SettledSessions`): those made of CLI bundles and IDE session
directories only, each a JSONL log (append cursor) and a metadata document (snapshot cursor).
A database conversation is a row of kiro-cli's database, which no stat of a file describes, so
a session holding one is landed every pass, as before.
"""

from __future__ import annotations

from collections.abc import Iterable

from asz_adapters.kiro.units import CliBundle, IdeSession, Unit
from asz_core.plugin import SettledBy

__all__ = ["TRANSCRIPT", "META", "settled_sources"]

#: the landed file kinds of a log and of its metadata document (their cursors' kinds)
TRANSCRIPT = "transcript"
META = "agent_meta"


def settled_sources(units: Iterable[Unit]) -> list[SettledBy] | None:
    """Every file of ``units``, in landing order, as the settled protocol takes them; ``None``
    when one of them is not a file pair (a database conversation)."""
    out: list[SettledBy] = []
    for unit in units:
        if isinstance(unit, CliBundle):
            log = unit.jsonl
        elif isinstance(unit, IdeSession):
            log = unit.messages
        else:
            return None
        subdir = f"streams/{unit.stream}"
        out.append(SettledBy(str(log), subdir, TRANSCRIPT))
        out.append(SettledBy(str(unit.meta), subdir, META, append=False))
    return out
