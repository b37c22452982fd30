"""Each planned event as the Session Data record the ``mock/1`` dialect lands for it.

``mock/1`` is the model's own vocabulary: the record upstream's Claude Code adapter lands for
the line a ``claude-code`` build writes (``spec/upstream/MAPPING-FACTS.md``), field by field,
so that ``records_match`` can hold the two formats to one another. What differs by construction
is provenance (``ord``, ``off``, ``sha``, ``bytes``: the mock has no source bytes, so a record's
digest is of the record itself) and the bytes of a data part (the mock's own JSON, not the
runtime's). The rules, per event:

* every record: ``id``, ``parent``, ``run``, ``time`` as planned;
* a person's input on the main stream: ``external``, trigger ``external``, flag
  ``external_input``; a child's prompt: ``external``, no flag;
* a queued input: ``runtime``, flag ``external_input`` when its mode is ``prompt``, else
  ``injected``; an injection: ``runtime``, ``injected`` (with ``system_prompt`` and
  ``tool_schemas`` for the snapshot types that carry them);
* a fragment: ``agent``, ``call``, ``model``, ``usage`` (zeros left out), ``finished`` on the
  last; a thinking block also lists its signature in ``dropped``;
* a data part (and a call's input) is a map, its keys sorted as upstream's encoder writes a map;
* a result: ``external``, its data what the runtime enriches it with (``stdout``/``stderr``, a
  launch's or a fork's acknowledgement; none on a replayed copy), its size the text's alone;
  an agent launch names its ``child`` and is a ``launch_ack``, a fork
  names its ``child``, a workflow launch names its ``batch`` and is a ``launch_ack``; an editing
  tool's change is one more ``data`` part, the ``changes/1`` record ``claude-code-local`` derives
  from the runtime's patch, byte for byte (:func:`.changes.runtime_record`);
* a notice: ``external``, trigger ``notification``, ``tool`` and ``child``;
* a client-made message: ``agent``, ``synthetic``, model ``<synthetic>``, empty usage;
* a reset: the boundary ``runtime``, ``context_reset``, ``continues``, its data the runtime's
  compact metadata; the summary
  ``external``, ``reset_summary``;
* a system record: ``runtime``, ``turn_duration``, ``command`` or ``notice`` by subtype;
* a child's sidecar, a journal line, a manifest, a script: ``runtime``, as the adapter lands them.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from asz_core.scenario.changes import runtime_record
from asz_core.scenario.model import EDITING_TOOLS
from asz_core.scenario.plan import MODEL, Event, Plan, RunPlan, StreamPlan, format_ms
from asz_core.sessiondata.model import FROM_AGENT, FROM_EXTERNAL, FROM_RUNTIME, Dropped, Part, Record, Usage
from asz_core.sessiondata.rawjson import RawJSON

__all__ = ["event_record", "finish", "journal_record", "manifest_record", "meta_record", "script_record"]

_SIGNATURE_WHY = "a provider verifies it; a reader cannot read it"
_SCRIPT_TEXT = "the source is a program, not data"
_SNAPSHOT_TYPES = ("prompt_snapshot", "deferred_tools_record")


def _data(value: Any) -> Part:
    # the mock's data is a map, and upstream's encoder writes a map's keys sorted
    return Part.data_part(RawJSON(orjson.dumps(value, option=orjson.OPT_SORT_KEYS)))


def _usage(u: tuple[int, int, int, int]) -> Usage:
    return Usage(u[0] or None, u[1] or None, u[2] or None, u[3] or None)


def event_record(p: Plan, e: Event) -> Record:
    # a workflow child's records name no batch of their own: upstream files the child under no run
    r = Record(id=e.id or None, parent=e.parent or None, run=e.run or None,
               time=None if e.at is None else format_ms(e.at))
    handler = _HANDLERS[e.kind]
    handler(p, e, r)
    return r


def _title(p: Plan, e: Event, r: Record) -> None:
    r.from_, r.label = FROM_RUNTIME, e.label
    r.parts = [_data({"type": "ai-title", "aiTitle": e.label})]


def _input(p: Plan, e: Event, r: Record) -> None:
    r.from_ = FROM_EXTERNAL
    if e.stream == "main":
        r.trigger, r.flags = "external", ["external_input"]
    r.parts = [Part.text_part(e.text)]


def _queued(p: Plan, e: Event, r: Record) -> None:
    r.from_ = FROM_RUNTIME
    r.flags = ["external_input"] if e.mode == "prompt" else ["injected"]
    r.parts = [Part.text_part(e.text)] if e.text else [_data({"type": "queued_command"})]


def _inject(p: Plan, e: Event, r: Record) -> None:
    r.from_, r.flags = FROM_RUNTIME, ["injected"]
    if e.type == "prompt_snapshot":
        r.flags.append("system_prompt")
        if e.tools:
            r.flags.append("tool_schemas")
    elif e.type == "deferred_tools_record" and e.tools:
        r.flags.append("tool_schemas")
    r.parts = [Part.text_part(e.text)] if e.text else [_data({"type": e.type})]


def _fragment(p: Plan, e: Event, r: Record) -> None:
    r.from_, r.call, r.model, r.usage = FROM_AGENT, e.call, MODEL, _usage(e.usage)
    if e.last:
        r.flags = ["finished"]
    if e.frag == "thinking":
        r.parts = [Part.reasoning(e.text) if e.text else Part.reasoning(None, state="unavailable")]
        r.dropped = [Dropped("reasoning signature", 3, _SIGNATURE_WHY)]
    elif e.frag == "tool_use":
        r.parts = [Part.call(e.tool_id, e.tool_name,
                             RawJSON(orjson.dumps(e.tool_input or {}, option=orjson.OPT_SORT_KEYS)))]
    else:
        r.parts = [Part.text_part(e.text)]


def _result(p: Plan, e: Event, r: Record) -> None:
    r.from_ = FROM_EXTERNAL
    # the mock's structured result, as upstream's writer gives it: what the runtime enriches the
    # result with (a command's output, a launch's acknowledgement); its size is the text's alone
    enrichment: Any = {"stdout": e.text or "", "stderr": ""}
    if not e.replayed:
        if e.ack is not None:
            r.child, r.flags = e.ack["child"], ["launch_ack"]
            enrichment = {"agentId": e.ack["child"], "isAsync": True, "status": "async_launched",
                          "prompt": e.ack["prompt"], "description": e.ack["label"]}
        elif e.fork:
            r.child = e.fork
            enrichment = {"agentId": e.fork, "status": "forked"}
        elif e.launch is not None:
            r.batch, r.flags = e.launch["run"], ["launch_ack"]
            enrichment = {"runId": e.launch["run"], "status": "async_launched",
                          "transcriptDir": f"subagents/workflows/{e.launch['run']}", "workflowName": e.launch["name"]}
        elif e.string_enrichment:
            enrichment = "a bare string, not an object"
    data = None if e.replayed else RawJSON(orjson.dumps(enrichment, option=orjson.OPT_SORT_KEYS))
    part = Part("result", text=e.text or None, data=data, of=e.of, failed=e.failed,
                bytes=len(e.text.encode("utf-8")) if e.text else 0)
    r.parts = [part]
    derived = runtime_record(p, e) if e.changes and e.tool_name in EDITING_TOOLS and not e.replayed else None
    if derived is not None:
        r.parts.append(Part("data", data=RawJSON(derived), bytes=len(derived)))


def _notice(p: Plan, e: Event, r: Record) -> None:
    r.from_, r.trigger, r.tool, r.child = FROM_EXTERNAL, "notification", e.of, e.notice_child
    r.parts = [Part.text_part(e.text)]


def _synthetic(p: Plan, e: Event, r: Record) -> None:
    r.from_, r.call, r.flags, r.model, r.usage = FROM_AGENT, e.call, ["synthetic"], "<synthetic>", Usage()
    r.parts = [Part.text_part(e.text)]


def _boundary(p: Plan, e: Event, r: Record) -> None:
    r.from_, r.flags, r.continues, r.parent = FROM_RUNTIME, ["context_reset"], e.continues or None, None
    r.parts = [_data({"type": "system", "subtype": "compact_boundary", "logicalParentUuid": e.continues,
                      "compactMetadata": {"trigger": "auto", "preservedMessages": {"allUuids": [e.continues]}}})]


def _summary(p: Plan, e: Event, r: Record) -> None:
    r.from_, r.flags = FROM_EXTERNAL, ["reset_summary"]
    r.parts = [Part.text_part(e.text)]


def _system(p: Plan, e: Event, r: Record) -> None:
    r.from_ = FROM_RUNTIME
    r.flags = [{"turn_duration": "turn_duration", "local_command": "command"}.get(e.type, "notice")]
    r.parts = [_data({"type": "system", "subtype": e.type, **e.fields})]


_HANDLERS = {"title": _title, "input": _input, "queued": _queued, "inject": _inject, "fragment": _fragment,
             "result": _result, "notice": _notice, "synthetic": _synthetic, "boundary": _boundary,
             "summary": _summary, "system": _system}


def meta_record(s: StreamPlan) -> Record:
    return Record(child=s.id, label=s.name, from_=FROM_RUNTIME,
                  parts=[_data({"agentType": "general-purpose", "description": s.name, "toolUseId": s.tool,
                                "spawnDepth": 1})])


def journal_record(run: RunPlan, kind: str, child: str) -> Record:
    data: dict[str, Any] = {"type": kind, "agentId": child, "key": f"v2:{child}"}
    flags: list[str] = []
    if kind == "result":
        data["result"] = {"done": True}
        flags = ["child_result"]
    return Record(child=child, batch=run.id, from_=FROM_RUNTIME, flags=flags, parts=[_data(data)])


def manifest_record(run: RunPlan) -> Record:
    return Record(batch=run.id, label=run.name, from_=FROM_RUNTIME,
                  parts=[_data({"runId": run.id, "taskId": f"task-{run.id}", "workflowName": run.name,
                                "status": "completed", "agentCount": len(run.children)})])


def script_record(run: RunPlan) -> Record:
    return Record(from_=FROM_RUNTIME, parts=[Part.unknown(run.script.encode("utf-8"), _SCRIPT_TEXT)])


def finish(record: Record, ord_: int, off: int) -> int:
    """Set a record's provenance: its ordinal, a running offset, and the digest and size of the
    record itself (the mock has no source bytes to name). Returns the next record's offset.

    The record's own bytes are taken with an empty digest and a size of 0 written in their
    places, as upstream's writer takes them (its record always writes both keys)."""
    record.ord, record.off, record.sha, record.bytes = ord_, off, "", 0
    own = orjson.dumps(record.to_json(), default=orjson.Fragment)  # a part's data as its bytes
    record.sha, record.bytes = hashlib.sha256(own).hexdigest()[:12], len(own)
    return off + len(own) + 1
