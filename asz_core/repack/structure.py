"""What a session's fold says, with every landed position named by the record it points at.

A repack moves records to new files and rows, so an id built from a position (``tool/3/7``,
``…at_3_7``) or an attribute ``{seq, row}`` changes while the record it stands on does not. A
record is named here by where a repack keeps it: its stream directory, its file kind, and its
place among that chain's records (counted over landed files and skeletons alike, in seq order).
Two roots whose folds give the same :class:`Structure` describe the same conversation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from asz_core.assembly import model as m
from asz_core.assembly.chain import Chain
from asz_core.retention.plan import session_files
from asz_core.root.durable import open_landed

__all__ = ["Structure", "fold_structure", "record_names"]

_POSITIONAL = re.compile(r"(?<![\w.])([a-z][a-z.]*)/(\d+)/(\d+)(:\d+)?")
_AT = re.compile(r"at_(\d+)_(\d+)")


@dataclass(frozen=True)
class Structure:
    nodes: frozenset[tuple[str, str, str, str]]  #: (id, kind, parent, attributes as JSON)
    relations: frozenset[tuple[str, str, str]]  #: (type, from, to)
    unresolved: frozenset[str]  #: the ids of the references still open

    def differences(self, other: Structure, limit: int = 8) -> list[str]:
        """What ``other`` says that this does not, and the reverse; one line each."""
        out = [f"node {n} only in the first" for n in sorted(self.nodes - other.nodes)]
        out += [f"node {n} only in the second" for n in sorted(other.nodes - self.nodes)]
        out += [f"relation {r} differs" for r in sorted(self.relations ^ other.relations)]
        out += [f"unresolved {u} differs" for u in sorted(self.unresolved ^ other.unresolved)]
        return out[:limit]


def record_names(session_dir: Path) -> dict[tuple[int, int], str]:
    """Each landed position ``(seq, row)`` → ``<stream directory>:<kind>#<n>``."""
    out: dict[tuple[int, int], str] = {}
    counts: dict[str, int] = {}
    files = session_files(session_dir)
    for seq in sorted(files):
        path = files[seq].get("sd") or files[seq]["sk"]
        with open_landed(path) as reader:
            chain = f"{path.parent.relative_to(session_dir).as_posix()}:{reader.header['kind']}"
            for row, _ in enumerate(reader.raw_records(), start=1):
                counts[chain] = counts.get(chain, 0) + 1
                out[(seq, row)] = f"{chain}#{counts[chain]}"
    return out


def fold_structure(root: Path, session: str) -> Structure:
    """The fold of ``session``'s chain in ``root``, positions named by record."""
    names = record_names(root / session)

    def name(seq: str | int, row: str | int) -> str:
        return names.get((int(seq), int(row)), f"?{seq}/{row}")

    def canon(text: str) -> str:
        text = _POSITIONAL.sub(lambda m: f"{m.group(1)}/{name(m.group(2), m.group(3))}{m.group(4) or ''}", text)
        return _AT.sub(lambda m: f"at_{name(m.group(1), m.group(2))}", text)

    def positions(value: Any) -> Any:  # an attribute like ``usage_at: {seq, row}`` names a record
        if isinstance(value, dict):
            if set(value) == {"seq", "row"} and all(isinstance(v, int) for v in value.values()):
                return name(value["seq"], value["row"])
            return {k: positions(v) for k, v in value.items()}
        if isinstance(value, list):
            return [positions(v) for v in value]
        return value

    def attrs(value: Any) -> str:
        return canon(orjson.dumps(positions(value), option=orjson.OPT_SORT_KEYS).decode())

    fold = Chain(root, session).fold()
    return Structure(
        nodes=frozenset((canon(n["id"]), n["kind"], canon(n.get("parent") or ""), attrs(n.get("attrs")))
                        for n in fold.nodes.values()),
        relations=frozenset((r["type"], canon(r["from"]), canon(r["to"])) for r in fold.relations.values()),
        # a reference resolved in a later round is the chain's history, not the conversation: a
        # parse in one round never opens it
        unresolved=frozenset(canon(u_id) for u_id, u in fold.unresolved.items() if u.get("state") == m.OPEN),
    )
