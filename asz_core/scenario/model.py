"""A scenario file: a conversation described in the model's own words, read and checked.

A scenario is YAML (upstream's ``guides/scenario.md``, "The scenario"). Reading it follows four
rules, in this order:

1. The file is one YAML mapping; every key it uses is one the format names. An unknown key is
   refused with its place (``steps[3].call.tool: unknown key "reslt"``), never ignored: a typo
   would otherwise check nothing and pass.
2. Every step is exactly one of ``input``, ``queued``, ``inject``, ``call``, ``result``,
   ``error``, ``reset``, ``replay``, ``system``, plus an optional ``after``, ``checkpoint`` and
   ``lost``. A call has thinking, text or a request, and at most one request (``tool``,
   ``agent``, ``skill``, ``workflow``).
3. Durations are Go's spelling (``100ms``, ``1.5s``, ``2m``, ``1h``); checkpoint names are unique.
4. ``system_prompt`` and ``tools`` come together or not at all, per stream; a stream that
   advertises tools advertises every tool it calls (starting a child counts, as ``Agent``,
   ``Skill`` or ``Workflow``).

Every problem is a :class:`ScenarioError` naming the file and the place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "Agent",
    "Call",
    "Child",
    "EDITING_TOOLS",
    "FileChange",
    "Reset",
    "ResultSpec",
    "Scenario",
    "ScenarioError",
    "Skill",
    "Step",
    "ToolSpec",
    "Usage",
    "Workflow",
    "load_scenario",
    "parse_duration",
]


class ScenarioError(ValueError):
    """A scenario or expectation file that cannot be used; the message says where and why."""


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h|d)")
_UNIT_MS = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0,
            "d": 86_400_000.0}  # whole days, as metrics.lookback counts them


def parse_duration(value: Any, where: str) -> float:
    """A duration in milliseconds, from Go's spelling (``1m30s``, ``800ms``, and ``7d``) or a number of seconds."""
    if isinstance(value, bool):
        raise ScenarioError(f"{where}: {value!r} is not a duration such as 800ms or 1s")
    if isinstance(value, (int, float)):
        return float(value) * 1000.0
    if not isinstance(value, str) or not value:
        raise ScenarioError(f"{where}: {value!r} is not a duration such as 800ms or 1s")
    text, total, pos = value.strip(), 0.0, 0
    negative = text.startswith("-")
    text = text.lstrip("+-")
    while pos < len(text):
        match = _DURATION.match(text, pos)
        if match is None:
            raise ScenarioError(f"{where}: {value!r} is not a duration such as 800ms or 1s")
        total += float(match.group(1)) * _UNIT_MS[match.group(2)]
        pos = match.end()
    return -total if negative else total


@dataclass
class Usage:
    in_: int = 0
    out: int = 0
    cache_read: int = 0
    cache_write: int = 0


@dataclass
class ResultSpec:
    text: str = ""
    after_ms: float = 0.0
    failed: bool | None = None
    string: bool = False   #: the runtime's enrichment is a bare string, not an object
    lost: bool = False
    of: str = ""           #: only on a ``result`` step: the tool it answers


@dataclass
class FileChange:
    """One file a tool changed: its path under the workspace, its text before and after
    (``None``: the file was absent on that side)."""

    path: str
    before: str | None
    after: str | None


@dataclass
class ToolSpec:
    name: str
    id: str = ""
    input: dict[str, Any] | None = None
    result: ResultSpec | None = None
    changes: list[FileChange] = field(default_factory=list)


@dataclass
class Agent:
    name: str
    prompt: str = ""
    after_ms: float = 0.0
    steps: list[Step] = field(default_factory=list)
    notify: bool = False
    lost: bool = False
    system_prompt: str = ""
    tools: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Skill:
    name: str
    agent: str
    steps: list[Step] = field(default_factory=list)
    lost: bool = False


@dataclass
class Child:
    name: str
    prompt: str = ""
    steps: list[Step] = field(default_factory=list)
    lost: bool = False


