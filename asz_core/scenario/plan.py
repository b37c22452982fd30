"""A scenario resolved into timed records with stable ids: what every writer writes.

The rules, in the order the planner applies them:

1. The clock. The first record of a stream is at its base plus the step's own ``after``; every
   later step moves the stream's clock by its ``after``, else by the interval (the scenario's,
   else one second), each delta multiplied by ``--scale`` and cut to the millisecond.
2. The ids. A step's position names its records (``s3-input``, ``s3-call-f2``, ``s3-result``);
   a child's steps carry its name (``checker-s1-call-f1``); a run is ``<step>-cycle``; a tool
   without an id is ``<step>-tool``; a child stream's id is ``a`` and 16 hex digits drawn from
   its name, the shape Claude Code gives an agent id. So the same scenario plans the same ids
   in every format and on every run.
3. The parent chain. Each record names the record before it on its stream; a child's prompt
   opens its chain; a context reset's boundary names none and ``continues`` the last record.
4. Losses. A ``lost`` record is planned like any other (the clock, the ids and the parent chain
   move as if it were there) and no writer writes it.
5. ``--through NAME`` stops after the main-stream step that carries the checkpoint.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from asz_core.scenario.model import Call, FileChange, Scenario, ScenarioError, Step

__all__ = ["Event", "Plan", "RunPlan", "StreamPlan", "agent_id", "format_ms", "plan", "workflow_run_id"]

#: what every planned call ran on, in both formats
MODEL = "claude-opus-5"
#: the usage a call reports when the scenario gives none (each field separately)
_DEFAULT_USAGE = (2, 40, 900, 100)


@dataclass
class Event:
    """One record to write, in either format."""

    kind: str            #: input queued inject fragment result notice synthetic boundary summary system title
    stream: str          #: ``main`` or a child's agent id
    at: int | None       #: epoch milliseconds; ``None`` for the title, which carries no time
    id: str = ""
    batch: str = ""      #: the workflow run a child stream belongs to
    parent: str = ""
    run: str = ""
    call: str = ""
    req: str = ""
    text: str = ""
    lost: bool = False
    replayed: bool = False
    # a fragment
    frag: str = ""       #: thinking, text or tool_use
    last: bool = False
    stop: str = ""
    usage: tuple[int, int, int, int] = (0, 0, 0, 0)
    tool_id: str = ""
    tool_name: str = ""
    tool_input: dict[str, Any] | None = None
    # a result
    of: str = ""
    failed: bool | None = None
    string_enrichment: bool = False
    ack: dict[str, str] | None = None      #: child, prompt, label of an agent launch
    fork: str = ""                         #: the child a skill forked
    launch: dict[str, str] | None = None   #: run and name of a workflow launch
    changes: list[FileChange] = field(default_factory=list)  #: the files the tool changed
    # a notice
    notice_child: str = ""
    # queued, inject, system
    mode: str = ""
    type: str = ""
    fields: dict[str, Any] = field(default_factory=dict)
    system_prompt: str = ""
    tools: list[dict[str, Any]] = field(default_factory=list)
    # a boundary
    continues: str = ""
    # the title
    label: str = ""


@dataclass
class StreamPlan:
    id: str
    name: str
    prompt: str = ""
    tool: str = ""
    batch: str = ""
    lost: bool = False


@dataclass
class RunPlan:
    id: str
    name: str
    children: list[str] = field(default_factory=list)
    journal: list[tuple[str, str, int]] = field(default_factory=list)  #: (type, child, at)
    script: str = ""


@dataclass
class Plan:
    session: str
    project: str
    title: str
    at: int
    entrypoint: str
    provider_bodies: bool
    events: list[Event] = field(default_factory=list)
    streams: list[StreamPlan] = field(default_factory=list)
    runs: list[RunPlan] = field(default_factory=list)
    #: each stream's advertised system prompt and tools (``main`` and each child by id)
    prompts: dict[str, tuple[str, list[dict[str, Any]]]] = field(default_factory=dict)

    @property
    def cwd(self) -> str:
        """The working directory every record names: the project's slug read back as a path
        under ``/Users/dev``, and the workspace a change record's paths are relative to."""
        return "/Users/dev/" + self.project.removeprefix("-Users-dev-")

    def lost_streams(self) -> set[str]:
        return {s.id for s in self.streams if s.lost}

    def written(self) -> list[Event]:
        """The events a writer writes: no lost record, nothing of a lost stream."""
        gone = self.lost_streams()
        return [e for e in self.events if not e.lost and e.stream not in gone]

    def names(self) -> dict[str, str]:
        """Scenario name → stream id, for expectations that name a stream by its name."""
        out = {"main": "main"}
        for s in self.streams:
            out[s.name] = s.id
        return out

    def span_ms(self) -> int:
        """How far the last written record sits after the base time."""
        times = [e.at for e in self.written() if e.at is not None]
        return max(0, max(times, default=self.at) - self.at)


