"""``executions_leave_the_fold``: an execution record is evidence beside a step, never a step.

Upstream builds a scenario that has execution records again without them and compares the two
folds. No scenario here writes one (the asz plugin's hook writes them, and neither build writes
the plugin's output), so the property makes the other side: a copy of the finished root with the
records that hook would have written for the plan's tool calls, landed after every file of the
root, so no record already landed moves. Then:

1. The records: one ``execution/1`` record for each tool call the plan wrote, as the hook writes
   it (its id the tool-use id and ``client_hook``, observed by ``asz-plugin``, an MCP server, the
   call's time, ``returned`` or ``failed`` by its result), the first one written a second time (a
   runtime handing the hook one event twice: still one call), and one naming a tool-use id no step
   carries. Each stream's records land in one ``execution`` file of that stream.
2. The fold: the copy parses, and its nodes (kind, parent, attributes), relations and open
   references are the root's: a record adds no node, no talk and no relation.
3. The document: ``tool_executions`` lists each record once, joined to the step that carries its
   tool-use id in the root's own document, the stray one with ``step`` empty; every step lists its
   records under ``executions``; the summary counts what the root's does.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import orjson

from asz_core.assembly.chain import Chain
from asz_core.assembly.flow import Fold, RoundError
from asz_core.root.storage import StorageRoot
from asz_core.scenario.plan import Event, Plan, format_ms
from asz_core.scenario.properties import Property, register
from asz_core.scenario.workspace import Workspace, read_landed, remove_tree
from asz_core.scenario.write_sd import land_records, mock_header
from asz_core.sessiondata.model import Part, Record
from asz_core.sessiondata.rawjson import RawJSON
from asz_core.view import build_view
from asz_core.view.walk import walk

__all__ = ["execution_records", "executions_leave_the_fold", "land_executions"]

SCHEMA = "execution/1"
STRAY_TOOL = "toolu_no_step_carries_this"  #: a tool-use id no planned step has
#: what a summary says of the fold, which records beside the steps must not change
_SUMMARY_KEYS = ("talks", "steps", "streams", "segments", "unresolved", "changes", "kinds", "relation_types",
                 "quality")


def _measure(value: Any) -> dict[str, Any]:
    """A value as the hook keeps it: the size and digest of its compact JSON, sorted keys."""
    raw = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    return {"bytes": len(raw), "sha256": hashlib.sha256(raw).hexdigest(), "state": "size_only"}


def _cwd(plan: Plan) -> str:
    """The working directory the session's transcript names (the Claude Code writer's rule)."""
    return "/Users/dev/" + plan.project.removeprefix("-Users-dev-")


def _record(plan: Plan, stream: str, tool: str, name: str, at: int | None, failed: bool,
            arguments: dict[str, Any], result: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "schema": SCHEMA, "id": f"{tool}/client_hook", "observed_by": "asz-plugin", "boundary": "client_hook",
        "session": plan.session, "stream": stream, "tool": tool, "tool_name": name, "cwd": _cwd(plan),
        "protocol": "mcp", "server": {"name": "scenario", "source": "user"},
        "time": format_ms(at or plan.at), "duration_ms": 100, "outcome": "failed" if failed else "returned",
        "arguments": _measure(arguments)}
    if not failed:
        out["result"] = _measure([{"type": "text", "text": result}])
    return out


def execution_records(plan: Plan) -> dict[str, list[dict[str, Any]]]:
    """Rule 1: stream → the records its hook would have written, in the order it wrote them."""
    results: dict[str, Event] = {e.of: e for e in plan.written() if e.kind == "result" and e.of}
    out: dict[str, list[dict[str, Any]]] = {}
    seen: set[str] = set()
    for e in plan.written():
        if e.kind != "fragment" or e.frag != "tool_use" or not e.tool_id or e.tool_id in seen:
            continue
        seen.add(e.tool_id)
        result = results.get(e.tool_id)
        out.setdefault(e.stream, []).append(_record(
            plan, e.stream, e.tool_id, e.tool_name, result.at if result else e.at,
            bool(result and result.failed), e.tool_input or {}, result.text if result else ""))
    main = out.setdefault("main", [])
    if main:
        main.insert(1, main[0])  # the same event handed to the hook twice
    main.append(_record(plan, "main", STRAY_TOOL, "mcp__scenario__stray", plan.at, False, {}, ""))
    return out


def land_executions(root: Path, plan: Plan, records: dict[str, list[dict[str, Any]]]) -> None:
    """Land each stream's records in one ``execution`` file of that stream, as an adapter lands."""
    clock_ns = (plan.at + plan.span_ms() + 60_000) * 1_000_000
    storage = StorageRoot(root, pass_started_ns=clock_ns)
    with storage.open_session(plan.session) as session:
        for stream, values in sorted(records.items()):
            src = f"{plan.project}/{plan.session}/{stream}/execution.jsonl"
            rows = [Record(id=value["id"], tool=value["tool"], time=value["time"],
                           parts=[Part.data_part(RawJSON(orjson.dumps(value)))]) for value in values]
            land_records(session, f"streams/{stream}", "execution", mock_header("execution", src, stream=stream),
                         rows, storage.at)


