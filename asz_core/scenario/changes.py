"""What the asz Claude Code plugin writes for a scenario's tool that changes files.

The plugin observes every tool whose patch the runtime does not record itself (the scenario
model refuses changes on the others) and writes one ``changes/1`` line per call it saw, into
``plugins/data/<plugin dir>/output/<session>/<stream>.jsonl`` under Claude Code's directory.
For each written result of such a tool (a replayed copy is the runtime's, not a second call):

1. the record's ``id`` and ``tool`` are the tool-use id, ``tool_name`` its name,
   ``captured_by`` ``asz-plugin``, ``basis`` ``tool_window``, ``session`` and ``stream`` where
   the call ran, ``time`` the result's time;
2. the workspace (``root.path``) is the planned working directory; the policy is
   ``standard-v1`` exclusions and ``readonly-v1`` read-only rules;
3. the window: a scan one second before the result, and one at the result;
4. the outcome: ``returned`` with exit code 0, or ``failed`` with 1 when the result failed;
   ``coverage`` ``complete``; ``changed_files`` the number of files;
5. each file: ``create`` (no before), ``delete`` (no after) or ``modify``, its sides and line
   diff as every producer gives them (:mod:`asz_core.changes.files`), attributed to this window
   alone (``only_this_window``, ``windows`` its id).

A line is encoded as Go's ``json.Marshal`` writes the plugin's record (upstream's key order).
"""

from __future__ import annotations

from typing import Any, Final

from asz_core.changes.files import endpoint, line_diff
from asz_core.scenario.model import FileChange
from asz_core.scenario.plan import Event, Plan, format_ms
from asz_core.sessiondata.jsonbytes import marshal_value

__all__ = ["PLUGIN_DATA", "PLUGIN_DIR", "plugin_files"]

#: where under the runtime's directory the plugin keeps its data (the adapter's source root)
PLUGIN_DATA: Final = "plugins/data"
#: the plugin's data directory: its name and the marketplace it came from, a local directory
PLUGIN_DIR: Final = "asz-changes-inline"


def plugin_files(p: Plan) -> dict[str, bytes]:
    """Each change file the plugin would have written, by its path under :data:`PLUGIN_DATA`."""
    lines: dict[str, list[bytes]] = {}
    for e in p.written():
        if e.kind == "result" and e.changes and not e.replayed:
            lines.setdefault(e.stream, []).append(marshal_value(_record(p, e)))
    return {f"{PLUGIN_DIR}/output/{p.session}/{stream}.jsonl": b"".join(line + b"\n" for line in found)
            for stream, found in lines.items()}


def _record(p: Plan, e: Event) -> dict[str, Any]:
    at = e.at or 0
    failed = bool(e.failed)
    return {
        "schema": "changes/1", "id": e.of, "captured_by": "asz-plugin", "session": p.session, "stream": e.stream,
        "tool": e.of, "tool_name": e.tool_name, "time": format_ms(at), "basis": "tool_window",
        "root": {"path": p.cwd}, "policy": {"exclusions": "standard-v1", "read_only": "readonly-v1"},
        "window": {"before": {"from": format_ms(at - 1000), "to": format_ms(at - 1000)},
                   "after": {"from": format_ms(at), "to": format_ms(at)}},
        "outcome": {"state": "failed" if failed else "returned", "exit_code": 1 if failed else 0},
        "coverage": "complete", "changed_files": len(e.changes),
        "changes": [_file(change, e.of) for change in e.changes],
    }


def _file(change: FileChange, window: str) -> dict[str, Any]:
    before, after = change.before, change.after
    diff = line_diff(before or "", after or "")
    out: dict[str, Any] = {
        "path": change.path,
        "operation": "create" if before is None else "delete" if after is None else "modify",
        "before": endpoint(None if before is None else before.encode("utf-8")),
        "after": endpoint(None if after is None else after.encode("utf-8")),
        "diff": diff.diff, "attribution": "only_this_window", "windows": [window],
        "additions": diff.additions, "deletions": diff.deletions,
    }
    if diff.hunks:
        out["hunks"] = diff.hunks
    return out
