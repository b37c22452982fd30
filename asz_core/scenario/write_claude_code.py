"""A plan written as the files a Claude Code session leaves on disk, under ``DIR/_source``.

What is written, in this order:

1. The transcripts: ``<project>/<session>.jsonl`` for the main stream, ``<session>/subagents/
   agent-<id>.jsonl`` for a child and ``<session>/subagents/workflows/<run>/agent-<id>.jsonl``
   for a workflow's child, one line per written event, in Claude Code's field order and
   envelope (``parentUuid``, ``isSidechain``, ``userType``, ``cwd``, ``sessionId``,
   ``version``, ``gitBranch``, ``uuid``, ``timestamp``, ``promptId``, ``requestId``, …).
2. A child's sidecar, ``agent-<id>.meta.json``; a workflow's journal, manifest and script.
3. The noise a real project directory holds beside a session: a ``.jsonl`` whose name is not a
   session id and a ``memory/`` directory. Discovery must pass over both.
4. With ``provider_bodies``, every body under ``provider-bodies/``, its modification time the
   moment it was written.
5. For a tool that changes files, the asz Claude Code plugin's change records, one file per
   stream, under ``plugins/data/`` (:mod:`.changes`).

Every file is written whole from the plan, so a build through a later checkpoint extends what
an earlier one wrote (a live session's files only grow), and the same plan and ``--at`` write
the same bytes. A lost record leaves no line; a lost stream leaves no file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from asz_core.root.durable import OWNER_FILE, make_dirs
from asz_core.scenario.bodies import provider_bodies
from asz_core.scenario.changes import PLUGIN_DATA, plugin_files, runtime_result
from asz_core.scenario.jsonline import js_line
from asz_core.scenario.model import EDITING_TOOLS
from asz_core.scenario.plan import MODEL, Event, Plan, format_ms

__all__ = ["BODIES_DIR", "NOISE", "write_claude_code"]

#: where under the source the bodies go: the directory ``OTEL_LOG_RAW_API_BODIES`` would name
BODIES_DIR = "provider-bodies"
#: the noise, relative to the project directory: (path, content)
NOISE = (("not-a-uuid.jsonl", '{"type":"summary","summary":"not a session"}\n'),
         ("memory/notes.md", "# notes\n\nnot a session either\n"))
_VERSION = "2.1.260"


def write_claude_code(p: Plan, source: Path) -> list[Path]:
    """Write the plan's files under ``source``; returns every path written, sorted."""
    project = source / p.project
    writer = _Lines(p)
    for event in p.written():
        writer.event(event)
    written: list[Path] = []

    def put(path: Path, content: str | bytes, mtime_ms: int | None = None) -> None:
        make_dirs(path.parent)
        data = content.encode("utf-8") if isinstance(content, str) else content
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, OWNER_FILE)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        if mtime_ms is not None:
            os.utime(path, ns=(mtime_ms * 1_000_000, mtime_ms * 1_000_000))
        written.append(path)

    def lines(stream: str) -> str:
        return "".join(line + "\n" for line in writer.files.get(stream, []))

    put(project / f"{p.session}.jsonl", lines("main"))
    for rel, content in NOISE:
        put(project / rel, content)
    session_dir = project / p.session
    for s in p.streams:
        if s.lost:
            continue
        if s.batch:
            put(session_dir / "subagents" / "workflows" / s.batch / f"agent-{s.id}.jsonl", lines(s.id))
            continue
        put(session_dir / "subagents" / f"agent-{s.id}.jsonl", lines(s.id))
        put(session_dir / "subagents" / f"agent-{s.id}.meta.json",
            js_line({"agentType": "general-purpose", "description": s.name, "toolUseId": s.tool, "spawnDepth": 1}))
    for r in p.runs:
        journal = []
        for kind, child, _at in r.journal:
            entry: dict[str, Any] = {"type": kind, "agentId": child, "key": f"v2:{child}"}
            if kind == "result":
                entry["result"] = {"done": True}
            journal.append(js_line(entry) + "\n")
        put(session_dir / "subagents" / "workflows" / r.id / "journal.jsonl", "".join(journal))
        put(session_dir / "workflows" / f"{r.id}.json",
            js_line({"runId": r.id, "taskId": f"task-{r.id}", "workflowName": r.name, "status": "completed",
                     "agentCount": len(r.children)}))
        put(session_dir / "workflows" / "scripts" / f"{r.id.removeprefix('wf_')}-{r.id}.js", r.script)
    for body in provider_bodies(p):
        put(source / BODIES_DIR / body.name, body.data, body.at)
    for rel, data in plugin_files(p).items():
        put(source / PLUGIN_DATA / rel, data)
    return sorted(written)


