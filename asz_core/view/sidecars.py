"""``workspace_changes`` and ``tool_executions``: records beside the steps, joined to them by tool-use id.

Rules (asz-view, "Workspace changes" and "Tool executions"):

1. A tool step carries the tool-use id of the ``call`` part its ``ref`` names (or its record's only
   part); that id is the whole join. Nothing is matched by time or name; a record no step carries
   is kept, with ``step`` empty.
2. Change records (``changes/1`` data parts) come from two places: a tool step's result records,
   where the runtime put its own patch beside the raw result, and the session's ``changes`` files,
   one per line. One record is kept once per observer (``captured_by``) and id: a line landed twice
   is one record, while the runtime's and the plugin's record of one call are two.
3. Execution records (``execution/1`` data parts) come from the session's ``execution`` files, kept
   once by their own id.
4. Each list is in time order (times compared as instants); at one time the runtime's change first,
   then by where each was read. An entry is ``step``, ``ref`` (where it was read), then the
   record's own fields as it holds them.
5. A step lists the ids of its records under ``changes`` and ``executions``, in list order.
"""

from __future__ import annotations

from typing import Any, Final

from asz_core.sessiondata.times import parse_instant
from asz_core.view.landed import Landed
from asz_core.view.nodes import ref_of

__all__ = ["Sidecars", "sidecars"]

CHANGES_SCHEMA: Final = "changes/1"
EXECUTION_SCHEMA: Final = "execution/1"
RUNTIME: Final = "claude-code"

Sidecars = tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, list[str]], dict[str, list[str]]]


def _steps_by_tool_use(nodes: dict[str, dict[str, Any]], landed: Landed) -> dict[str, str]:
    out: dict[str, str] = {}
    for node in nodes.values():
        if node["kind"] not in ("tool", "agent.call"):
            continue
        ref = ref_of(node.get("ref"))
        record = landed.record(ref[0], ref[1]) if ref else None
        if ref is None or record is None:
            continue
        block = ref[2]
        if block is not None and 0 <= block < len(record.parts):
            part = record.parts[block]
        elif len(record.parts) == 1:
            part = record.parts[0]
        else:
            continue
        if part.k == "call" and part.id:
            out[part.id] = node["id"]
    return out


def _records_in(landed: Landed, seq: int, row: int, schema: str) -> list[tuple[int, dict[str, Any]]]:
    record = landed.record(seq, row)
    out = []
    for block, part in enumerate(record.parts if record else []):
        if part.k != "data" or not part.data:
            continue
        try:
            value = part.value()
        except ValueError:
            continue
        if isinstance(value, dict) and value.get("schema") == schema:
            out.append((block, value))
    return out


def _entry(step: str, seq: int, row: int, block: int, record: dict[str, Any]) -> dict[str, Any]:
    return {"step": step, "ref": {"seq": seq, "row": row, "block": block}, **record}


def _when(entry: dict[str, Any]) -> int:
    return parse_instant(entry.get("time")) or 0


def _where(entry: dict[str, Any]) -> tuple[int, int, int]:
    ref = entry["ref"]
    return (ref["seq"], ref["row"], ref["block"])


def sidecars(nodes: dict[str, dict[str, Any]], landed: Landed) -> Sidecars:
    """``(workspace_changes, tool_executions, changes by step, executions by step)``."""
    step_of = _steps_by_tool_use(nodes, landed)
    changes: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()

    def add(seq: int, row: int) -> None:
        for block, record in _records_in(landed, seq, row, CHANGES_SCHEMA):
            key = (str(record.get("captured_by")), str(record.get("id")))
            if key in seen:
                continue
            seen.add(key)
            changes.append(_entry(step_of.get(str(record.get("tool") or ""), ""), seq, row, block, record))

    for node in nodes.values():
        if node["kind"] == "tool":
            for raw in (node.get("refs") or [])[1:]:
                ref = ref_of(raw)
                if ref is not None:
                    add(ref[0], ref[1])
    for seq in sorted(landed.of_kind("changes")):
        row = 1
        while landed.record(seq, row) is not None:
            add(seq, row)
            row += 1
    changes.sort(key=lambda e: (_when(e), e.get("captured_by") != RUNTIME, _where(e)))

    executions: list[dict[str, Any]] = []
    ids: set[str] = set()
    for seq in sorted(landed.of_kind("execution")):
        row = 1
        while landed.record(seq, row) is not None:
            for block, record in _records_in(landed, seq, row, EXECUTION_SCHEMA):
                if str(record.get("id")) in ids:
                    continue
                ids.add(str(record.get("id")))
                executions.append(_entry(step_of.get(str(record.get("tool") or ""), ""), seq, row, block, record))
            row += 1
    executions.sort(key=lambda e: (_when(e), _where(e)))

    by_step: dict[str, list[str]] = {}
    for e in changes:
        if e["step"]:
            by_step.setdefault(e["step"], []).append(str(e.get("id")))
    ran: dict[str, list[str]] = {}
    for e in executions:
        if e["step"]:
            ran.setdefault(e["step"], []).append(str(e.get("id")))
    return changes, executions, by_step, ran