@dataclass
class Workflow:
    name: str
    children: list[Child] = field(default_factory=list)


@dataclass
class Call:
    thinking: str = ""
    text: str = ""
    tool: ToolSpec | None = None
    agent: Agent | None = None
    skill: Skill | None = None
    workflow: Workflow | None = None
    usage: Usage | None = None


@dataclass
class Reset:
    summary: str


@dataclass
class Step:
    """One step: exactly one of the kinds below is set."""

    input: str | None = None
    queued: dict[str, str] | None = None
    inject: dict[str, Any] | None = None
    call: Call | None = None
    result: ResultSpec | None = None
    error: str | None = None
    reset: Reset | None = None
    replay: int = 0
    system: dict[str, Any] | None = None
    after_ms: float = 0.0
    checkpoint: str = ""
    lost: bool = False


@dataclass
class Scenario:
    path: Path
    name: str                       #: the file name without ``.yaml``
    steps: list[Step]
    session: str = ""
    project: str = ""
    title: str = ""
    interval_ms: float = 0.0
    entrypoint: str = ""
    provider_bodies: bool = False
    system_prompt: str = ""
    tools: list[dict[str, Any]] = field(default_factory=list)

    def checkpoints(self) -> list[str]:
        """The checkpoint names of the main stream's steps, in order."""
        return [s.checkpoint for s in self.steps if s.checkpoint]


#: the tools whose own patch the runtime records on their result (the plugin observes the others)
EDITING_TOOLS = frozenset(("Edit", "Write", "NotebookEdit"))
_STEP_KINDS = ("input", "queued", "inject", "call", "result", "error", "reset", "replay", "system")
_STEP_KEYS = frozenset((*_STEP_KINDS, "after", "checkpoint", "lost"))
_TOP_KEYS = frozenset(("session", "project", "title", "interval", "entrypoint", "provider_bodies",
                       "system_prompt", "tools", "steps"))