class _Lines:
    """Each stream's lines, in the envelope and field order Claude Code writes."""

    def __init__(self, p: Plan) -> None:
        self.p = p
        self.files: dict[str, list[str]] = {}
        self.cwd = p.cwd

    def add(self, e: Event, body: dict[str, Any], *, head: dict[str, Any] | None = None) -> None:
        """``head`` comes first (``parentUuid``, …), then the envelope, then ``body``."""
        sidechain = e.stream != "main"
        line: dict[str, Any] = dict(head or {})
        line.setdefault("isSidechain", sidechain)
        if sidechain:
            line["agentId"] = e.stream
        line.update(body)
        line.update({"userType": "external", "entrypoint": self.p.entrypoint, "cwd": self.cwd,
                     "sessionId": self.p.session, "version": _VERSION, "gitBranch": "main"})
        self.files.setdefault(e.stream, []).append(js_line(line))

    @staticmethod
    def chain(e: Event) -> dict[str, Any]:
        return {"parentUuid": e.parent or None}

    def event(self, e: Event) -> None:
        handler = getattr(self, "_" + e.kind)
        handler(e)

    def _title(self, e: Event) -> None:
        self.files.setdefault(e.stream, []).append(js_line({"type": "ai-title", "aiTitle": e.label,
                                                             "sessionId": self.p.session}))

    def _input(self, e: Event) -> None:
        body: dict[str, Any] = {"promptId": e.run, "type": "user"}
        if e.stream == "main":
            body["message"] = {"role": "user", "content": [{"type": "text", "text": e.text}]}
        else:
            body["message"] = {"role": "user", "content": e.text}
        body.update({"uuid": e.id, "timestamp": format_ms(e.at or 0)})
        if e.stream == "main":
            if self.p.entrypoint == "sdk-cli":
                body["promptSource"] = "sdk"  # a headless prompt carries no origin
            else:
                body["origin"] = {"kind": "human"}
            body["permissionMode"] = "auto"
        self.add(e, body, head=self.chain(e))

    def _queued(self, e: Event) -> None:
        self.add(e, {"attachment": {"type": "queued_command", "prompt": e.text, "commandMode": e.mode,
                                    "content": e.text},
                     "type": "attachment", "uuid": e.id, "timestamp": format_ms(e.at or 0)}, head=self.chain(e))

    def _inject(self, e: Event) -> None:
        attachment: dict[str, Any] = {"type": e.type}
        if e.type == "prompt_snapshot":
            if e.system_prompt:
                attachment["systemPrompt"] = e.system_prompt
            if e.tools:
                attachment["tools"] = e.tools
        elif e.type == "deferred_tools_record" and e.tools:
            attachment["tools"] = e.tools
        if e.text:
            attachment["content"] = e.text
        self.add(e, {"attachment": attachment, "type": "attachment", "uuid": e.id,
                     "timestamp": format_ms(e.at or 0)}, head=self.chain(e))

    def _fragment(self, e: Event) -> None:
        if e.frag == "thinking":
            block: dict[str, Any] = {"type": "thinking", "thinking": e.text, "signature": "sig"}
        elif e.frag == "tool_use":
            block = {"type": "tool_use", "id": e.tool_id, "name": e.tool_name, "input": e.tool_input or {}}
        else:
            block = {"type": "text", "text": e.text}
        u = e.usage
        message = {"model": MODEL, "id": e.call, "type": "message", "role": "assistant", "content": [block],
                   "stop_reason": e.stop if e.last else None, "stop_sequence": None,
                   "usage": {"input_tokens": u[0], "cache_creation_input_tokens": u[3],
                             "cache_read_input_tokens": u[2], "output_tokens": u[1],
                             "service_tier": "standard", "speed": "standard"}}
        self.add(e, {"message": message, "requestId": e.req, "type": "assistant", "uuid": e.id,
                     "timestamp": format_ms(e.at or 0)}, head=self.chain(e))

    def _result(self, e: Event) -> None:
        block: dict[str, Any] = {"tool_use_id": e.of, "type": "tool_result", "content": e.text}
        if e.failed is not None:
            block["is_error"] = e.failed
        body: dict[str, Any] = {"promptId": e.run, "type": "user",
                                "message": {"role": "user", "content": [block]},
                                "uuid": e.id, "timestamp": format_ms(e.at or 0)}
        if not e.replayed:
            # an editing tool's result is its change, as the runtime records it
            edited = e.changes and e.tool_name in EDITING_TOOLS
            body["toolUseResult"] = runtime_result(self.p, e) if edited else self._enrichment(e)
        body["sourceToolAssistantUUID"] = e.parent
        self.add(e, body, head=self.chain(e))

    @staticmethod
    def _enrichment(e: Event) -> Any:
        if e.ack is not None:
            return {"isAsync": True, "status": "async_launched", "agentId": e.ack["child"],
                    "description": e.ack["label"], "prompt": e.ack["prompt"]}
        if e.fork:
            return {"status": "forked", "agentId": e.fork}
        if e.launch is not None:
            return {"status": "async_launched", "runId": e.launch["run"],
                    "transcriptDir": f"subagents/workflows/{e.launch['run']}", "workflowName": e.launch["name"]}
        if e.string_enrichment:
            return "a bare string, not an object"
        return {"stdout": e.text, "stderr": "", "interrupted": False, "isImage": False}

    def _notice(self, e: Event) -> None:
        self.add(e, {"promptId": e.run, "type": "user", "message": {"role": "user", "content": e.text},
                     "uuid": e.id, "timestamp": format_ms(e.at or 0), "origin": {"kind": "task-notification"}},
                 head=self.chain(e))

    def _synthetic(self, e: Event) -> None:
        message = {"id": e.call, "model": "<synthetic>", "role": "assistant", "stop_reason": None,
                   "stop_sequence": None, "type": "message",
                   "usage": {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0,
                             "cache_read_input_tokens": 0},
                   "content": [{"type": "text", "text": e.text}]}
        self.add(e, {"type": "assistant", "uuid": e.id, "timestamp": format_ms(e.at or 0), "message": message,
                     "requestId": e.req, "isApiErrorMessage": True}, head=self.chain(e))

    def _boundary(self, e: Event) -> None:
        self.add(e, {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
                     "isMeta": False, "timestamp": format_ms(e.at or 0), "uuid": e.id, "level": "info",
                     "compactMetadata": {"trigger": "auto", "preTokens": 100000},
                     "logicalParentUuid": e.continues or None}, head={"parentUuid": None})

    def _summary(self, e: Event) -> None:
        self.add(e, {"promptId": e.run, "type": "user",
                     "message": {"role": "user", "content": [{"type": "text", "text": e.text}]},
                     "isCompactSummary": True, "isVisibleInTranscriptOnly": True,
                     "uuid": e.id, "timestamp": format_ms(e.at or 0)}, head=self.chain(e))

    def _system(self, e: Event) -> None:
        body: dict[str, Any] = {"type": "system", "subtype": e.type}
        body.update(e.fields)
        body.update({"uuid": e.id, "timestamp": format_ms(e.at or 0), "isMeta": False})
        self.add(e, body, head=self.chain(e))
