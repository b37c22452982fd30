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
5. Say what each talk, stream and segment is (:mod:`.overview`), and render each talk, and each
   run or step no talk contains (``loose``), as a tree of nodes with the text their records
   carry, withholding ``hide`` as records are read (:mod:`.nodes`).
6. Write the document's keys in upstream's order, with the summary that sizes it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from asz_core.assembly import model as m
from asz_core.sessiondata.times import parse_instant
from asz_core.view.hide import check_hide
from asz_core.view.landed import Landed, millis, read_landed
from asz_core.view.nodes import Renderer, ref_of
from asz_core.view.order import Point, earliest, in_order, record_order
from asz_core.view.overview import Overview
from asz_core.view.rounds import ChainView, read_chain
from asz_core.view.sidecars import sidecars

__all__ = ["DOCUMENT_KEYS", "FORMAT", "SUMMARY_KEYS", "VERSION", "build_view"]

FORMAT: Final = "asz.view"
VERSION: Final = "1.0"
DOCUMENT_KEYS: Final = ("format", "version", "conversation", "sessions", "head", "parser", "policy", "summary",
                        "rounds", "files", "streams", "segments", "talks", "loose", "relations", "unresolved",
                        "workspace_changes", "tool_executions")
SUMMARY_KEYS: Final = ("title", "state", "problems", "talks", "steps", "streams", "segments", "rounds", "unresolved",
                       "changes", "provider_bodies", "captured_prompts", "from", "to", "kinds", "relation_types",
                       "quality", "withheld")


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

        overview = Overview(self.nodes, children, relations, self.landed, renderer)
        talks = in_order(self.of_kind("talk"), self.node_point, lambda n: n["id"])
        rows = overview.talk_rows(talks)
        talk_docs = [renderer.render(t, 0, rows[t["id"]]) for t in talks]
        loose = [renderer.render(n) for n in self._loose_roots()]
        streams = overview.streams(talks, rows)
        segments = overview.segments(rows)

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
            kids.sort(key=record_order)
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
        return sorted(roots.values(), key=record_order)

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
