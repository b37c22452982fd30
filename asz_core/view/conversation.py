"""The ``asz.view`` 1.0 document of one conversation, built from its rounds and its landed files.

The document is everything a viewer renders and nothing a viewer must compute (upstream's
``formats/asz-view.md``). It is never stored: built each time, it always agrees with the rounds
and the landed files, and the same head over the same files gives the same document. The steps:

1. Fold the round chain as far as it goes and check it as ``verify`` does: ``head``, ``rounds``,
   the round files, ``summary.state`` and ``summary.problems`` (:mod:`.rounds`).
2. Read every landed file of the session once: its ``files`` entry, the time and lane of each
   record, and the records the nodes stand on (:mod:`.landed`).
3. Join the change and execution records to their steps (:mod:`.sidecars`).
4. Order what happened (:mod:`.order`): talks at their own record and relations at the earliest
   record of their evidence, lanes merged by time; children, streams (the main one first),
   segments and loose trees in record order.
5. Render each talk, and each run or step no talk contains (``loose``), as a tree of nodes with
   the text their records carry, withholding ``hide`` as records are read (:mod:`.nodes`).
6. Write the document's keys in upstream's order, with the summary that sizes it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from asz_core.assembly import model as m
from asz_core.sessiondata.times import parse_instant
from asz_core.view.hide import HIDEABLE, check_hide
from asz_core.view.landed import Landed, millis, read_landed
from asz_core.view.nodes import Renderer, ref_of
from asz_core.view.order import Point, earliest, in_order
from asz_core.view.rounds import ChainView, read_chain
from asz_core.view.sidecars import sidecars
from asz_core.view.text import candidates, clip, trim

__all__ = ["DOCUMENT_KEYS", "FORMAT", "SUMMARY_KEYS", "VERSION", "build_view"]

FORMAT: Final = "asz.view"
VERSION: Final = "1.0"
DOCUMENT_KEYS: Final = ("format", "version", "conversation", "sessions", "head", "parser", "policy", "summary",
                        "rounds", "files", "streams", "segments", "talks", "loose", "relations", "unresolved",
                        "workspace_changes", "tool_executions")
SUMMARY_KEYS: Final = ("title", "state", "problems", "talks", "steps", "streams", "segments", "rounds", "unresolved",
                       "changes", "provider_bodies", "captured_prompts", "from", "to", "kinds", "relation_types",
                       "quality", "withheld")
#: a text that says which tools appeared, not what the work is: it names no talk
_TOOLS_DELTA: Final = '{"type":"deferred_tools_delta"'
_LABEL_INJECTIONS: Final = 3


def build_view(root: Path, conversation: str, *, hide: Iterable[str] = ()) -> dict[str, Any]:
    """The ``asz.view`` document of ``conversation`` in the storage root at ``root``.

    ``hide`` names the flags whose records are withheld (``view.hide`` and a request's own);
    ``ValueError`` for a name that cannot be, :class:`~asz_core.view.errors.NoRounds` when the
    conversation has no round that folds.
    """
    return _Build(root, conversation, check_hide(hide)).document()


def _millis_of(value: Any) -> int:
    nanos = parse_instant(value)
    return millis(nanos) if nanos else 0


def _position(n: dict[str, Any]) -> tuple[int, int, int, int, str]:
    """Record order: landed position, a node on the whole record before those on its parts, then
    id; a node with no position last."""
    ref = ref_of(n.get("ref"))
    if ref is None:
        return (1, 0, 0, 0, n["id"])
    return (0, ref[0], ref[1], -1 if ref[2] is None else ref[2], n["id"])


def _sorted_counts(values: Iterable[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return dict(sorted(out.items()))


class _Build:
    def __init__(self, root: Path, conversation: str, hide: tuple[str, ...]) -> None:
        self.root, self.conversation, self.hide = root, conversation, hide
        self.chain: ChainView = read_chain(root, conversation)
        fold = self.chain.fold
        self.session = str((fold.first or {}).get("session") or conversation)
        self.nodes = fold.nodes
        self.landed: Landed = read_landed(root, self.session)

    # ---- places ------------------------------------------------------------------------

    def point(self, value: Any) -> Point | None:
        ref = ref_of(value)
        if ref is None or ref[0] == 0:
            return None
        seq, row, block = ref
        return Point(self.landed.lanes.get(seq, ""), seq, row, -1 if block is None else block,
                     self.landed.time(seq, row))

    def node_point(self, node: dict[str, Any]) -> Point | None:
        return self.point(node.get("ref"))

    def ordered_nodes(self, nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return in_order(nodes, self.node_point, lambda n: n["id"])

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [n for n in self.nodes.values() if n["kind"] == kind]

    # ---- the document ------------------------------------------------------------------

    def document(self) -> dict[str, Any]:
        fold = self.chain.fold
        head = fold.head or {}
        relations = in_order(list(fold.relations.values()),
                             lambda r: earliest(self.point(e) for e in r.get("evidence") or []),
                             lambda r: r["id"])
        children = self._children()
        edges = self._edges(relations)
        changes, executions, changed, ran = sidecars(self.nodes, self.landed)
        renderer = Renderer(self.nodes, children, edges, self.landed, self.hide, changed, ran)

        talks = self.ordered_nodes(self.of_kind("talk"))
        rows = self._talk_rows(talks, children, relations, renderer)
        talk_docs = [renderer.render(t, 0, rows[t["id"]]) for t in talks]
        loose = [renderer.render(n) for n in self._loose_roots()]
        streams = self._streams(talks, rows, relations)
        segments = self._segments(rows)

        session_attrs = (self.nodes.get(f"session/{self.session}") or {}).get("attrs") or {}
        bodies = session_attrs.get("provider_bodies_landed")
        provider_bodies = bodies if isinstance(bodies, int) else 0
        summary: dict[str, Any] = {
            "title": session_attrs.get("title") or "", "state": self.chain.state, "problems": self.chain.problems,
            "talks": len(talk_docs),
            "steps": sum(1 for n in self.nodes.values() if n["kind"] not in m.STRUCTURE_KINDS),
            "streams": len(streams), "segments": len(segments), "rounds": len(self.chain.rounds),
            "unresolved": sum(1 for u in fold.unresolved.values() if u.get("state") == m.OPEN),
            "changes": len(changes), "provider_bodies": provider_bodies,
            "captured_prompts": 0 if self.hide else self._captured_prompts(),
            "from": _millis_of(session_attrs.get("from_time")), "to": _millis_of(session_attrs.get("through_time")),
            "kinds": _sorted_counts(n["kind"] for n in self.nodes.values()),
            "relation_types": _sorted_counts(r["type"] for r in relations),
            "quality": _sorted_counts(r.get("quality", "") for r in relations),
            "withheld": self._withheld(provider_bodies),
        }
        doc: dict[str, Any] = {
            "format": FORMAT, "version": VERSION, "conversation": self.conversation,
            "sessions": self._sessions(), "head": {"round": fold.rounds, "digest": fold.digest},
            "parser": head.get("parser", ""), "policy": head.get("policy", ""),
            "summary": {k: summary[k] for k in SUMMARY_KEYS},
            "rounds": self.chain.rounds, "files": self.landed.files + self.chain.files,
            "streams": streams, "segments": segments, "talks": talk_docs, "loose": loose,
            "relations": [self._relation(r) for r in relations],
            "unresolved": [{"id": u["id"], "kind": u.get("kind", ""), "ref": u.get("ref", ""),
                            "reason": u.get("reason", ""), "state": u.get("state", "")}
                           for u in sorted(fold.unresolved.values(), key=lambda u: u["id"])],
            "workspace_changes": changes, "tool_executions": executions,
        }
        return {k: doc[k] for k in DOCUMENT_KEYS}

    def _sessions(self) -> list[str]:
        out = [self.session]
        for n in sorted(self.of_kind("session"), key=lambda n: n["id"]):
            other = n["id"].removeprefix("session/")
            if other not in out:
                out.append(other)
        return out

    @staticmethod
    def _relation(r: dict[str, Any]) -> dict[str, Any]:
        out = {"id": r["id"], "type": r.get("type", ""), "from": r.get("from", ""), "to": r.get("to", ""),
               "quality": r.get("quality", "")}
        if r.get("via"):
            out["via"] = r["via"]
        evidence = [e for e in (ref_of(x) for x in r.get("evidence") or []) if e is not None]
        if evidence:
            out["evidence"] = [{"seq": s, "row": w} if b is None else {"seq": s, "row": w, "block": b}
                               for s, w, b in evidence]
        return out

    def _children(self) -> dict[str, list[dict[str, Any]]]:
        by_parent: dict[str, list[dict[str, Any]]] = {}
        for n in self.nodes.values():
            if n.get("parent"):
                by_parent.setdefault(n["parent"], []).append(n)

        for kids in by_parent.values():
            kids.sort(key=_position)
        return by_parent

    @staticmethod
    def _edges(relations: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for r in relations:
            for direction, here, other in (("in", r.get("to"), r.get("from")), ("out", r.get("from"), r.get("to"))):
                if not here:
                    continue
                edge = {"type": r.get("type", ""), "other": other or "", "dir": direction,
                        "quality": r.get("quality", "")}
                if r.get("via"):
                    edge["via"] = r["via"]
                out.setdefault(str(here), []).append(edge)
        return out

    # ---- talks ---------------------------------------------------------------------------

    def _talk_rows(self, talks: list[dict[str, Any]], children: dict[str, list[dict[str, Any]]],
                   relations: list[dict[str, Any]], renderer: Renderer) -> dict[str, dict[str, Any]]:
        child_streams = {n.get("stream") for n in self.of_kind("stream")
                         if (n.get("attrs") or {}).get("role") != "main"}
        in_segment = {r["from"]: r["to"] for r in relations if r.get("type") == "in_segment"}
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
            label = self._label(label_ext, injections, renderer)
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

    def _label(self, external: dict[str, Any] | None, injections: list[dict[str, Any]], renderer: Renderer) -> str:
        """A person's input names its talk whatever it carries; else the first injection that says
        something, passing over one a reader may withhold and a tools-list delta."""
        if external is not None:
            return clip(renderer.text_at(ref_of(external.get("ref"))))
        for n in injections:
            ref = ref_of(n.get("ref"))
            record = self.landed.record(ref[0], ref[1]) if ref else None
            if record is None or any(f in HIDEABLE for f in record.flags):
                continue
            text = renderer.text_at(ref)
            if trim(text).startswith(_TOOLS_DELTA) or not text:
                continue
            return clip(text)
        return ""

    def _loose_roots(self) -> list[dict[str, Any]]:
        roots: dict[str, dict[str, Any]] = {}
        for n in self.nodes.values():
            if n["kind"] != "run" and n["kind"] in m.STRUCTURE_KINDS:
                continue
            top, covered, hops = n, False, 0
            cur: dict[str, Any] | None = n
            while cur is not None and hops <= len(self.nodes):
                if cur["kind"] == "talk":
                    covered = True
                    break
                if cur["kind"] == "run" or cur["kind"] not in m.STRUCTURE_KINDS:
                    top = cur
                cur = self.nodes.get(cur.get("parent") or "")
                hops += 1
            if not covered:
                roots[top["id"]] = top
        return sorted(roots.values(), key=_position)

    # ---- streams and segments ------------------------------------------------------------

    def _talk_of(self, id: str) -> str:
        for _ in range(24):
            n = self.nodes.get(id)
            if n is None:
                return ""
            if n["kind"] == "talk":
                return str(n["id"])
            id = n.get("parent") or ""
        return ""

    def _streams(self, talks: list[dict[str, Any]], rows: dict[str, dict[str, Any]],
                 relations: list[dict[str, Any]]) -> list[dict[str, Any]]:
        first_talk: dict[str, str] = {}
        steps: dict[str, int] = {}
        for t in talks:
            name = t.get("stream", "")
            first_talk.setdefault(name, t["id"])
            steps[name] = steps.get(name, 0) + rows[t["id"]].get("steps", 0)
        parent: dict[str, str] = {}
        opened: dict[str, list[dict[str, str]]] = {}
        for r in relations:
            source = self.nodes.get(r.get("from", ""))
            if r.get("type") != "starts" or source is None or not source.get("stream"):
                continue
            parent[r["to"]] = source["stream"]
            opened.setdefault(r["to"], []).append({"step": r["from"], "stream": source["stream"],
                                                   "talk": self._talk_of(r["from"]), "quality": r.get("quality", "")})
        ordered = sorted(self.of_kind("stream"), key=lambda s: ((s.get("attrs") or {}).get("role") != "main",
                                                                 _position(s)))
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

    def _segments(self, rows: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
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
        for n in sorted(self.of_kind("segment"), key=_position):
            attrs = n.get("attrs") or {}
            lo, hi = span.get(n["id"], [0, 0])
            out.append({"id": n["id"], "state": str(attrs.get("state") or ""),
                        "committable": attrs.get("committable") is True, "talks": count.get(n["id"], 0),
                        "from": lo, "to": hi})
        return out

    # ---- summary ---------------------------------------------------------------------------

    def _captured_prompts(self) -> int:
        return sum(1 for n in self.of_kind("llm.call")
                   if any(isinstance(b, dict) and b.get("role") == "request"
                          for b in (n.get("attrs") or {}).get("provider_bodies") or []))

    def _withheld(self, provider_bodies: int) -> dict[str, int]:
        if not self.hide:
            return {}
        # every landed record carrying a withheld name, whether or not a step stands on it: the
        # record endpoint withholds it all the same, and a count of only the records a tree read
        # would say 0 where a record no step stands on was withheld
        counts = dict.fromkeys(self.hide, 0)
        for record in self.landed.records.values():
            for flag in set(record.flags):
                if flag in counts:
                    counts[flag] += 1
        counts["provider_bodies"] = provider_bodies
        return dict(sorted(counts.items()))


def _short_name(text: str) -> str:
    text = " ".join(text.split())
    raw = text.encode("utf-8")
    if len(raw) <= 160:
        return text
    cut = 160
    while cut > 0 and raw[cut] & 0xC0 == 0x80:
        cut -= 1
    return raw[:cut].decode("utf-8") + "…"