def format_ms(ms: int) -> str:
    """Epoch milliseconds as Claude Code writes a timestamp."""
    moment = datetime.fromtimestamp(ms // 1000, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{ms % 1000:03d}Z"


def agent_id(name: str) -> str:
    return "a" + hashlib.sha256(("agent:" + name).encode("utf-8")).hexdigest()[:16]


def workflow_run_id(name: str) -> str:
    """``wf_`` and the name, every character but ASCII letters, digits, ``_`` and ``-`` a hyphen,
    ``run-`` first when what is left does not start with a letter or digit."""
    rest = re.sub(r"[^A-Za-z0-9_-]", "-", name)
    if not re.match(r"[A-Za-z0-9]", rest):
        rest = "run-" + rest
    return "wf_" + rest


def _uuid_shape(digest: str) -> str:
    return f"{digest[0:8]}-{digest[8:12]}-4{digest[13:16]}-8{digest[17:20]}-{digest[20:32]}"


def derived_session(scenario: Scenario) -> str:
    """A session id drawn from the scenario's text, in the UUID shape discovery requires."""
    raw = scenario.path.read_bytes() if scenario.path.is_file() else repr(scenario.steps).encode()
    return _uuid_shape(hashlib.sha256(b"session:" + raw).hexdigest())


@dataclass
class _Lane:
    """One stream's clock and parent chain."""

    stream: str
    t: int
    batch: str = ""
    last: str = ""
    first: bool = True
    n: int = 0
    prefix: str = ""
    lost: bool = False


class _Planner:
    def __init__(self, p: Plan, interval_ms: float, scale: float) -> None:
        self.p = p
        self.interval = interval_ms
        self.scale = scale
        self.n = 0

    def scaled(self, ms: float) -> int:
        return int(ms * self.scale)

    def tick(self, lane: _Lane, after_ms: float) -> int:
        if lane.first:
            lane.first = False
        elif after_ms == 0:
            after_ms = self.interval
        lane.t += self.scaled(after_ms)
        return lane.t

    def emit(self, e: Event) -> Event:
        self.p.events.append(e)
        return e

    def run_of(self, lane: _Lane) -> str:
        for e in reversed(self.p.events):
            if e.stream == lane.stream and e.kind in ("input", "notice", "summary") and not e.replayed:
                return e.run
        return ""

    def steps(self, lane: _Lane, steps: list[Step]) -> None:
        for step in steps:
            lane.n += 1
            self.step(lane, step, f"{lane.prefix}-s{lane.n}")

    def step(self, lane: _Lane, s: Step, sid: str) -> None:
        lost = lane.lost or s.lost
        base: dict[str, Any] = {"stream": lane.stream, "batch": lane.batch, "lost": lost}
        if s.input is not None:
            e = self.emit(Event("input", at=self.tick(lane, s.after_ms), id=f"{sid}-input", run=f"{sid}-cycle",
                                text=s.input, parent="" if lane.stream == "main" else lane.last, **base))
            lane.last = e.id
        elif s.queued is not None:
            e = self.emit(Event("queued", at=self.tick(lane, s.after_ms), id=f"{sid}-queued", parent=lane.last,
                                text=s.queued["text"], mode=s.queued["mode"], **base))
            lane.last = e.id
        elif s.inject is not None:
            e = self.emit(Event("inject", at=self.tick(lane, s.after_ms), id=f"{sid}-inject", parent=lane.last,
                                type=s.inject["type"], text=s.inject["text"],
                                system_prompt=s.inject["system_prompt"], tools=s.inject["tools"], **base))
            lane.last = e.id
        elif s.call is not None:
            self.call(lane, s, s.call, sid)
        elif s.result is not None:
            r = s.result
            e = self.emit(Event("result", at=self.tick(lane, s.after_ms or r.after_ms), id=f"{sid}-result",
                                parent=lane.last, run=self.run_of(lane), of=r.of, text=r.text, failed=r.failed,
                                string_enrichment=r.string, **{**base, "lost": lost or r.lost}))
            lane.last = e.id
        elif s.error is not None:
            e = self.emit(Event("synthetic", at=self.tick(lane, s.after_ms), id=f"{sid}-synthetic",
                                parent=lane.last, call=self._id(f"{sid}-synthetic-call"), req=self._id(f"{sid}-req"),
                                text=s.error, **base))
            lane.last = e.id
        elif s.reset is not None:
            at = self.tick(lane, s.after_ms)
            boundary = self.emit(Event("boundary", at=at, id=f"{sid}-boundary", continues=lane.last, **base))
            # The runtime stamps the summary before the boundary that produced it: anything that
            # orders an epoch by time gets it backwards, and a scenario must reproduce that.
            summary = self.emit(Event("summary", at=at - 400, id=f"{sid}-summary", parent=boundary.id,
                                      run=f"{sid}-cycle-compact", text=s.reset.summary, **base))
            lane.last = summary.id
        elif s.replay:
            self.replay(s.replay)
        elif s.system is not None:
            e = self.emit(Event("system", at=self.tick(lane, s.after_ms), id=f"{sid}-sys-{s.system['subtype']}",
                                parent=lane.last, type=s.system["subtype"], fields=s.system["fields"], **base))
            lane.last = e.id

    def _id(self, local: str) -> str:
        """A message or request id; with provider bodies it carries the start of the session id,
        since every session writes its bodies into one directory."""
        return f"{self.p.session[:8]}-{local}" if self.p.provider_bodies else local

    def call(self, lane: _Lane, s: Step, c: Call, sid: str) -> None:
        lost = lane.lost or s.lost
        at = self.tick(lane, s.after_ms)
        u = c.usage
        given = (0, 0, 0, 0) if u is None else (u.in_, u.out, u.cache_read, u.cache_write)
        usage = (given[0] or _DEFAULT_USAGE[0], given[1] or _DEFAULT_USAGE[1], given[2] or _DEFAULT_USAGE[2],
                 given[3] or _DEFAULT_USAGE[3])
        tool: tuple[str, str, dict[str, Any]] | None = None
        if c.tool is not None:
            tool = (c.tool.id or f"{sid}-tool", c.tool.name, c.tool.input or {})
        elif c.agent is not None:
            tool = (f"{sid}-tool", "Agent", {"description": c.agent.name, "prompt": c.agent.prompt})
        elif c.skill is not None:
            tool = (f"{sid}-tool", "Skill", {"skill": c.skill.name})
        elif c.workflow is not None:
            tool = (f"{sid}-tool", "Workflow", {"script": "export const meta = {}"})
        frags: list[tuple[str, str]] = []
        if c.thinking:
            frags.append(("thinking", "" if c.thinking == "unavailable" else c.thinking))
        if c.text:
            frags.append(("text", c.text))
        if tool is not None:
            frags.append(("tool_use", ""))
        call_id, req = self._id(f"{sid}-call"), self._id(f"{sid}-req")
        for i, (frag, text) in enumerate(frags):
            e = Event("fragment", stream=lane.stream, batch=lane.batch, at=at + self.scaled(i * 100.0),
                      id=f"{sid}-call-f{i + 1}", parent=lane.last, call=call_id, req=req, usage=usage,
                      lost=lost, frag=frag, text=text, last=i == len(frags) - 1,
                      stop="tool_use" if tool is not None else "end_turn")
            if frag == "tool_use" and tool is not None:
                e.tool_id, e.tool_name, e.tool_input = tool
            self.emit(e)
            lane.last, lane.t = e.id, e.at or lane.t
        run = self.run_of(lane)
        base: dict[str, Any] = {"stream": lane.stream, "batch": lane.batch}
        if c.tool is not None and c.tool.result is not None and tool is not None:
            r = c.tool.result
            e = self.emit(Event("result", at=self.tick(lane, r.after_ms), id=f"{sid}-result", parent=lane.last,
                                run=run, of=tool[0], text=r.text, failed=r.failed, string_enrichment=r.string,
                                lost=lost or r.lost, tool_name=tool[1], changes=c.tool.changes, **base))
            lane.last = e.id
        elif c.agent is not None and tool is not None:
            a = c.agent
            child = agent_id(a.name)
            ack = self.emit(Event("result", at=self.tick(lane, 100), id=f"{sid}-ack", parent=lane.last, run=run,
                                  of=tool[0], text="launched", lost=lost,
                                  ack={"child": child, "prompt": a.prompt, "label": a.name}, **base))
            lane.last = ack.id
            self.p.streams.append(StreamPlan(child, a.name, a.prompt, tool[0], lost=a.lost))
            self.p.prompts[child] = (a.system_prompt, a.tools)
            kid = _Lane(child, (ack.at or 0) + self.scaled(a.after_ms or self.interval), prefix=a.name, lost=a.lost)
            if a.prompt:
                kid.first = False
                prompt = self.emit(Event("input", stream=child, at=kid.t, id=f"{child}-prompt", run=f"{child}-cycle",
                                         text=a.prompt, lost=a.lost))
                kid.last = prompt.id
            self.steps(kid, a.steps)
            if a.notify:
                lane.t = max(lane.t, kid.t)
                notice = self.emit(Event(
                    "notice", at=self.tick(lane, 0), id=f"{sid}-notice", parent=lane.last,
                    run=f"{sid}-cycle-notification", of=tool[0], notice_child=child, lost=lost,
                    text=(f"<task-notification>\n<task-id>{child}</task-id>\n<tool-use-id>{tool[0]}"
                          f"</tool-use-id>\n<status>completed</status>\n</task-notification>"), **base))
                lane.last = notice.id
        elif c.skill is not None and tool is not None:
            sk = c.skill
            child = agent_id(sk.agent)
            res = self.emit(Event("result", at=self.tick(lane, 0), id=f"{sid}-result", parent=lane.last, run=run,
                                  of=tool[0], text="forked", fork=child, lost=lost, **base))
            lane.last = res.id
            self.p.streams.append(StreamPlan(child, sk.agent, tool=tool[0], lost=sk.lost))
            kid = _Lane(child, (res.at or 0) + self.scaled(self.interval), first=False, prefix=sk.agent, lost=sk.lost)
            prompt = self.emit(Event("input", stream=child, at=kid.t, id=f"{child}-prompt", run=f"{child}-cycle",
                                     text=f"run the skill {sk.name}", lost=sk.lost))
            kid.last = prompt.id
            self.steps(kid, sk.steps)
        elif c.workflow is not None and tool is not None:
            w = c.workflow
            run_id = workflow_run_id(w.name)
            if any(r.id.lower() == run_id.lower() for r in self.p.runs):
                raise ScenarioError(f"workflow {w.name!r}: another workflow has the run id {run_id}")
            res = self.emit(Event("result", at=self.tick(lane, 0), id=f"{sid}-result", parent=lane.last, run=run,
                                  of=tool[0], text="workflow launched", launch={"run": run_id, "name": w.name},
                                  lost=lost, **base))
            lane.last = res.id
            rp = RunPlan(run_id, w.name, script=f"export const meta = {{\n  name: {json.dumps(w.name)},\n}}")
            t = res.at or 0
            ends: list[int] = []
            for ch in w.children:
                child = agent_id(w.name + "/" + ch.name)
                rp.children.append(child)
                self.p.streams.append(StreamPlan(child, ch.name, ch.prompt, batch=run_id, lost=ch.lost))
                # each child starts a moment after the one before, and they run at once
                t += self.scaled(self.interval)
                rp.journal.append(("started", child, t))
                kid = _Lane(child, t, batch=run_id, first=False, prefix=ch.name, lost=ch.lost)
                prompt = self.emit(Event("input", stream=child, batch=run_id, at=t, id=f"{child}-prompt",
                                         run=f"{child}-cycle", text=ch.prompt or f"do {ch.name}", lost=ch.lost))
                kid.last = prompt.id
                self.steps(kid, ch.steps)
                rp.journal.append(("result", child, kid.t + self.scaled(100)))
                ends.append(kid.t)
            self.p.runs.append(rp)
            lane.t = max([lane.t, *ends])

    def replay(self, n: int) -> None:
        """The last ``n`` main-stream records again, their run rewritten, as the runtime
        re-emits them before a reset; copied from memory, so a lost original is copied too."""
        picked = [e for e in self.p.events if e.stream == "main" and e.kind != "title"][-n:]
        for e in picked:
            copy = Event(**{**e.__dict__, "replayed": True, "lost": False})
            if copy.run:
                copy.run = "replayed-cycle"
            self.emit(copy)


def plan(scenario: Scenario, *, at_ms: int, scale: float = 1.0, interval_ms: float = 0.0,
         through: str = "", session: str = "") -> Plan:
    """Resolve a scenario; ``through`` stops after the step carrying that checkpoint."""
    p = Plan(session=session or scenario.session or derived_session(scenario),
             project=scenario.project or "-Users-dev-scenario", title=scenario.title, at=at_ms,
             entrypoint=scenario.entrypoint or "cli", provider_bodies=scenario.provider_bodies)
    p.prompts["main"] = (scenario.system_prompt, scenario.tools)
    planner = _Planner(p, interval_ms or scenario.interval_ms or 1000.0, scale or 1.0)
    if scenario.title:
        # first, so every checkpoint has it; it carries no time, as the runtime writes it
        p.events.append(Event("title", stream="main", at=None, label=scenario.title))
    main = _Lane("main", at_ms)
    for step in scenario.steps:
        planner.n += 1
        planner.step(main, step, f"s{planner.n}")
        if through and step.checkpoint == through:
            return p
    if through:
        raise ScenarioError(f"{scenario.path}: no checkpoint named {through!r}")
    return p
