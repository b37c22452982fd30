"""A node of the fold as the document writes it, with what its records say (asz-view, "A node in talks").

For one node, in the document's key order:

1. ``id``, ``kind``, ``parent``, ``stream``, ``at`` (its record's time in milliseconds, 0 when
   none), ``ref``, ``refs`` and ``attrs`` as the round wrote them, ``provider_bodies`` taken out of
   ``attrs`` and given under a key of its own.
2. A node that stands on content (every kind but the structure and ``llm.call``) takes ``text``,
   ``state``, ``bytes`` and ``name`` from the part its ``ref`` names (or the record's only part),
   and the record's ``flags`` and ``dropped``; a tool or agent call reads what came back from its
   other references until one gives a ``result``, and ``request_to_result_ms`` where the join is
   exact; a ``turn.duration`` step gives the duration the runtime measured.
3. A model call shows no content of its own: its ``usage`` comes from the one record
   ``usage_at`` names, and its ``flags`` are only those a reader may withhold.
4. A record carrying a withheld flag is withheld as it is read: a step on it keeps its place,
   ``flags`` and size, has no ``text``, and says ``omitted``; a result read from it is absent,
   with ``result_state`` ``omitted``.
5. ``children`` in record order (position, a node on the whole record before those on its parts,
   then id), down to twelve levels below the root; ``edges`` in the order the relations happened.

A key with no value is absent, never null.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from asz_core.assembly import model as m
from asz_core.sessiondata.model import Part, Record
from asz_core.view.hide import HIDEABLE
from asz_core.view.landed import Landed, millis
from asz_core.view.text import candidates, clip, data_text, readable, trim

__all__ = ["MAX_DEPTH", "NODE_KEYS", "Renderer", "carries_content", "ref_json", "ref_of"]

MAX_DEPTH: Final = 12
#: a node's keys, in the order the document writes them
NODE_KEYS: Final = ("id", "kind", "parent", "stream", "at", "ref", "refs", "attrs", "text", "state", "bytes", "usage",
                    "flags", "dropped", "label", "reply", "runs", "steps", "tools", "from", "to", "child", "segment",
                    "name", "failed", "result", "result_state", "result_bytes", "request_to_result_ms",
                    "request_to_result_join", "changes", "executions", "duration_ms", "duration_measured_by",
                    "provider_bodies", "children", "edges")
OMITTED: Final = "omitted"
_NO_CONTENT: Final = frozenset({"llm.call", *m.STRUCTURE_KINDS})


def carries_content(kind: str) -> bool:
    return kind not in _NO_CONTENT


def ref_of(value: Any) -> tuple[int, int, int | None] | None:
    if not isinstance(value, dict) or not isinstance(value.get("seq"), int) or not isinstance(value.get("row"), int):
        return None
    block = value.get("block")
    return value["seq"], value["row"], block if isinstance(block, int) else None


def ref_json(ref: tuple[int, int, int | None]) -> dict[str, int]:
    seq, row, block = ref
    return {"seq": seq, "row": row} if block is None else {"seq": seq, "row": row, "block": block}


def _part_at(record: Record, block: int | None) -> Part | None:
    if block is not None and 0 <= block < len(record.parts):
        return record.parts[block]
    if len(record.parts) == 1:
        return record.parts[0]
    return None


def _without_content(record: Record) -> Record:
    parts = [Part(k=p.k, state=OMITTED, bytes=p.bytes, id=p.id, name=p.name, of=p.of, failed=p.failed)
             for p in record.parts]
    return Record(ord=record.ord, off=record.off, sha=record.sha, bytes=record.bytes, id=record.id,
                  time=record.time, flags=record.flags, usage=record.usage, dropped=record.dropped, parts=parts)


class Renderer:
    """Renders trees of one fold over one session's landed records, withholding ``hide``."""

    def __init__(self, nodes: dict[str, dict[str, Any]], children: dict[str, list[dict[str, Any]]],
                 edges: dict[str, list[dict[str, Any]]], landed: Landed, hide: Iterable[str],
                 changes: dict[str, list[str]], executions: dict[str, list[str]]) -> None:
        self.nodes, self.children, self.edges, self.landed = nodes, children, edges, landed
        self.changes, self.executions = changes, executions
        self.hide = frozenset(hide)

    # ---- records, withheld as read -----------------------------------------------------

    def withheld(self, record: Record) -> bool:
        return bool(self.hide) and any(f in self.hide for f in record.flags)

    def record(self, seq: int, row: int) -> Record | None:
        record = self.landed.record(seq, row)
        if record is None:
            return None
        return _without_content(record) if self.withheld(record) else record

    def text_at(self, ref: tuple[int, int, int | None] | None) -> str:
        """A record's readable text as a talk's label or reply reads it, withheld as read."""
        if ref is None:
            return ""
        record = self.record(ref[0], ref[1])
        return readable(record) if record is not None else ""

    # ---- one node --------------------------------------------------------------------------

    def render(self, node: dict[str, Any], depth: int = 0, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        kind = node["kind"]
        out: dict[str, Any] = {"id": node["id"], "kind": kind}
        if node.get("parent"):
            out["parent"] = node["parent"]
        if node.get("stream"):
            out["stream"] = node["stream"]
        ref = ref_of(node.get("ref"))
        out["at"] = millis(self.landed.time(ref[0], ref[1])) if ref else 0
        if ref:
            out["ref"] = ref_json(ref)
        refs = [r for r in (ref_of(x) for x in node.get("refs") or []) if r is not None]
        if refs:
            out["refs"] = [ref_json(r) for r in refs]
        attrs = node.get("attrs")
        bodies: list[Any] = []
        if isinstance(attrs, dict):
            bodies = list(attrs.get("provider_bodies") or [])
            shown = {k: v for k, v in attrs.items() if k != "provider_bodies"}
            if shown:
                out["attrs"] = shown
        if ref and carries_content(kind):
            self._content(node, ref, refs, out)
        elif kind == "llm.call":
            self._call(node, ref, out)
        if extra:
            out.update(extra)
        for key, by_step in (("changes", self.changes), ("executions", self.executions)):
            if node["id"] in by_step:
                out[key] = by_step[node["id"]]
        if bodies and not self.hide:
            out["provider_bodies"] = [{"role": b.get("role"), "ref": {"seq": b["ref"]["seq"], "row": b["ref"]["row"]}}
                                      for b in bodies if isinstance(b, dict) and isinstance(b.get("ref"), dict)]
        if depth < MAX_DEPTH:
            kids = [self.render(k, depth + 1) for k in self.children.get(node["id"], [])]
            if kids:
                out["children"] = kids
        edges = self.edges.get(node["id"])
        if edges:
            out["edges"] = edges
        return {key: out[key] for key in NODE_KEYS if key in out}

    def _call(self, node: dict[str, Any], ref: tuple[int, int, int | None] | None, out: dict[str, Any]) -> None:
        at = ref_of((node.get("attrs") or {}).get("usage_at"))
        if at is not None:
            record = self.record(at[0], at[1])
            if record is not None and record.usage is not None:
                out["usage"] = record.usage.to_json()
        if ref is not None:
            record = self.landed.record(ref[0], ref[1])
            flags = [f for f in (record.flags if record else []) if f in HIDEABLE]
            if flags:
                out["flags"] = flags

    def _content(self, node: dict[str, Any], ref: tuple[int, int, int | None],
                 refs: list[tuple[int, int, int | None]], out: dict[str, Any]) -> None:
        record = self.record(ref[0], ref[1])
        if record is not None:
            self._fill(record, ref[2], out)
            if node["kind"] == "turn.duration":
                self._duration(node, record, out)
            if record.flags:
                out["flags"] = list(record.flags)
            if record.dropped:
                out["dropped"] = [d.to_json() for d in record.dropped]
            if self.withheld(record):
                out.pop("text", None)
                out["state"] = OMITTED
                if not out.get("bytes"):
                    size = sum(p.bytes for p in record.parts)
                    if size:
                        out["bytes"] = size
        for r in refs[1:]:
            if "result" in out:
                break
            back = self.record(r[0], r[1])
            if back is not None:
                self._result(back, r[2], out)
        self._request_to_result(node, refs, out)

    @staticmethod
    def _fill(record: Record, block: int | None, out: dict[str, Any]) -> None:
        part = _part_at(record, block)
        if part is None:
            text = clip(readable(record))
            if text:
                out["text"] = text
            return
        if part.name:
            out["name"] = part.name
        if part.failed is not None:
            out["failed"] = part.failed
        if part.state:
            out["state"] = part.state
        if part.bytes:
            out["bytes"] = part.bytes
        if part.text:
            out["text"] = clip(part.text)
        elif part.data:
            # a data part reads as the record's readable text when it has one (a wrapped message
            # reads as the message); any other part's data, a call's input, is shown as it is
            said, raw = readable(record) if part.k == "data" else "", data_text(part)
            out["text"] = clip(said if said and said != trim(raw) else raw)

    @staticmethod
    def _result(record: Record, block: int | None, out: dict[str, Any]) -> None:
        if block is not None and 0 <= block < len(record.parts):
            part: Part | None = record.parts[block]
        else:
            part = next((p for p in record.parts if p.k == "result"), None)
        if part is None:
            return
        if part.state:
            out["result_state"] = part.state
        if part.bytes:
            out["result_bytes"] = part.bytes
        if part.failed is not None and "failed" not in out:
            out["failed"] = part.failed
        if part.text:
            out["result"] = clip(part.text)
        elif part.data:
            out["result"] = clip(data_text(part))

    def _request_to_result(self, node: dict[str, Any], refs: list[tuple[int, int, int | None]],
                           out: dict[str, Any]) -> None:
        if len(refs) < 2 or (node.get("attrs") or {}).get("result_join") != m.EXACT_UNIQUE:
            return
        start = self.landed.time(refs[0][0], refs[0][1])
        end = self.landed.time(refs[1][0], refs[1][1])
        if not start or not end or end < start:
            return
        gap = (end - start) // 1_000_000
        if gap:
            out["request_to_result_ms"] = gap
        out["request_to_result_join"] = m.EXACT_UNIQUE

    @staticmethod
    def _duration(node: dict[str, Any], record: Record, out: dict[str, Any]) -> None:
        for value in candidates(record):
            if isinstance(value, dict) and isinstance(value.get("durationMs"), int) and value["durationMs"]:
                out["duration_ms"] = value["durationMs"]
                measured = (node.get("attrs") or {}).get("measured_by")
                if isinstance(measured, str) and measured:
                    out["duration_measured_by"] = measured
                out.pop("text", None)
                return
