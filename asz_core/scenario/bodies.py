"""The provider bodies a plan's calls send and receive, as Claude Code writes them with
``OTEL_LOG_RAW_API_BODIES=file:<dir>`` (measured on 2.1.260).

The rules, in order:

1. Every call sends its stream's whole message list again; the newest message carries the
   cache marker (``cache_control``), and a one-block text message becomes a plain string once
   the marker has moved on. A compaction starts the list again with the summary.
2. The first ``system`` block is a billing header naming the previous call's request
   (``cc_prev_req=``) and the prompt (``cc_prompt_id=``); the second is the stream's system
   prompt. ``tools`` are the stream's advertised tools. A stream that advertises none gets a
   stand-in: filler sized to make a body worth cutting, not prose to read.
3. ``metadata.user_id`` is a JSON string holding the session.
4. The response is the call's final message: its blocks, the stop reason and the call's own
   ``usage``, so the transcript and the body say one number. Thinking is ``<REDACTED>``.
5. A request is named by a UUID drawn from the session and the call (Claude Code's are random;
   a drawn one keeps a build reproducible); a response by the call's request id. Each file is
   stamped a millisecond before the call's first fragment (request) or after its last
   (response), and the bodies come in that order, then by name: the order the adapter lands them.
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass, field
from typing import Any

from asz_core.scenario.jsonline import js_line
from asz_core.scenario.plan import MODEL, Plan

__all__ = ["Body", "provider_bodies"]

_STAND_IN_PROMPT = "You are Claude Code, working in a scenario. " + "Use the tools to answer. " * 80
_STAND_IN_CHILD = "You are an agent working for another agent. " + "Report what you find. " * 60
_STAND_IN_TOOLS = [
    {"name": "Read", "description": "Reads a file from the local filesystem. " * 40,
     "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}}},
    {"name": "Bash", "description": "Executes a shell command and returns its output. " * 40,
     "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}},
]
_REMINDER_MAIN = ("<system-reminder>\nCodebase and user instructions are shown below.\n"
                  + "Follow the project's rules. " * 60 + "\n</system-reminder>")
_REMINDER_CHILD = ("<system-reminder>\nAs you answer the user's questions, you can use the following "
                   "context.\n</system-reminder>")


@dataclass
class Body:
    name: str     #: the file name
    at: int       #: epoch milliseconds it was written
    data: bytes


@dataclass
class _Chain:
    main: bool
    messages: list[dict[str, Any]] = field(default_factory=list)
    prompt: str = ""
    previous: str = ""
    call: str = ""
    blocks: list[dict[str, Any]] = field(default_factory=list)

    def user(self, text: str) -> None:
        blocks = [{"type": "text", "text": text}]
        if not self.messages:  # the first message carries the injected reminder beside it
            blocks.insert(0, {"type": "text", "text": _REMINDER_MAIN if self.main else _REMINDER_CHILD})
        self.push({"role": "user", "content": blocks})

    def push(self, message: dict[str, Any]) -> None:
        for old in self.messages:
            content = old["content"]
            if not isinstance(content, list):
                continue
            for block in content:
                block.pop("cache_control", None)
            if len(content) == 1 and content[0].get("type") == "text":
                old["content"] = content[0]["text"]
        message = copy.deepcopy(message)
        if isinstance(message["content"], list) and message["content"]:
            message["content"][-1]["cache_control"] = {"type": "ephemeral"}
        self.messages.append(message)


def _request_name(session: str, call: str) -> str:
    h = hashlib.sha256(f"request:{session}:{call}".encode()).hexdigest()
    return f"{h[0:8]}-{h[8:12]}-4{h[13:16]}-8{h[17:20]}-{h[20:32]}.request.json"


def provider_bodies(p: Plan) -> list[Body]:
    """Every body the plan's calls write, in the order the adapter lands them."""
    if not p.provider_bodies:
        return []
    chains: dict[str, _Chain] = {}
    out: list[Body] = []
    done: set[str] = set()
    for e in p.written():
        if e.replayed:
            continue
        chain = chains.setdefault(e.stream, _Chain(main=e.stream == "main"))
        if e.kind in ("input", "notice"):
            chain.prompt = e.run
            chain.user(e.text)
        elif e.kind == "summary":
            chain.prompt, chain.messages = e.run, []
            chain.user(e.text)
        elif e.kind == "result":
            chain.push({"role": "user", "content": [{"type": "tool_result", "tool_use_id": e.of, "content": e.text}]})
        elif e.kind == "fragment" and e.call not in done:
            at = e.at or 0
            if chain.call != e.call:
                chain.call, chain.blocks = e.call, []
                out.append(Body(_request_name(p.session, e.call), at - 1, _request(p, e.stream, chain)))
            chain.blocks.append(_block(e.frag, e.text, e.tool_id, e.tool_name, e.tool_input))
            if e.last:
                done.add(e.call)
                u = e.usage
                response = {"id": e.call, "type": "message", "role": "assistant", "model": MODEL,
                            "content": chain.blocks, "stop_reason": e.stop, "stop_sequence": None,
                            "usage": {"input_tokens": u[0], "cache_creation_input_tokens": u[3],
                                      "cache_read_input_tokens": u[2], "output_tokens": u[1]}}
                out.append(Body(f"{e.req}.response.json", at + 1, js_line(response).encode("utf-8")))
                chain.push({"role": "assistant", "content": chain.blocks})
                chain.previous, chain.call, chain.blocks = e.req, "", []
    out.sort(key=lambda b: (b.at, b.name))
    return out


def _block(frag: str, text: str, tool_id: str, name: str, tool_input: dict[str, Any] | None) -> dict[str, Any]:
    if frag == "thinking":
        return {"type": "thinking", "thinking": "<REDACTED>", "signature": "sig"}
    if frag == "tool_use":
        return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input or {}}
    return {"type": "text", "text": text}


def _request(p: Plan, stream: str, chain: _Chain) -> bytes:
    header = "x-anthropic-billing-header: cc_version=2.1.260; cc_entrypoint=cli; cch=00000;"
    if chain.previous:
        header += f" cc_prev_req={chain.previous};"
    if chain.prompt:
        header += f" cc_prompt_id={chain.prompt};"
    system_prompt, tools = p.prompts.get(stream, ("", []))
    if not system_prompt:
        system_prompt = _STAND_IN_PROMPT if chain.main else _STAND_IN_CHILD
        tools = _STAND_IN_TOOLS if chain.main else _STAND_IN_TOOLS[:1]
    user = js_line({"device_id": "scenario", "account_uuid": "scenario", "session_id": p.session})
    body = {"model": MODEL, "messages": chain.messages,
            "system": [{"type": "text", "text": header},
                       {"type": "text", "text": system_prompt, "cache_control": {"type": "ephemeral"}}],
            "tools": tools, "metadata": {"user_id": user}, "max_tokens": 64000}
    return js_line(body).encode("utf-8")
