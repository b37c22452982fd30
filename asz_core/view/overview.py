"""What a list and a header show of a conversation: each talk's label, reply and counts, the
streams, and the segments (asz-view, "Top level" and "A node in talks").

1. A talk's ``label`` is the text of its first ``message.external`` step, whatever that record
   carries (a reader who withholds it sees none). A talk with none is named by the first of its
   first three ``context.injection`` steps that says something, passing over one that carries a
   flag a reader may withhold and Claude Code's record of a change in the tools available.
2. Its ``reply`` is the last ``message.assistant`` or ``agent.output`` step in it, in record
   order; both are clipped like any text, and read from records withheld as they are read.
3. ``runs``, ``steps`` and ``tools`` count what it holds at any depth; ``from`` and ``to`` are the
   first and last record time under it; ``child`` says its stream is not the main one; its
   ``segment`` is the one its ``in_segment`` relation names, never one computed from time.
4. A stream's ``parent`` and ``opened_by`` come from the ``starts`` relations, never from its name;
   several origins are all listed. A child no record labels is named by what its result row in a
   workflow's journal says it covered (``named_by: journal``), unless that record carries a flag
   a reader may withhold.
5. A segment's ``from`` and ``to`` are the span of the talks placed in it.
"""

from __future__ import annotations

from typing import Any, Final

from asz_core.assembly import model as m
from asz_core.view.hide import HIDEABLE
from asz_core.view.landed import Landed, millis
from asz_core.view.nodes import Renderer, ref_of
from asz_core.view.order import record_order
from asz_core.view.text import candidates, clip, cut_utf8, trim

__all__ = ["Overview"]

#: a text that says which tools appeared, not what the work is: it names no talk
_TOOLS_DELTA: Final = '{"type":"deferred_tools_delta"'
_LABEL_INJECTIONS: Final = 3
_NAME_BYTES: Final = 160