class _Reader:
    """Reads one file's mapping into the model, naming the place of every problem."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.checkpoints: set[str] = set()

    def fail(self, where: str, message: str) -> ScenarioError:
        return ScenarioError(f"{self.path}: {where}: {message}")

    def mapping(self, value: Any, where: str, allowed: frozenset[str]) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, f"expected a mapping, got {type(value).__name__}")
        for key in value:
            if key not in allowed:
                raise self.fail(where, f"unknown key {key!r}; the keys are {', '.join(sorted(allowed))}")
        return value

    def text(self, value: Any, where: str) -> str:
        if value is None:
            return ""
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise self.fail(where, f"expected text, got {type(value).__name__}")
        return str(value)

    def changes(self, value: Any, tool: str, where: str) -> list[FileChange]:
        """A tool's ``changes``: what neither the plugin nor the runtime could have written is
        refused: a path that is not relative to the workspace, a file absent on both sides, more
        than one change on an editing tool (the runtime records one patch per result), an
        ``Edit`` that does not change an existing file (``Write`` creates one)."""
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(where, "expected a list of {path, before, after}")
        out = []
        for i, item in enumerate(value):
            at = f"{where}[{i}]"
            ch = self.mapping(item, at, frozenset(("path", "before", "after")))
            path = self.text(ch.get("path"), f"{at}.path")
            if not path or path.startswith("/"):
                raise self.fail(f"{at}.path", "a change needs a path relative to the workspace")
            before = None if ch.get("before") is None else self.text(ch["before"], f"{at}.before")
            after = None if ch.get("after") is None else self.text(ch["after"], f"{at}.after")
            if before is None and after is None:
                raise self.fail(at, f"change {path} has neither a before nor an after")
            out.append(FileChange(path, before, after))
        if len(out) > 1 and tool in EDITING_TOOLS:
            raise self.fail(where, f"{tool} changes one file; the runtime records one patch per result: "
                                   f"give each change a call of its own")
        if out and tool == "Edit" and (out[0].before is None or out[0].after is None):
            raise self.fail(f"{where}[0]", "Edit changes an existing file, before and after; use Write to "
                                           "create or empty one")
        return out

    def flag(self, value: Any, where: str) -> bool:
        if value is None:
            return False
        if not isinstance(value, bool):
            raise self.fail(where, f"expected true or false, got {value!r}")
        return value

    def duration(self, value: Any, where: str) -> float:
        if value is None:
            return 0.0
        try:
            return parse_duration(value, where)
        except ScenarioError as exc:
            raise ScenarioError(f"{self.path}: {exc}") from None

    def tools(self, value: Any, where: str) -> list[dict[str, Any]]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(where, "expected a list of tools")
        out = []
        for i, tool in enumerate(value):
            tool = self.mapping(tool, f"{where}[{i}]", frozenset(("name", "description", "input_schema")))
            if not isinstance(tool.get("name"), str) or not tool["name"]:
                raise self.fail(f"{where}[{i}]", "a tool needs a name")
            out.append(dict(tool))
        return out

    def steps(self, value: Any, where: str) -> list[Step]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(where, "expected a list of steps")
        return [self.step(s, f"{where}[{i}]") for i, s in enumerate(value)]

    def step(self, value: Any, where: str) -> Step:
        raw = self.mapping(value, where, _STEP_KEYS)
        kinds = [k for k in _STEP_KINDS if k in raw]
        if len(kinds) != 1:
            raise self.fail(where, f"a step is exactly one of {', '.join(_STEP_KINDS)}; this one has "
                                   f"{', '.join(kinds) or 'none'}")
        step = Step(after_ms=self.duration(raw.get("after"), f"{where}.after"),
                    checkpoint=self.text(raw.get("checkpoint"), f"{where}.checkpoint"),
                    lost=self.flag(raw.get("lost"), f"{where}.lost"))
        if step.checkpoint:
            if step.checkpoint in self.checkpoints or step.checkpoint == "final":
                raise self.fail(f"{where}.checkpoint", f"checkpoint {step.checkpoint!r} is named twice")
            self.checkpoints.add(step.checkpoint)
        kind = kinds[0]
        body = raw[kind]
        here = f"{where}.{kind}"
        if kind == "input":
            step.input = self.text(body, here)
            if not step.input:
                raise self.fail(here, "an input needs text")
        elif kind == "queued":
            q = self.mapping(body, here, frozenset(("text", "mode")))
            step.queued = {"text": self.text(q.get("text"), f"{here}.text"),
                           "mode": self.text(q.get("mode"), f"{here}.mode") or "prompt"}
        elif kind == "inject":
            inj = self.mapping(body, here, frozenset(("type", "text", "system_prompt", "tools")))
            step.inject = {"type": self.text(inj.get("type"), f"{here}.type"),
                           "text": self.text(inj.get("text"), f"{here}.text"),
                           "system_prompt": self.text(inj.get("system_prompt"), f"{here}.system_prompt"),
                           "tools": self.tools(inj.get("tools"), f"{here}.tools")}
            if not step.inject["type"]:
                raise self.fail(here, "an injection needs a type")
        elif kind == "call":
            step.call = self.call(body, here)
        elif kind == "result":
            step.result = self.result(body, here, standalone=True)
        elif kind == "error":
            step.error = self.text(body, here)
        elif kind == "reset":
            r = self.mapping(body, here, frozenset(("summary",)))
            step.reset = Reset(self.text(r.get("summary"), f"{here}.summary"))
        elif kind == "replay":
            if isinstance(body, bool) or not isinstance(body, int) or body < 1:
                raise self.fail(here, "replay is a number of records, at least 1")
            step.replay = body
        elif kind == "system":
            sysm = self.mapping(body, here, frozenset(("subtype", "fields")))
            fields = sysm.get("fields") or {}
            if not isinstance(fields, dict):
                raise self.fail(f"{here}.fields", "expected a mapping")
            step.system = {"subtype": self.text(sysm.get("subtype"), f"{here}.subtype"), "fields": dict(fields)}
        return step

    def result(self, value: Any, where: str, *, standalone: bool = False) -> ResultSpec:
        if not isinstance(value, dict):
            return ResultSpec(text=self.text(value, where))
        keys = {"text", "after", "failed", "string", "lost"} | ({"of"} if standalone else set())
        r = self.mapping(value, where, frozenset(keys))
        failed = r.get("failed")
        if failed is not None and not isinstance(failed, bool):
            raise self.fail(f"{where}.failed", "expected true or false")
        spec = ResultSpec(text=self.text(r.get("text"), f"{where}.text"),
                          after_ms=self.duration(r.get("after"), f"{where}.after"), failed=failed,
                          string=self.flag(r.get("string"), f"{where}.string"),
                          lost=self.flag(r.get("lost"), f"{where}.lost"),
                          of=self.text(r.get("of"), f"{where}.of"))
        if standalone and not spec.of:
            raise self.fail(where, "a result step names the tool it answers with of")
        return spec

    def call(self, value: Any, where: str) -> Call:
        c = self.mapping(value, where, frozenset(("thinking", "text", "tool", "agent", "skill", "workflow", "usage")))
        requests = [k for k in ("tool", "agent", "skill", "workflow") if c.get(k) is not None]
        if len(requests) > 1:
            raise self.fail(where, f"a call makes one request; this one has {', '.join(requests)}")
        call = Call(thinking=self.text(c.get("thinking"), f"{where}.thinking"),
                    text=self.text(c.get("text"), f"{where}.text"))
        if not (call.thinking or call.text or requests):
            raise self.fail(where, "a call has thinking, text, or a request")
        if c.get("usage") is not None:
            u = self.mapping(c["usage"], f"{where}.usage", frozenset(("in", "out", "cache_read", "cache_write")))
            for key, number in u.items():
                if isinstance(number, bool) or not isinstance(number, int) or number < 0:
                    raise self.fail(f"{where}.usage.{key}", "expected a whole number of tokens")
            call.usage = Usage(u.get("in", 0), u.get("out", 0), u.get("cache_read", 0), u.get("cache_write", 0))
        if c.get("tool") is not None:
            t = self.mapping(c["tool"], f"{where}.tool", frozenset(("id", "name", "input", "result", "changes")))
            name = self.text(t.get("name"), f"{where}.tool.name")
            if not name:
                raise self.fail(f"{where}.tool", "a tool needs a name")
            tool_input = t.get("input")
            if tool_input is not None and not isinstance(tool_input, dict):
                raise self.fail(f"{where}.tool.input", "expected a mapping")
            result = None if t.get("result") is None else self.result(t["result"], f"{where}.tool.result")
            call.tool = ToolSpec(name=name, id=self.text(t.get("id"), f"{where}.tool.id"), input=tool_input,
                                 result=result, changes=self.changes(t.get("changes"), name, f"{where}.tool.changes"))
        if c.get("agent") is not None:
            a = self.mapping(c["agent"], f"{where}.agent", frozenset(
                ("name", "prompt", "after", "steps", "notify", "lost", "system_prompt", "tools")))
            call.agent = Agent(name=self.name(a.get("name"), f"{where}.agent.name"),
                               prompt=self.text(a.get("prompt"), f"{where}.agent.prompt"),
                               after_ms=self.duration(a.get("after"), f"{where}.agent.after"),
                               steps=self.steps(a.get("steps"), f"{where}.agent.steps"),
                               notify=self.flag(a.get("notify"), f"{where}.agent.notify"),
                               lost=self.flag(a.get("lost"), f"{where}.agent.lost"),
                               system_prompt=self.text(a.get("system_prompt"), f"{where}.agent.system_prompt"),
                               tools=self.tools(a.get("tools"), f"{where}.agent.tools"))
        if c.get("skill") is not None:
            s = self.mapping(c["skill"], f"{where}.skill", frozenset(("name", "agent", "steps", "lost")))
            call.skill = Skill(name=self.name(s.get("name"), f"{where}.skill.name"),
                               agent=self.name(s.get("agent"), f"{where}.skill.agent"),
                               steps=self.steps(s.get("steps"), f"{where}.skill.steps"),
                               lost=self.flag(s.get("lost"), f"{where}.skill.lost"))
        if c.get("workflow") is not None:
            w = self.mapping(c["workflow"], f"{where}.workflow", frozenset(("name", "children")))
            kids = w.get("children") or []
            if not isinstance(kids, list):
                raise self.fail(f"{where}.workflow.children", "expected a list")
            children = []
            for i, kid in enumerate(kids):
                here = f"{where}.workflow.children[{i}]"
                k = self.mapping(kid, here, frozenset(("name", "prompt", "steps", "lost")))
                children.append(Child(name=self.name(k.get("name"), f"{here}.name"),
                                      prompt=self.text(k.get("prompt"), f"{here}.prompt"),
                                      steps=self.steps(k.get("steps"), f"{here}.steps"),
                                      lost=self.flag(k.get("lost"), f"{here}.lost")))
            call.workflow = Workflow(name=self.name(w.get("name"), f"{where}.workflow.name"), children=children)
        return call

    def name(self, value: Any, where: str) -> str:
        text = self.text(value, where)
        if not text:
            raise self.fail(where, "a name is required")
        return text


def _advertised_tools(reader: _Reader, where: str, system_prompt: str, tools: list[dict[str, Any]],
                      steps: list[Step]) -> None:
    """Rule 4: a stream's prompt and tools come together, and name every tool it calls."""
    if bool(system_prompt) != bool(tools):
        raise reader.fail(where, "system_prompt and tools come together or not at all")
    if not tools:
        return
    names = {t["name"] for t in tools}
    for i, step in enumerate(steps):
        call = step.call
        if call is None:
            continue
        used = (call.tool.name if call.tool else "Agent" if call.agent else "Skill" if call.skill
                else "Workflow" if call.workflow else None)
        if used is not None and used not in names:
            raise reader.fail(f"{where}.steps[{i}]", f"the stream calls {used} but its tools do not advertise it")


