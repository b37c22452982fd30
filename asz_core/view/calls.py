"""A stream's records grouped into calls: one per model response, keyed by its ``call`` id.

Every record of a stream that names a ``call`` is a fragment of that call, in line order (a
response streamed as several lines is several records with one id). From the fragments:

* ``model``, and ``time``: the first fragment's that has one;
* ``usage``: the **last** fragment's, never a sum (a runtime may repeat the final count on every
  fragment, or write partial counts that climb; the last one is right for both);
* ``finished``: whether any fragment carries the ``finished`` flag;
* ``records``: the ``{seq, row}`` of every fragment;
* ``tool_calls``: each ``call`` part, with the ``result`` part that names its id (``of``)
  anywhere later in the stream, and the ``child`` stream a record names for it (the record's
  ``tool``, or its one result part, says which tool call);
* ``run``: the prompt the call answers: the ``run`` of its own first fragment, else of the latest
  record before it in the stream that names one. A call in a stream no record of which names a
  run before it has none.

A call whose model is named in angle brackets (``<synthetic>``) was made by the runtime itself,
not by a provider: it is kept, marked ``synthetic``, and takes part in no provider-body join.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from asz_core.sessiondata.model import Part, Record, Usage

__all__ = ["Call", "StreamCalls", "ToolCall", "is_synthetic"]


def is_synthetic(model: str | None) -> bool:
    """A model named in angle brackets is no provider's: the runtime wrote the record itself."""
    return model is not None and len(model) > 2 and model.startswith("<") and model.endswith(">")


def _at(seq: int, row: int, block: int | None = None) -> dict[str, int]:
    out = {"seq": seq, "row": row}
    if block is not None:
        out["block"] = block
    return out


@dataclass
class ToolCall:
    """One ``call`` part of a call, and what answered it."""

    id: str | None
    part: Part
    at: dict[str, int]
    result: dict[str, Any] | None = None
    child: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.id is not None:
            out["id"] = self.id
        if self.part.name is not None:
            out["name"] = self.part.name
        if self.part.server is not None:
            out["server"] = self.part.server
        if self.part.server_tool is not None:
            out["server_tool"] = self.part.server_tool
        out["at"] = self.at
        out["bytes"] = self.part.bytes
        out["state"] = self.part.state
        if self.result is not None:
            out["result"] = self.result
        if self.child is not None:
            out["child"] = self.child
        return out


@dataclass
class Call:
    """One model response in a stream."""

    id: str
    stream: str
    run: str | None
    records: list[dict[str, int]] = field(default_factory=list)
    model: str | None = None
    time: str | None = None
    usage: Usage | None = None
    finished: bool = False
    tool_calls: list[ToolCall] = field(default_factory=list)
    provider_bodies: list[dict[str, Any]] = field(default_factory=list)

    @property
    def synthetic(self) -> bool:
        return is_synthetic(self.model)

    @property
    def children(self) -> list[str]:
        out: list[str] = []
        for tool in self.tool_calls:
            if tool.child is not None and tool.child not in out:
                out.append(tool.child)
        return out

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id}
        if self.model is not None:
            out["model"] = self.model
        if self.synthetic:
            out["synthetic"] = True
        if self.time is not None:
            out["time"] = self.time
        if self.run is not None:
            out["run"] = self.run
        if self.usage is not None and self.usage.to_json():
            out["usage"] = self.usage.to_json()
        out["finished"] = self.finished
        out["records"] = self.records
        out["tool_calls"] = [t.to_json() for t in self.tool_calls]
        children = self.children
        if children:
            out["children"] = children
        if self.provider_bodies:
            out["provider_bodies"] = self.provider_bodies
        return out


class StreamCalls:
    """Builds one stream's calls from its records, fed in line order (repeats left out)."""

    def __init__(self, stream: str) -> None:
        self.stream = stream
        self.calls: dict[str, Call] = {}
        self._tools: dict[str, ToolCall] = {}
        self._run: str | None = None
        self.results = 0

    def add(self, seq: int, row: int, record: Record) -> None:
        if record.run is not None:
            self._run = record.run
        if record.call is not None:
            self._fragment(seq, row, record, record.call)
        results = [(block, part) for block, part in enumerate(record.parts) if part.k == "result"]
        for block, part in results:
            tool = self._tools.get(part.of) if part.of is not None else None
            if tool is not None and tool.result is None:
                tool.result = _result(part, _at(seq, row, block))
                self.results += 1
        if record.child is not None:
            named = record.tool if record.tool is not None else (
                results[0][1].of if len(results) == 1 else None)
            tool = self._tools.get(named) if named is not None else None
            if tool is not None and tool.child is None:
                tool.child = record.child

    def _fragment(self, seq: int, row: int, record: Record, call_id: str) -> None:
        call = self.calls.get(call_id)
        if call is None:
            call = self.calls[call_id] = Call(id=call_id, stream=self.stream, run=self._run)
        call.records.append(_at(seq, row))
        if call.model is None and record.model is not None:
            call.model = record.model
        if call.time is None and record.time is not None:
            call.time = record.time
        call.usage = record.usage
        if "finished" in record.flags:
            call.finished = True
        for block, part in enumerate(record.parts):
            if part.k != "call":
                continue
            tool = ToolCall(part.id, part, _at(seq, row, block))
            call.tool_calls.append(tool)
            if part.id is not None:
                self._tools.setdefault(part.id, tool)


def _result(part: Part, at: dict[str, int]) -> dict[str, Any]:
    out: dict[str, Any] = {"at": at, "bytes": part.bytes, "state": part.state}
    if part.failed is not None:
        out["failed"] = part.failed
    return out