class Overview:
    def __init__(self, nodes: dict[str, dict[str, Any]], children: dict[str, list[dict[str, Any]]],
                 relations: list[dict[str, Any]], landed: Landed, renderer: Renderer) -> None:
        self.nodes, self.children, self.relations = nodes, children, relations
        self.landed, self.renderer = landed, renderer

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [n for n in self.nodes.values() if n["kind"] == kind]

    def talk_rows(self, talks: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """Each talk's ``label``, ``reply``, counts, span, ``child`` and ``segment``, by id."""
        children, renderer = self.children, self.renderer
        child_streams = {n.get("stream") for n in self.of_kind("stream")
                         if (n.get("attrs") or {}).get("role") != "main"}
        in_segment = {r["from"]: r["to"] for r in self.relations if r.get("type") == "in_segment"}
        rows: dict[str, dict[str, Any]] = {}
        for t in talks:
            runs = steps = tools = 0
            lo = hi = 0
            label_ext: dict[str, Any] | None = None
            injections: list[dict[str, Any]] = []
            reply: dict[str, Any] | None = None
            stack = [t]
            order: list[dict[str, Any]] = []
            while stack:  # depth first, children in record order, as a person reads the talk
                n = stack.pop()
                order.append(n)
                stack.extend(reversed(children.get(n["id"], [])))
            for n in order:
                ref = ref_of(n.get("ref"))
                at = self.landed.time(ref[0], ref[1]) if ref else 0
                if at:
                    lo = at if lo == 0 or at < lo else lo
                    hi = max(hi, at)
                if n is t:
                    continue
                kind = n["kind"]
                runs += kind == "run"
                steps += kind not in m.STRUCTURE_KINDS
                tools += kind in ("tool", "agent.call")
                if ref is None:
                    continue
                if kind == "message.external" and label_ext is None:
                    label_ext = n
                elif kind == "context.injection" and label_ext is None and len(injections) < _LABEL_INJECTIONS:
                    injections.append(n)
                if kind in ("message.assistant", "agent.output"):
                    reply = n
            row: dict[str, Any] = {}
            label = self._label(label_ext, injections)
            if label:
                row["label"] = label
            said = clip(renderer.text_at(ref_of(reply.get("ref")))) if reply else ""
            if said:
                row["reply"] = said
            for key, value in (("runs", runs), ("steps", steps), ("tools", tools),
                               ("from", millis(lo) if lo else 0), ("to", millis(hi) if hi else 0)):
                if value:
                    row[key] = value
            if t.get("stream") in child_streams:
                row["child"] = True
            if t["id"] in in_segment:
                row["segment"] = in_segment[t["id"]]
            rows[t["id"]] = row
        return rows

    def _label(self, external: dict[str, Any] | None, injections: list[dict[str, Any]]) -> str:
        """A person's input names its talk whatever it carries; else the first injection that says
        something, passing over one a reader may withhold and a tools-list delta."""
        if external is not None:
            return clip(self.renderer.text_at(ref_of(external.get("ref"))))
        for n in injections:
            ref = ref_of(n.get("ref"))
            record = self.landed.record(ref[0], ref[1]) if ref else None
            if record is None or any(f in HIDEABLE for f in record.flags):
                continue
            text = self.renderer.text_at(ref)
            if trim(text).startswith(_TOOLS_DELTA) or not text:
                continue
            return clip(text)
        return ""

    def _talk_of(self, id: str) -> str:
        for _ in range(24):
            n = self.nodes.get(id)
            if n is None:
                return ""
            if n["kind"] == "talk":
                return str(n["id"])
            id = n.get("parent") or ""
        return ""

    def streams(self, talks: list[dict[str, Any]], rows: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
        """One per stream, the main one first: who opened it (every ``starts`` relation, in the
        order they happened), its first talk and the steps its talks hold."""
        first_talk: dict[str, str] = {}
        steps: dict[str, int] = {}
        for t in talks:
            name = t.get("stream", "")
            first_talk.setdefault(name, t["id"])
            steps[name] = steps.get(name, 0) + rows[t["id"]].get("steps", 0)
        parent: dict[str, str] = {}
        opened: dict[str, list[dict[str, str]]] = {}
        for r in self.relations:
            source = self.nodes.get(r.get("from", ""))
            if r.get("type") != "starts" or source is None or not source.get("stream"):
                continue
            parent[r["to"]] = source["stream"]
            opened.setdefault(r["to"], []).append({"step": r["from"], "stream": source["stream"],
                                                   "talk": self._talk_of(r["from"]), "quality": r.get("quality", "")})
        ordered = sorted(self.of_kind("stream"), key=lambda s: ((s.get("attrs") or {}).get("role") != "main",
                                                                 record_order(s)))
        names = self._journal_names()
        out = []
        for s in ordered:
            attrs = s.get("attrs") or {}
            name = s.get("stream", "")
            label, named_by = str(attrs.get("label") or ""), ""
            if not label and name in names:
                label, named_by = names[name], "journal"
            records = attrs.get("records")
            out.append({"id": s["id"], "name": name, "role": attrs.get("role", ""), "label": label,
                        "parent": parent.get(s["id"], ""), "records": records if isinstance(records, int) else 0,
                        "steps": steps.get(name, 0), "talk": first_talk.get(name, ""), "named_by": named_by,
                        "opened_by": opened.get(s["id"], [])})
        return out

    def _journal_names(self) -> dict[str, str]:
        """A child named by what its result row in a workflow's journal says it covered: a
        surface, else a summary, else the verdict and the first claim it was about."""
        names: dict[str, str] = {}
        for (seq, _row), record in sorted(self.landed.records.items()):
            if self.landed.kinds.get(seq) != "journal" or not record.child or record.child in names:
                continue
            if any(f in HIDEABLE for f in record.flags):
                continue  # a record a reader may withhold names no stream
            for value in candidates(record):
                if not isinstance(value, dict) or value.get("type") != "result":
                    continue
                result: dict[str, Any] = value["result"] if isinstance(value.get("result"), dict) else {}
                name = str(result.get("surface") or "") or str(result.get("summary") or "")
                verdict = str(result.get("verdict") or "")
                if not name and verdict:
                    name = verdict
                    refuted = result.get("refuted_claims")
                    claim = refuted[0] if isinstance(refuted, list) and refuted else None
                    if isinstance(claim, dict) and claim.get("claim"):
                        name += " · " + str(claim["claim"])
                name = _short_name(name)
                if name:
                    names[record.child] = name
                break
        return names

    def segments(self, rows: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
        """One per segment, in record order, with the span of the talks the assembler placed in it."""
        count: dict[str, int] = {}
        span: dict[str, list[int]] = {}
        for row in rows.values():
            seg = row.get("segment")
            if not seg:
                continue
            count[seg] = count.get(seg, 0) + 1
            s = span.setdefault(seg, [0, 0])
            if row.get("from") and (s[0] == 0 or row["from"] < s[0]):
                s[0] = row["from"]
            s[1] = max(s[1], row.get("to", 0))
        out = []
        for n in sorted(self.of_kind("segment"), key=record_order):
            attrs = n.get("attrs") or {}
            lo, hi = span.get(n["id"], [0, 0])
            out.append({"id": n["id"], "state": str(attrs.get("state") or ""),
                        "committable": attrs.get("committable") is True, "talks": count.get(n["id"], 0),
                        "from": lo, "to": hi})
        return out


def _short_name(text: str) -> str:
    text = " ".join(text.split())
    cut = cut_utf8(text, _NAME_BYTES)
    return cut if cut == text else cut + "…"