def _steps_by_tool_use(root: Path, session: str, doc: dict[str, Any]) -> dict[str, str]:
    """Tool-use id → the step of the root's document whose request carries it."""
    parts: dict[tuple[int, int, int | None], str] = {}
    for landed in read_landed(root, session):
        for row, (_, record) in enumerate(landed.records, start=1):
            for block, part in enumerate(record.parts):
                if part.k == "call" and part.id:
                    parts[(landed.seq, row, block)] = part.id
                    if len(record.parts) == 1:  # a ref with no block names the record's only part
                        parts[(landed.seq, row, None)] = part.id
    out: dict[str, str] = {}
    for node in walk(doc):
        ref = node.get("ref") or {}
        if node["kind"] in ("tool", "agent.call") and ref:
            tool = parts.get((ref["seq"], ref["row"], ref.get("block")))
            if tool:
                out[tool] = node["id"]
    return out


def _fold_differences(a: Fold, b: Fold) -> list[str]:
    out = [f"{id} ({n['kind']}) is only in the fold with the records" for id, n in b.nodes.items() if id not in a.nodes]
    out += [f"{id} ({n['kind']}) is only in the fold without them" for id, n in a.nodes.items() if id not in b.nodes]
    for id, n in a.nodes.items():
        m = b.nodes.get(id)
        if m is None:
            continue
        was, now = (n["kind"], n.get("parent"), n.get("attrs")), (m["kind"], m.get("parent"), m.get("attrs"))
        if was != now:
            out.append(f"{id} differs: without {was[1:]}, with {now[1:]}")
    if a.relations != b.relations:
        out.append(f"the relations differ: {sorted(a.relations.keys() ^ b.relations.keys())}")
    if {k: u["state"] for k, u in a.unresolved.items()} != {k: u["state"] for k, u in b.unresolved.items()}:
        out.append("the open and resolved references differ")
    return out


def _document_differences(root: Path, ws: Workspace, records: dict[str, list[dict[str, Any]]]) -> list[str]:
    plain, doc = build_view(ws.out, ws.session), build_view(root, ws.session)
    step_of = _steps_by_tool_use(ws.out, ws.session, plain)
    want: dict[str, str] = {}
    for values in records.values():
        for value in values:
            want[value["id"]] = step_of.get(value["tool"], "")
    got: dict[str, str] = {}
    out = []
    for entry in doc["tool_executions"]:
        if entry["id"] in got:
            out.append(f"{entry['id']} is listed twice")
        got[entry["id"]] = entry["step"]
    if got != want:
        out.append(f"tool_executions joins {got}; the steps that carry their tool-use ids are {want}")
    listed: dict[str, list[str]] = {n["id"]: n["executions"] for n in walk(doc) if n.get("executions")}
    joined: dict[str, list[str]] = {}
    for entry in doc["tool_executions"]:
        if entry["step"]:
            joined.setdefault(entry["step"], []).append(entry["id"])
    if listed != joined:
        out.append(f"steps list executions {listed}, the document joins {joined}")
    summary = {k: doc["summary"].get(k) for k in _SUMMARY_KEYS}
    if summary != (was := {k: plain["summary"].get(k) for k in _SUMMARY_KEYS}):
        out.append(f"the summary says {summary} with the records, {was} without")
    return out


def executions_leave_the_fold(ws: Workspace) -> list[str]:
    assert ws.plan is not None, "nothing built yet"
    twin = ws.copy("executions")
    try:
        records = execution_records(ws.plan)
        land_executions(twin, ws.plan, records)
        done = ws.parse(twin)
        if done.outcome:
            return [f"the root with execution records did not parse: {done.message}"]
        try:
            out = _fold_differences(Chain(ws.out, ws.session).fold(), Chain(twin, ws.session).fold())
        except RoundError as exc:
            return [f"the root with execution records does not fold: {exc}"]
        out += _document_differences(twin, ws, records)
        return out[:8]
    finally:
        remove_tree(twin)


register(Property("executions_leave_the_fold", executions_leave_the_fold))
