"""Session Flow (``sf/1``): a round's bytes, the strict reading of one, and the fold.

A round is JSON lines: one ``header``, then every ``node``, ``relation`` and ``unresolved``
frame (each group sorted by id), then one ``commit`` whose digest covers every line before it.
The bytes are a function of the frames alone (no wall-clock time, keys in a fixed order, maps
sorted, ``<``, ``>``, ``&``, U+2028 and U+2029 escaped as upstream's encoder does), so the same
evidence reproduces the same digest.

The fold takes a round only if it carries the next number, names the previous digest and the
chain's conversation, session, parser and policy; a higher revision supersedes, absence means
unchanged, a tombstone removes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from asz_core.assembly import model as m

__all__ = ["PARSER", "POLICY", "SCHEMA", "Fold", "Round", "RoundError", "Struct", "encode_round", "read_round"]

SCHEMA: Final = "sf/1"
PARSER: Final = "v1"
POLICY: Final = "v1+idle=10m0s"

_HEADER_KEYS: Final = ("t", "schema", "conversation", "session", "round", "previous", "from_seq", "through_seq",
                       "input_digest", "parser", "policy", "from_time", "through_time", "session_from_time",
                       "session_through_time", "title", "talks", "steps", "streams", "segments", "unresolved",
                       "changes", "lines_added", "lines_removed", "llm_calls", "subagents", "bash_runs")
_OMIT_EMPTY: Final = frozenset({"previous", "from_time", "through_time", "session_from_time",
                                "session_through_time", "title"})
_NODE_KEYS: Final = ("kind", "parent", "stream", "ref", "refs", "attrs")
_RELATION_KEYS: Final = ("type", "from", "to", "quality", "via", "evidence")
_UNRESOLVED_KEYS: Final = ("kind", "ref", "reason", "state")
#: what every frame of an entity group must carry, apart from a tombstone
_ALWAYS: Final = {"node": ("kind",), "relation": ("type", "from", "to", "quality"), "unresolved": ("kind", "state")}
FRAME_KEYS: Final = {"node": _NODE_KEYS, "relation": _RELATION_KEYS, "unresolved": _UNRESOLVED_KEYS}
_ESCAPES: Final = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                                 "\u2028": "\\u2028", "\u2029": "\\u2029"})


class RoundError(ValueError):
    """A round a reader must reject rather than fold; the message says which rule it breaks."""


class Struct(dict):  # type: ignore[type-arg]
    """A value upstream writes as a struct: its keys in the order given, not sorted."""


def _encode(value: Any) -> str:
    if isinstance(value, Struct):
        return "{" + ",".join(f"{json.dumps(k)}:{_encode(v)}" for k, v in value.items()) + "}"
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(k, ensure_ascii=False)}:{_encode(value[k])}" for k in sorted(value)) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_encode(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def dumps(value: Any) -> str:
    """Compact JSON as upstream's encoder writes it: maps by sorted key (a :class:`Struct` in its
    own order), HTML characters and the two line separators escaped (they occur only inside
    strings)."""
    if isinstance(value, (dict, list)) and _has_struct(value):
        return _encode(value).translate(_ESCAPES)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True).translate(_ESCAPES)


def _has_struct(value: Any) -> bool:
    if isinstance(value, Struct):
        return True
    if isinstance(value, dict):
        return any(isinstance(v, (dict, list)) and _has_struct(v) for v in value.values())
    if isinstance(value, list):
        return any(isinstance(v, (dict, list)) and _has_struct(v) for v in value)
    return False


def _ref(ref: Any) -> str:
    """A reference is a struct upstream: ``seq``, ``row``, then ``block`` when there is one."""
    if not isinstance(ref, dict):
        return dumps(ref)
    return _ordered(ref, ("seq", "row", "block"))


def _refs(refs: Any) -> str:
    return "[" + ",".join(_ref(r) for r in refs) + "]" if isinstance(refs, list) else dumps(refs)


_STRUCTS: Final[dict[str, Callable[[Any], str]]] = {"ref": _ref, "refs": _refs, "evidence": _refs}


def _ordered(obj: dict[str, Any], keys: tuple[str, ...]) -> str:
    """A struct-like frame: its keys in their fixed order, not sorted (maps inside are)."""
    return "{" + ",".join(f"{json.dumps(k)}:{_STRUCTS.get(k, dumps)(obj[k])}" for k in keys if k in obj) + "}"


def entity_line(frame: str, entity: dict[str, Any], revision: int) -> str:
    head = {"t": frame, "id": entity["id"], "revision": revision}
    if entity.get("tombstone"):
        head["tombstone"] = True
    body = dict(entity)
    for required in _ALWAYS[frame]:
        body.setdefault(required, "")
    keys = ("t", "id", "revision", "tombstone", *FRAME_KEYS[frame])
    return _ordered({**body, **head}, keys)


def encode_round(header: dict[str, Any], nodes: list[dict[str, Any]], relations: list[dict[str, Any]],
                 unresolved: list[dict[str, Any]]) -> tuple[bytes, str]:
    """The bytes of one round and its digest; each entity group is written sorted by id."""
    revision = int(header["round"])
    head = {k: v for k, v in {"t": "header", "schema": SCHEMA, **header}.items()
            if not (k in _OMIT_EMPTY and not v)}
    lines = [_ordered(head, _HEADER_KEYS)]
    for frame, group in (("node", nodes), ("relation", relations), ("unresolved", unresolved)):
        lines.extend(entity_line(frame, e, revision) for e in sorted(group, key=lambda e: e["id"]))
    body = "".join(line + "\n" for line in lines).encode("utf-8")
    digest = hashlib.sha256(body).hexdigest()
    counts = {"nodes": len(nodes), "relations": len(relations), "unresolved": len(unresolved)}
    commit = _ordered({"t": "commit", "digest": digest, "counts": counts}, ("t", "digest", "counts"))
    return body + commit.encode("utf-8") + b"\n", digest


@dataclass
class Round:
    header: dict[str, Any]
    nodes: list[dict[str, Any]]
    relations: list[dict[str, Any]]
    unresolved: list[dict[str, Any]]
    digest: str

    @property
    def number(self) -> int:
        return int(self.header["round"])

    def references(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for n in self.nodes:
            if isinstance(n.get("ref"), dict):
                out.append(n["ref"])
            out.extend(r for r in n.get("refs") or [] if isinstance(r, dict))
        for r in self.relations:
            out.extend(e for e in r.get("evidence") or [] if isinstance(e, dict))
        return out


def _check_header(h: dict[str, Any]) -> None:
    if h.get("schema") != SCHEMA:
        raise RoundError(f"schema {h.get('schema')!r} is not {SCHEMA}")
    for key in ("conversation", "session", "parser", "policy", "input_digest"):
        if not isinstance(h.get(key), str) or not h[key]:
            raise RoundError(f"the header lacks {key}")
    for key in ("round", "from_seq", "through_seq"):
        if type(h.get(key)) is not int or h[key] < 0:
            raise RoundError(f"the header's {key} is not a whole number")
    if h["round"] == 0:
        raise RoundError("round must count from 1")
    if h["round"] > 1 and not h.get("previous"):
        raise RoundError(f"round {h['round']} names no previous digest")
    if h["round"] == 1 and h.get("previous"):
        raise RoundError("round 1 names a previous digest")
    if h["from_seq"] == 0:
        raise RoundError("from_seq is 0; landed sequences count from 1")
    if h["through_seq"] < h["from_seq"] - 1:
        raise RoundError(f"sequences {h['from_seq']}..{h['through_seq']} are not a range")


def read_round(data: bytes) -> Round:
    """Read one round strictly (session-flow, "Reading it"); ``RoundError`` names the rule."""
    if not data.endswith(b"\n"):
        raise RoundError("the round does not end with a complete line: it is truncated")
    raw_lines = data[:-1].split(b"\n")
    frames: list[dict[str, Any]] = []
    for i, raw in enumerate(raw_lines, start=1):
        try:
            frame = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            raise RoundError(f"line {i} does not decode") from None
        if not isinstance(frame, dict):
            raise RoundError(f"line {i} is not an object")
        frames.append(frame)
    if not frames or frames[0].get("t") != "header":
        raise RoundError("the first line is not a header")
    header = frames[0]
    _check_header(header)
    if frames[-1].get("t") != "commit":
        raise RoundError("the commit is missing: the round is truncated")
    commit = frames[-1]
    groups: dict[str, list[dict[str, Any]]] = {"node": [], "relation": [], "unresolved": []}
    seen: set[str] = set()
    for i, frame in enumerate(frames[1:-1], start=2):
        t = frame.get("t")
        if t == "header":
            raise RoundError(f"line {i}: a second header")
        if t == "commit":
            raise RoundError(f"line {i}: a line follows the commit")
        if t not in groups:
            raise RoundError(f"line {i}: unknown frame type {t!r}")
        id = frame.get("id")
        if not isinstance(id, str) or not id:
            raise RoundError(f"line {i}: an entity with no id")
        if id in seen:
            raise RoundError(f"line {i}: id {id} appears twice")
        seen.add(id)
        if frame.get("revision") != header["round"]:
            raise RoundError(f"line {i}: revision {frame.get('revision')} is not the round {header['round']}")
        if not frame.get("tombstone"):
            if t == "relation" and not all(frame.get(k) for k in ("type", "from", "to")):
                raise RoundError(f"line {i}: a relation lacks type, from or to")
            if t == "unresolved" and frame.get("state") not in (m.OPEN, m.RESOLVED, m.TERMINAL):
                raise RoundError(f"line {i}: unresolved state {frame.get('state')!r}")
        groups[t].append(frame)
    body = b"".join(line + b"\n" for line in raw_lines[:-1])
    digest = hashlib.sha256(body).hexdigest()
    if commit.get("digest") != digest:
        raise RoundError("the commit's digest does not match the round's bytes")
    counts = {"nodes": len(groups["node"]), "relations": len(groups["relation"]),
              "unresolved": len(groups["unresolved"])}
    if commit.get("counts") != counts:
        raise RoundError(f"the commit's counts {commit.get('counts')} are not what was read ({counts})")
    rnd = Round(header, groups["node"], groups["relation"], groups["unresolved"], digest)
    for ref in rnd.references():
        seq, row = ref.get("seq"), ref.get("row")
        if seq == 0 and row == 0:
            raise RoundError("a reference names sequence 0 row 0")
        if isinstance(seq, int) and seq > header["through_seq"]:
            raise RoundError(f"a reference names sequence {seq}, past through_seq {header['through_seq']}")
    return rnd


def _entity(frame: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in frame.items() if k not in ("t", "revision", "tombstone")}


@dataclass
class Fold:
    """The conversation as of the last round taken: live entities by id, and the chain's head."""

    nodes: m.Entities = field(default_factory=dict)
    relations: m.Entities = field(default_factory=dict)
    unresolved: m.Entities = field(default_factory=dict)
    revisions: dict[str, int] = field(default_factory=dict)
    head: dict[str, Any] | None = None
    digest: str = ""
    rounds: int = 0
    first: dict[str, Any] | None = None

    def take(self, rnd: Round) -> None:
        """Apply the next round, or ``RoundError`` when it does not follow this fold."""
        h = rnd.header
        if h["round"] != self.rounds + 1:
            raise RoundError(f"round {h['round']} does not follow round {self.rounds}")
        if (h.get("previous") or "") != self.digest:
            raise RoundError(f"round {h['round']} names previous {str(h.get('previous'))[:12]!r}, "
                             f"but round {self.rounds} digests to {self.digest[:12]!r}")
        if self.first is not None:
            for key in ("conversation", "session", "parser", "policy"):
                if h.get(key) != self.first.get(key):
                    raise RoundError(f"round {h['round']} has {key} {h.get(key)!r}, "
                                     f"the chain {self.first.get(key)!r}")
        else:
            self.first = h
        for group, frames in ((self.nodes, rnd.nodes), (self.relations, rnd.relations),
                              (self.unresolved, rnd.unresolved)):
            for frame in frames:
                self.revisions[frame["id"]] = h["round"]
                if frame.get("tombstone"):
                    group.pop(frame["id"], None)
                else:
                    group[frame["id"]] = _entity(frame)
        self.head, self.digest, self.rounds = h, rnd.digest, h["round"]

    @property
    def through_seq(self) -> int:
        return int(self.head["through_seq"]) if self.head else 0

    @property
    def input_digest(self) -> str:
        return str(self.head["input_digest"]) if self.head else ""