def load_scenario(path: Path | str) -> Scenario:
    """Read and check one scenario file."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text("utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ScenarioError(f"{path}: cannot be read as YAML: {exc}") from None
    reader = _Reader(path)
    top = reader.mapping(raw, "the file", _TOP_KEYS)
    steps = reader.steps(top.get("steps"), "steps")
    if not steps:
        raise reader.fail("steps", "a scenario has at least one step")
    scenario = Scenario(
        path=path, name=path.name.removesuffix(".yaml").removesuffix(".yml"), steps=steps,
        session=reader.text(top.get("session"), "session"), project=reader.text(top.get("project"), "project"),
        title=reader.text(top.get("title"), "title"),
        interval_ms=reader.duration(top.get("interval"), "interval"),
        entrypoint=reader.text(top.get("entrypoint"), "entrypoint"),
        provider_bodies=reader.flag(top.get("provider_bodies"), "provider_bodies"),
        system_prompt=reader.text(top.get("system_prompt"), "system_prompt"),
        tools=reader.tools(top.get("tools"), "tools"))
    _advertised_tools(reader, "the file", scenario.system_prompt, scenario.tools, steps)
    for i, step in enumerate(steps):
        if step.call and step.call.agent:
            a = step.call.agent
            _advertised_tools(reader, f"steps[{i}].call.agent", a.system_prompt, a.tools, a.steps)
    if scenario.session and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}", scenario.session):
        raise reader.fail("session", f"{scenario.session!r} cannot name a directory")
    if scenario.project and not re.fullmatch(r"-[A-Za-z0-9._-]{1,200}", scenario.project):
        raise reader.fail("project", f"{scenario.project!r} is not a project directory's name (-Users-…)")
    return scenario
