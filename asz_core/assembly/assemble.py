"""Assembly: a session's landed evidence → its nodes, relations and unresolved references.

The whole session is assembled every time, up to a watermark fixed before it starts, so the same
evidence always gives the same entities (conversation-assembly, "The pipeline"). Eight stages,
in the only order that works, each depending on the one before:

1. Remove duplicate records: the first copy of a record id in landed order wins, across the
   whole session; a record with no id is never a copy. Changes, execution and provider-body
   records are evidence beside the streams, never steps of them.
2. Partition streams: one lineage per header ``stream``; ``main`` is the main one, a stream
   whose opening records all say ``auxiliary`` is auxiliary, every other one is a child.
3. Group provider calls by ``call`` in line order; a call is finished when a fragment says
   ``finished``, synthetic when one says ``synthetic``; usage is the last fragment's.
4. Join tools by the exact tool-use id across the session: the first call part is the
   request, a second result makes the join ambiguous.
5. Join children to the calls that started them: a journal (through the batch's launch
   result), a child's sidecar, a notification, a parent's result naming the child.
6. Cut context epochs only at a ``context_reset`` record.
7. Build talks and runs: a run is a ``run`` id within its stream, reached by walking parents
   backward (64 links at most); on a parent lineage a talk starts at a run that states an
   ``external`` trigger or states none; a child stream is one talk.
8. Propose segments on the main stream, cut at idle gaps, with the four gates.

Then the steps are written, now that their containers are known.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from asz_core.assembly import evidence as ev
from asz_core.assembly import model as m
from asz_core.assembly.evidence import Entry, LandedEvidence
from asz_core.assembly.flow import Struct
from asz_core.assembly.ids import Ref, node_id, ref_id, relation_id, unresolved_id
from asz_core.sessiondata.times import format_instant

__all__ = ["IDLE_GAP_NS", "Assembly", "assemble"]

IDLE_GAP_NS = 10 * 60 * 1_000_000_000
#: the parent walk's limit exists only so corrupt data cannot loop
_ANCESTOR_HOPS = 64
_IGNORED_KINDS = frozenset({ev.CHANGES, ev.PROVIDER_BODY, ev.EXECUTION})
#: files whose lines are numbered on their own, not as one of a stream's transcript lines
_SIDE_FILE_KINDS = frozenset({"agent_meta", "journal", "workflow_manifest", "workflow_script", "changes",
                              "execution", "provider_body"})


@dataclass
class Assembly:
    nodes: m.Entities
    relations: m.Entities
    unresolved: m.Entities
    stats: dict[str, int]


def _ref(r: Ref) -> dict[str, int]:
    seq, row, block = r
    return {"seq": seq, "row": row} if block is None else {"seq": seq, "row": row, "block": block}


@dataclass(eq=False)
class _Stream:
    name: str
    role: str
    node: str
    entries: list[Entry] = field(default_factory=list)
    last: int = 0
    epochs: list[_Epoch] = field(default_factory=list)
    talks: list[_Talk] = field(default_factory=list)


@dataclass(eq=False)
class _Epoch:
    node: str
    start: int
    end: int


@dataclass(eq=False)
class _Talk:
    node: str
    stream: _Stream
    epoch: _Epoch | None
    runs: list[str] = field(default_factory=list)
    emitted: list[str] = field(default_factory=list)
    first: int = 0
    last: int = 0
    at: Ref | None = None

    def mark(self, r: Ref) -> None:
        if self.at is None or (r[0], r[1]) < (self.at[0], self.at[1]):
            self.at = r


@dataclass(eq=False)
class _Call:
    call: str
    stream: _Stream
    node: str
    fragments: list[Entry] = field(default_factory=list)
    finished: bool = False
    synthetic: bool = False


@dataclass(eq=False)
class _Tool:
    tool: str
    stream: _Stream
    node: str
    use: Entry | None = None
    use_ord: int = 0
    name: str = ""
    server: str = ""
    server_tool: str = ""
    result: Entry | None = None
    result_ord: int = 0
    ambiguous: bool = False
    starts_agent: bool = False


@dataclass(frozen=True)
class _Spawn:
    tool: str
    batch: str
    parent: str
    stream: str
    via: str
    quality: str
    ref: Ref


def assemble(files: Sequence[LandedEvidence], session: str, conversation: str,
             through_seq: int = 0, idle_gap_ns: int = IDLE_GAP_NS) -> Assembly:
    """Assemble ``session`` from its landed files, reading none above ``through_seq`` (0: all)."""
    if not conversation:
        raise ValueError("assembly: the conversation identity is supplied, never inferred")
    return _Builder(files, session, conversation, through_seq, idle_gap_ns).run()


class _Builder:
    def __init__(self, files: Sequence[LandedEvidence], session: str, conversation: str,
                 through_seq: int, idle_gap_ns: int) -> None:
        self.files = [f for f in files if not through_seq or f.seq <= through_seq]
        self.session, self.conversation, self.gap = session, conversation, idle_gap_ns
        self.session_node = node_id("session", session)
        self.nodes: m.Entities = {}
        self.rels: m.Entities = {}
        self.unres: m.Entities = {}
        self.stats: dict[str, int] = {"entries": 0, "duplicates": 0, "steps": 0, "tool_uses": 0,
                                      "tools_resolved": 0, "spawns": 0, "spawns_resolved": 0}
        self.streams: list[_Stream] = []
        self.by_stream: dict[str, _Stream] = {}
        self.calls: list[_Call] = []
        self.tools: list[_Tool] = []
        self.tool_by_id: dict[str, _Tool] = {}
        self.talks: list[_Talk] = []
        self.talk_by_id: dict[str, _Talk] = {}
        self.talk_of_run: dict[tuple[str, str], str] = {}
        self.run_node: dict[tuple[str, str], str] = {}
        self.run_at: dict[tuple[str, str], Ref] = {}
        self.container: dict[tuple[int, int], str] = {}
        self.epoch_at: dict[tuple[int, int], str] = {}
        self.spawns: list[_Spawn] = []
        self.by_record: dict[str, Entry] = {}
        self.run_of: dict[tuple[int, int], str] = {}
        self.canonical: list[Entry] = []
        self.bodies: list[Entry] = []
        self.by_position: dict[tuple[int, int], Entry] = {}
        self.bodies_of_call: dict[str, list[Struct]] = {}

    def run(self) -> Assembly:
        self.stage1_canonical()
        self.stage2_streams()
        self.stage3_calls()
        self.stage4_tools()
        self.stage5_spawns()
        self.stage6_epochs()
        self.stage7_talks()
        self.stage8_segments()
        self.join_provider_bodies()
        self.emit_steps()
        return Assembly(dict(sorted(self.nodes.items())), dict(sorted(self.rels.items())),
                        dict(sorted(self.unres.items())), self.stats)

    # ---- writing entities ------------------------------------------------------------------

    def node(self, id: str, kind: str, *, parent: str = "", stream: str = "", ref: Ref | None = None,
             refs: Sequence[Ref] = (), attrs: dict[str, Any] | None = None) -> None:
        n: dict[str, Any] = {"id": id, "kind": kind}
        if parent:
            n["parent"] = parent
        if stream:
            n["stream"] = stream
        if ref is not None:
            n["ref"] = _ref(ref)
        if refs:
            n["refs"] = [_ref(r) for r in refs]
        if attrs:
            n["attrs"] = attrs
        self.nodes[id] = n

    def step(self, id: str, kind: str, e: Entry, parent: str, ref: Ref | None = None,
             attrs: dict[str, Any] | None = None) -> None:
        self.node(id, kind, parent=parent, stream=self.stream_name(e), ref=ref or e.ref, attrs=attrs)
        self.stats["steps"] += 1

    def relate(self, kind: str, source: str, target: str, quality: str, via: str, *evidence: Ref) -> None:
        """One typed edge per (type, from, to): a second observation merges its evidence and
        keeps the stronger quality; a conflict, once said, stays."""
        id = relation_id(kind, source, target)
        kept = [_ref(e) for e in evidence if e[0] != 0]
        prev = self.rels.get(id)
        if prev is None:
            rel: dict[str, Any] = {"id": id, "type": kind, "from": source, "to": target, "quality": quality}
            if via:
                rel["via"] = via
            if kept:
                rel["evidence"] = kept
            self.rels[id] = rel
            return
        if m.CONFLICT in (prev["quality"], quality):
            prev["quality"] = m.CONFLICT
            if via and prev.get("via") != via:
                prev["via"] = f"{prev.get('via', '')}; {via}"
        elif m.QUALITY_RANK.get(quality, 0) > m.QUALITY_RANK.get(prev["quality"], 0):
            prev["quality"] = quality
            if via:
                prev["via"] = via
        if kept:
            prev["evidence"] = [*prev.get("evidence", []), *kept]

    def open(self, kind: str, ref: str, reason: str) -> None:
        """An unresolved reference is data: dropping it would present a partial conversation
        as a complete one."""
        id = unresolved_id(kind, ref)
        if id not in self.unres:
            self.unres[id] = {"id": id, "kind": kind, "ref": ref, "reason": reason, "state": m.OPEN}

    # ---- lookups ---------------------------------------------------------------------------

    def stream_name(self, e: Entry) -> str:
        s = self.by_stream.get(e.stream)
        return s.name if s else ""

    def run_for(self, e: Entry) -> str:
        """The run a record belongs to: its own, else the first reached walking parents back."""
        key = (e.seq, e.row)
        found = self.run_of.get(key)
        if found is None:
            found = self.run_of[key] = self._walk_to_run(e)
        return found

    def _walk_to_run(self, e: Entry) -> str:
        cur = e
        for _ in range(_ANCESTOR_HOPS + 1):
            if cur.run:
                return cur.run
            if not cur.parent:
                return ""
            nxt = self.by_record.get(cur.parent)
            if nxt is None or nxt is cur:
                return ""
            cur = nxt
        return ""

    def container_of(self, e: Entry) -> str:
        found = self.container.get((e.seq, e.row))
        if found:
            return found
        s = self.by_stream.get(e.stream)
        return s.node if s else self.session_node

    # ---- stage 1 ---------------------------------------------------------------------------

    def stage1_canonical(self) -> None:
        seen_bodies: set[str] = set()
        for f in self.files:
            for e in f.entries:
                self.by_position.setdefault((e.seq, e.row), e)
                if e.kind == ev.PROVIDER_BODY:
                    # a body landed twice by an interrupted pass is one body; its first landing counts
                    if e.record and e.record not in seen_bodies:
                        seen_bodies.add(e.record)
                        self.bodies.append(e)
                    continue
                if e.record:
                    if e.record in self.by_record:
                        self.stats["duplicates"] += 1
                        continue
                    self.by_record[e.record] = e
                if e.kind not in _IGNORED_KINDS:
                    self.canonical.append(e)
        self.stats["entries"] = len(self.canonical)

    # ---- stage 2 ---------------------------------------------------------------------------

    def stage2_streams(self) -> None:
        attrs: dict[str, Any] = {"conversation": self.conversation}
        title = ""
        for e in self.canonical:
            if e.label and not e.record and e.kind not in (ev.META, ev.MANIFEST):
                title = e.label
        if title:
            attrs["title"], attrs["title_from"] = title, m.OBSERVED_REPLAYABLE
        times = [e.ts for e in self.canonical if e.ts]
        if times:
            attrs["from_time"], attrs["through_time"] = format_instant(min(times)), format_instant(max(times))
        if self.bodies:
            attrs["provider_bodies_landed"] = len(self.bodies)
        self.node(self.session_node, "session", attrs=attrs)

        auxiliary: set[str] = set()
        program: set[str] = set()
        for e in self.canonical:
            if e.child:
                (auxiliary if e.flags & ev.AUXILIARY else program).add(e.child)
        for e in self.canonical:
            if not e.stream:
                continue  # journals, manifests and scripts belong to a run, not a stream
            s = self.by_stream.get(e.stream)
            if s is None:
                role = "main" if e.stream == "main" else (
                    "auxiliary" if e.stream in auxiliary and e.stream not in program else "child")
                s = self.by_stream[e.stream] = _Stream(e.stream, role, node_id("stream", e.stream))
                self.streams.append(s)
            s.entries.append(e)
            if e.ts > s.last:
                s.last = e.ts
        self.streams.sort(key=lambda s: s.name)
        for s in self.streams:
            a: dict[str, Any] = {"role": s.role, "records": len(s.entries)}
            label = next((e.label for e in self.canonical if e.kind == ev.META and e.label
                          and s.name in (e.stream, e.child)), "")
            if label:
                a["label"] = label
            self.node(s.node, "stream", parent=self.session_node, stream=s.name, ref=s.entries[0].ref, attrs=a)

    # ---- stage 3 ---------------------------------------------------------------------------

    def stage3_calls(self) -> None:
        by_call: dict[str, _Call] = {}
        for s in self.streams:
            for e in s.entries:
                if e.kind != ev.ASSISTANT or not e.call:
                    continue
                c = by_call.get(e.call)
                if c is None:
                    c = by_call[e.call] = _Call(e.call, s, node_id("call", e.call))
                    self.calls.append(c)
                c.fragments.append(e)
                c.synthetic |= bool(e.flags & ev.SYNTHETIC)
                c.finished |= bool(e.flags & ev.FINISHED)
        self.calls.sort(key=lambda c: c.node)
        for c in self.calls:
            c.fragments.sort(key=lambda e: (e.seq, e.row))

    # ---- stage 4 ---------------------------------------------------------------------------

    def stage4_tools(self) -> None:
        for s in self.streams:
            for e in s.entries:
                for b in e.blocks:
                    if not b.tool or b.kind not in (ev.CALL, ev.RESULT):
                        continue
                    t = self.tool_by_id.get(b.tool)
                    if t is None:
                        t = self.tool_by_id[b.tool] = _Tool(b.tool, s, node_id("tool", b.tool))
                        self.tools.append(t)
                    if b.kind == ev.CALL:
                        if t.use is None:
                            t.use, t.use_ord, t.name = e, b.ord, b.name
                            t.server, t.server_tool = b.server, b.server_tool
                    elif t.result is not None:
                        t.ambiguous = True
                    else:
                        t.result, t.result_ord = e, b.ord
        self.tools.sort(key=lambda t: t.node)
        for t in self.tools:
            if t.use is None:
                self.open("tool_use", t.tool, "a result arrived for a request that was never landed")
                continue
            self.stats["tool_uses"] += 1
            if t.ambiguous:
                self.open("tool_result", t.tool, "several results carry this tool-use id")
            elif t.result is not None:
                self.stats["tools_resolved"] += 1
            else:
                self.open("tool_result", t.tool, "no result landed for this tool use")

    # ---- stage 5 ---------------------------------------------------------------------------

    def stage5_spawns(self) -> None:
        # A batch is reached from the parent's launch result, which names both the batch and
        # the tool use that started it: the edge runs from that call, with no node for the batch.
        batch_tool: dict[str, str] = {}
        for e in self.canonical:
            if not e.batch or e.kind == ev.JOURNAL:
                continue
            for b in e.blocks:
                if b.kind == ev.RESULT and b.tool and e.batch not in batch_tool:
                    batch_tool[e.batch] = b.tool
        edges: list[_Spawn] = []
        seen: set[tuple[str, str, str, str]] = set()

        def add(sp: _Spawn) -> None:
            if not sp.stream or not (sp.tool or sp.batch or sp.parent):
                return  # a sidecar naming only a type says nothing about who started it
            key = (sp.tool, sp.batch, sp.parent, sp.stream)
            if key not in seen:
                seen.add(key)
                edges.append(sp)

        for e in self.canonical:
            if not e.child:
                continue
            anchor = e.tool or next((b.tool for b in e.blocks if b.kind == ev.RESULT and b.tool), "")
            if e.kind == ev.JOURNAL:
                add(_Spawn(batch_tool.get(e.batch, ""), e.batch, "", e.child, "run journal",
                           m.STRONG_INFERENCE, e.ref))
            elif e.kind == ev.META:
                add(_Spawn(anchor, "", e.started_by, e.child, "child sidecar", m.EXACT_UNIQUE, e.ref))
            elif e.trigger == "notification":
                add(_Spawn(anchor, "", "", e.child, "completion notification", m.EXACT_UNIQUE, e.ref))
            else:
                add(_Spawn(anchor, "", "", e.child, "parent tool result", m.EXACT_UNIQUE, e.ref))
        edges.sort(key=lambda sp: (sp.stream, sp.tool, sp.batch))

        spawned: set[str] = set()
        for sp in edges:
            child = self.by_stream.get(sp.stream)
            if child is None:
                self.open("child_stream", sp.stream, "announced, but no transcript has landed yet")
                continue
            self.stats["spawns"] += 1
            if not sp.tool and sp.parent and sp.parent in self.by_stream:
                self.spawns.append(sp)  # nested: named only by the agent that started it
                spawned.add(sp.stream)
                self.stats["spawns_resolved"] += 1
                continue
            if not sp.tool:
                self.open("spawn_call", sp.batch, "a batch names children but its launch call was never landed")
                continue
            if sp.tool not in self.tool_by_id:
                self.open("spawn_call", sp.tool, "a child names a call that was never landed")
                continue
            if child.role != "auxiliary":
                self.tool_by_id[sp.tool].starts_agent = True
            self.spawns.append(sp)
            spawned.add(sp.stream)
            self.stats["spawns_resolved"] += 1
        for s in self.streams:
            if s.role != "main" and s.name not in spawned:
                self.open("spawn_of_child", s.name, "no landed record names the call that started this stream")

    # ---- stage 6 ---------------------------------------------------------------------------

    def stage6_epochs(self) -> None:
        for s in self.streams:
            cuts = [i for i, e in enumerate(s.entries) if e.flags & ev.CONTEXT_RESET]
            start, prev = 0, ""
            bounds: list[tuple[int, int]] = []
            for cut in cuts:
                if cut == start:
                    continue  # a stream that opens with a reset has no epoch before it
                bounds.append((start, cut))
                start = cut
            bounds.append((start, len(s.entries)))
            for lo, hi in bounds:
                boundary = s.entries[lo] if lo in cuts else None
                key = "0"
                if boundary is not None:
                    key = boundary.record or ref_id("at", boundary.ref)
                ep = _Epoch(node_id("epoch", s.name, key), lo, hi)
                s.epochs.append(ep)
                for e in s.entries[lo:hi]:
                    self.epoch_at[(e.seq, e.row)] = ep.node
                a: dict[str, Any] = {"records": hi - lo}
                refs: list[Ref] = []
                if boundary is not None:
                    refs.append(boundary.ref)
                    a["reset"] = m.OBSERVED_REPLAYABLE
                    if boundary.continues:
                        a["continues_from"] = boundary.continues
                        if boundary.continues not in self.by_record:
                            self.open("epoch_continuation", boundary.continues,
                                      "a reset names a record that is not in the landed data")
                else:
                    a["reset"] = "none"
                self.node(ep.node, "epoch", parent=s.node, stream=s.name, ref=s.entries[lo].ref,
                          refs=refs, attrs=a)
                if prev:
                    self.relate("follows", ep.node, prev, m.EXACT_UNIQUE, "explicit context reset", *refs)
                prev = ep.node

    # ---- stage 7 ---------------------------------------------------------------------------

    def stage7_talks(self) -> None:
        for s in self.streams:
            if not s.entries:
                continue
            runs = [self.run_for(e) for e in s.entries]
            cur: _Talk | None = None
            if s.role == "child":
                cur = self.new_talk(s, s.epochs[0], node_id("talk", s.name))
                cur.mark(s.entries[0].ref)
            for ep in s.epochs:
                for i in range(ep.start, ep.end):
                    e, cyc = s.entries[i], runs[i]
                    if not cyc:
                        self.place(e, cur, ep, s)
                        if cur is not None:
                            cur.mark(e.ref)
                        continue
                    key = (s.name, cyc)
                    if key not in self.talk_of_run:
                        if cur is None or self.starts_talk(cyc, s):
                            cur = self.new_talk(s, ep, node_id("talk", s.name, cyc))
                            cur.runs.append(cyc)
                        else:
                            cur.runs.append(cyc)
                        self.talk_of_run[key] = cur.node
                        if key not in self.run_node:
                            self.run_node[key] = node_id("run", cur.node, cyc)
                            cur.emitted.append(cyc)
                    t = self.talk_by_id.get(self.talk_of_run[key])
                    self.place(e, t, ep, s)
                    if t is not None:
                        t.mark(e.ref)
                        if e.ts:
                            t.first = e.ts if not t.first or e.ts < t.first else t.first
                            t.last = max(t.last, e.ts)
                    at = self.run_at.get(key)
                    if at is None or (e.seq, e.row) < (at[0], at[1]):
                        self.run_at[key] = e.ref
        for t in self.talks:
            trigger = "unknown" if t.stream.role == "child" else "external"
            assert t.at is not None
            self.node(t.node, "talk", parent=t.epoch.node if t.epoch else t.stream.node, stream=t.stream.name,
                      ref=t.at, attrs={"loops": len(t.runs), "runs": len(t.emitted), "trigger": trigger})
            for cyc in t.emitted:
                key = (t.stream.name, cyc)
                self.node(self.run_node[key], "run", parent=t.node, stream=t.stream.name, ref=self.run_at[key],
                          attrs={"trigger": "external" if t.runs and cyc == t.runs[0] else "notification"})

    def new_talk(self, s: _Stream, ep: _Epoch | None, id: str) -> _Talk:
        t = self.talk_by_id.get(id)
        if t is None:
            t = self.talk_by_id[id] = _Talk(id, s, ep)
            s.talks.append(t)
            self.talks.append(t)
        return t

    def starts_talk(self, run: str, s: _Stream) -> bool:
        """A run on a parent lineage starts a talk when it states an external trigger, or states
        none at all (a command typed locally records no trigger and is a person acting)."""
        if s.role == "child":
            return False
        stated = False
        for e in s.entries:
            if e.run != run or not e.trigger:
                continue
            if e.trigger == "external":
                return True
            stated = True
        return not stated

    def place(self, e: Entry, t: _Talk | None, ep: _Epoch | None, s: _Stream) -> None:
        """The innermost resolved container: the run, else the talk, the epoch, the stream."""
        key = (e.seq, e.row)
        if t is not None:
            cyc = self.run_for(e)
            run = self.run_node.get((s.name, cyc)) if cyc else None
            self.container[key] = run or t.node
        elif ep is not None:
            self.container[key] = ep.node
        else:
            self.container[key] = s.node

    # ---- stage 8 ---------------------------------------------------------------------------

    def stage8_segments(self) -> None:
        main = next((s for s in self.streams if s.role == "main"), None)
        if main is None or not main.talks:
            return
        talks = sorted(main.talks, key=lambda t: t.first)
        windows: list[list[_Talk]] = [[]]
        for i, t in enumerate(talks):
            if i and t.first and talks[i - 1].last and t.first - talks[i - 1].last > self.gap:
                windows.append([])
            windows[-1].append(t)
        for n, window in enumerate(windows, start=1):
            last = n == len(windows)
            lo = min((t.first for t in window if t.first), default=0)
            hi = max((t.last for t in window), default=0)
            gates = {
                "activity_boundary": not last,
                "no_crossing_open_operation": self.no_open_operation(lo, hi),
                "lateness_watermark": not last and main.last - hi > self.gap,
                "conversation_identity": bool(self.conversation),
            }
            unmet = [g for g in ("activity_boundary", "no_crossing_open_operation", "lateness_watermark",
                                 "conversation_identity") if not gates[g]]
            first = window[0].at
            assert first is not None
            seg = node_id("segment", ref_id("at", first))
            self.node(seg, "segment", parent=self.session_node, ref=first,
                      attrs={"state": "open" if last else "candidate", "talks": len(window),
                             "gates_unmet": unmet, "committable": not unmet})
            for t in window:
                assert t.at is not None
                self.relate("in_segment", t.node, seg, m.EXACT_UNIQUE, "activity window", t.at)
            for t in self.talks:
                if t.stream.role == "main" or not t.first:
                    continue
                if lo <= t.first <= hi:
                    assert t.at is not None
                    self.relate("in_segment", t.node, seg, m.STRONG_INFERENCE,
                                "inside the window of the talk that delegated it", t.at)

    def no_open_operation(self, lo: int, hi: int) -> bool:
        """Every tool use requested inside the window has one result, also inside it; and no
        child is announced or notified whose stream has not landed (session-wide)."""
        for t in self.tools:
            if t.use is None or not lo <= t.use.ts <= hi:
                continue
            if t.result is None or t.ambiguous or not lo <= t.result.ts <= hi:
                return False
        return not any(u["kind"] in ("child_stream", "notified_child") for u in self.unres.values())

    # ---- provider bodies -------------------------------------------------------------------

    def join_provider_bodies(self) -> None:
        """Join each provider body to its call, once, here, so no reader has to open every body.

        A response joins by the call its record names, and so does a request whose record names
        its call, when exactly one body of that role names it (upstream's lander writes a
        request's call in its manifest only, and that joins nothing). A request that names no
        call joins the call of its stream whose previous call's response carries the request id
        it names as the one before it, and whose prompt is the run it names, when exactly one
        request and one call carry those two ids. Nothing joins by position or time; a
        synthetic call joins nothing.
        """
        if not self.bodies:
            return
        calls = self.calls_in_line_order()
        named: dict[tuple[str, str], list[int]] = {}
        for i, b in enumerate(self.bodies):
            if b.call and b.body_role:
                named.setdefault((b.body_role, b.call), []).append(i)
        joined: set[int] = set()
        ambiguous: set[int] = set()
        request_of: dict[str, str] = {}
        response_of: dict[str, int] = {}
        request_for: dict[str, int] = {}
        for node, _stream, msg, _prompt in calls:
            for role, into in (("response", response_of), ("request", request_for)):
                hits = named.get((role, msg), [])
                if len(hits) == 1:
                    into[node] = hits[0]
                    joined.add(hits[0])
                    if role == "response":
                        request_of[node] = self.bodies[hits[0]].body_request
                elif hits:
                    ambiguous.update(hits)
        by_key: dict[tuple[str, str], list[int]] = {}
        for i, b in enumerate(self.bodies):
            if b.body_role == "request" and not b.call and b.run:
                by_key.setdefault((b.body_previous, b.run), []).append(i)
        gapped = {stream: self.stream_has_gap(stream) for _, stream, _, _ in calls}
        call_key: dict[str, tuple[str, str]] = {}
        calls_by_key: dict[tuple[str, str], int] = {}
        for i, (node, stream, _msg, prompt) in enumerate(calls):
            if node in request_for or gapped[stream] or not prompt:
                continue
            previous = ""
            if i > 0 and calls[i - 1][1] == stream:
                previous = request_of.get(calls[i - 1][0], "")
                if not previous:
                    continue
            call_key[node] = (previous, prompt)
            calls_by_key[(previous, prompt)] = calls_by_key.get((previous, prompt), 0) + 1
        for node, _stream, _msg, _prompt in calls:
            key = call_key.get(node)
            if key is None:
                continue
            hits = by_key.get(key, [])
            if len(hits) == 1 and calls_by_key[key] == 1 and hits[0] not in joined and hits[0] not in ambiguous:
                request_for[node] = hits[0]
                joined.add(hits[0])
            else:
                ambiguous.update(i for i in hits if i not in joined)
        for node, _stream, _msg, _prompt in calls:
            listed = [self._published(request_for[node], "request")] if node in request_for else []
            if node in response_of:
                listed.append(self._published(response_of[node], "response"))
            if listed:
                self.bodies_of_call[node] = listed

    def _published(self, i: int, role: str) -> Struct:
        b = self.bodies[i]
        return Struct(role=role, ref=Struct(seq=b.seq, row=b.row))

    def calls_in_line_order(self) -> list[tuple[str, str, str, str]]:
        """``(node, stream, call id, prompt)`` of every call that was sent, by stream then landed
        position; a call's prompt is the run its run's own first record names."""
        out = []
        for c in self.calls:
            if c.synthetic or not c.fragments:
                continue
            first = c.fragments[0]
            out.append(((c.stream.name, first.seq, first.row, c.node), (c.node, c.stream.name, c.call,
                                                                         self.prompt_of(first))))
        return [call for _, call in sorted(out)]

    def prompt_of(self, first: Entry) -> str:
        run = self.nodes.get(self.container_of(first))
        if run is None or run["kind"] != "run" or "ref" not in run:
            return ""
        at = self.by_position.get((run["ref"]["seq"], run["ref"]["row"]))
        return at.run if at is not None else ""

    def stream_has_gap(self, stream: str) -> bool:
        """Whether the stream's transcript lines this assembly covers skip one (a call may be
        missing between two that look consecutive); a line landed twice is no gap."""
        prev = 0
        for f in self.files:
            if f.kind in _SIDE_FILE_KINDS:
                continue
            for e in f.entries:
                if e.stream != stream:
                    continue
                if e.ord > prev + 1:
                    return True
                prev = max(prev, e.ord)
        return False

    # ---- the steps -------------------------------------------------------------------------

    def emit_steps(self) -> None:
        for c in self.calls:
            self.emit_call(c)
        for t in self.tools:
            if t.use is None:
                continue
            parent = node_id("call", t.use.call) if t.use.call else ""
            if parent not in self.nodes:
                parent = self.container_of(t.use)
            self.emit_tool(t, parent)
        self.emit_epoch_steps()
        self.emit_delegation_steps()
        self.emit_input_and_control_steps()
        for sp in self.spawns:
            child = self.by_stream.get(sp.stream)
            source = node_id("tool", sp.tool)
            if child is not None and sp.tool and source in self.nodes:
                self.relate("starts", source, child.node, sp.quality, sp.via, sp.ref)

    def emit_call(self, c: _Call) -> None:
        a: dict[str, Any] = {"fragments": len(c.fragments), "usage_from": "last_fragment_in_line_order"}
        last = c.fragments[-1]
        if c.finished:
            a["usage"] = m.OBSERVED_REPLAYABLE
            a["usage_at"] = {"seq": last.seq, "row": last.row}
        else:
            a["usage"] = m.UNAVAILABLE
            a["stop_reason"] = m.UNAVAILABLE
        if c.node in self.bodies_of_call:
            a["provider_bodies"] = self.bodies_of_call[c.node]
        refs = [f.ref for f in c.fragments]
        self.node(c.node, "llm.call", parent=self.container_of(c.fragments[0]), stream=c.stream.name,
                  ref=refs[0], refs=refs, attrs=a)
        kind = "message.synthetic" if c.synthetic else "message.assistant"
        for f in c.fragments:
            for b in f.blocks:
                if b.kind == ev.TEXT:
                    r: Ref = (f.seq, f.row, b.ord)
                    self.node(ref_id("msg", r), kind, parent=c.node, stream=c.stream.name, ref=r)
                    self.stats["steps"] += 1
                elif b.kind == ev.REASONING:
                    r = (f.seq, f.row, b.ord)
                    self.node(ref_id("think", r), "thinking", parent=c.node, stream=c.stream.name, ref=r)
                    self.stats["steps"] += 1

    def emit_tool(self, t: _Tool, parent: str) -> None:
        assert t.use is not None
        a: dict[str, Any] = {"name": t.name, "timing": m.UNAVAILABLE}
        if t.server:
            a["mcp_server"], a["mcp_tool"] = t.server, t.server_tool
        refs: list[Ref] = [(t.use.seq, t.use.row, t.use_ord)]
        if t.ambiguous:
            a["result"], quality = m.UNAVAILABLE, m.EXACT_AMBIGUOUS
        elif t.result is not None:
            refs.append((t.result.seq, t.result.row, t.result_ord))
            a["result"], quality = m.AVAILABLE, m.EXACT_UNIQUE
        else:
            a["result"], quality = m.UNAVAILABLE, m.UNRESOLVED
        a["result_join"] = quality
        manifest = self.manifest_for(t)
        if manifest is not None:
            refs.append(manifest.ref)
            if manifest.label:
                a["launched"] = manifest.label
        self.node(t.node, "agent.call" if t.starts_agent else "tool", parent=parent, stream=t.stream.name,
                  ref=refs[0], refs=refs, attrs=a)
        self.stats["steps"] += 1

    def manifest_for(self, t: _Tool) -> Entry | None:
        """The manifest of the batch a launch result names (the call names none)."""
        if t.result is None or not t.result.batch:
            return None
        return next((e for e in self.canonical if e.kind == ev.MANIFEST and e.batch == t.result.batch), None)

    def emit_epoch_steps(self) -> None:
        for e in self.canonical:
            epoch = self.epoch_at.get((e.seq, e.row)) or self.container_of(e)
            if e.flags & ev.CONTEXT_RESET:
                self.step(ref_id("boundary", e.ref), "epoch.boundary", e, epoch)
            elif e.flags & ev.RESET_SUMMARY:
                summary = ref_id("summary", e.ref)
                self.step(summary, "epoch.summary", e, epoch)
                boundary = self.by_record.get(e.parent) if e.parent else None
                if boundary is not None and boundary.flags & ev.CONTEXT_RESET:
                    self.relate("summarizes", summary, ref_id("boundary", boundary.ref), m.EXACT_UNIQUE,
                                "containment parent", e.ref)

    def emit_delegation_steps(self) -> None:
        for e in self.canonical:
            if e.flags & ev.LAUNCH_ACK:
                self.step(ref_id("ack", e.ref), "agent.launch_ack", e, self.container_of(e))
            elif e.trigger == "notification":
                notify = ref_id("notify", e.ref)
                self.step(notify, "runtime.notification", e, self.container_of(e))
                self.report_on(e, notify)
        returned: dict[str, Entry] = {}
        for e in self.canonical:
            if e.kind == ev.JOURNAL and e.flags & ev.CHILD_RESULT and e.child and e.child not in returned:
                returned[e.child] = e
        for s in self.streams:
            if s.role != "child":
                continue
            last = next((e for e in reversed(s.entries)
                         if e.kind == ev.ASSISTANT and not e.flags & ev.SYNTHETIC), None)
            result = returned.get(s.name)
            primary = last or result
            if primary is None:
                continue
            refs = [primary.ref] + ([result.ref] if last is not None and result is not None else [])
            output = node_id("output", s.name)
            self.node(output, "agent.output", parent=self.container_of(primary), stream=s.name, ref=refs[0],
                      refs=refs, attrs={"returned_value": m.OBSERVED_REPLAYABLE if result else m.UNAVAILABLE})
            self.stats["steps"] += 1
            self.relate("ends_with", s.node, output, m.EXACT_UNIQUE,
                        "the last response in the child stream, and what it returned", *refs)

    def report_on(self, e: Entry, notify: str) -> None:
        """A notification reports the child its task id names; else the child its call started."""
        if e.child:
            child = self.by_stream.get(e.child)
            if child is not None:
                self.relate("reports", notify, child.node, m.EXACT_UNIQUE, "task id on the notification", e.ref)
            else:
                self.open("notified_child", e.child, "a notification names a child whose stream has not landed")
            return
        if not e.tool:
            return
        for sp in self.spawns:
            child = self.by_stream.get(sp.stream)
            if sp.tool == e.tool and child is not None:
                self.relate("reports", notify, child.node, m.STRONG_INFERENCE,
                            "the call the notification completes", e.ref)

    def emit_input_and_control_steps(self) -> None:
        for e in self.canonical:
            if e.flags & ev.EXTERNAL_INPUT:
                self.step(ref_id("input", e.ref), "message.external", e, self.container_of(e))
            elif e.flags & ev.INJECTED:
                self.step(ref_id("inject", e.ref), "context.injection", e, self.container_of(e))
        for e in self.canonical:
            if e.flags & ev.ERROR:
                self.step(ref_id("error", e.ref), "error.api", e, self.container_of(e),
                          attrs={"retry_state": m.UNAVAILABLE})
            elif e.flags & ev.TURN_DURATION:
                self.step(ref_id("turn", e.ref), "turn.duration", e, self.container_of(e),
                          attrs={"measured_by": m.OBSERVED_REPLAYABLE})
            elif e.flags & ev.COMMAND:
                self.step(ref_id("command", e.ref), "control.command", e, self.container_of(e))
            elif e.flags & ev.NOTICE:
                self.step(ref_id("notice", e.ref), "control.notice", e, self.container_of(e))
