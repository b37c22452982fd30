"""What a scenario's tool that changes files leaves: the runtime's own patch on an editing tool's
result, the asz Claude Code plugin's record for every other tool.

**An editing tool** (``Edit``, ``Write``, ``NotebookEdit``: :data:`~.model.EDITING_TOOLS`) changes
one file, and the runtime records it on the tool's result (:func:`runtime_result`): ``filePath``
(the workspace joined with the path), ``originalFile`` (``null`` for a file it created),
``structuredPatch`` (the line diff's hunks under the runtime's key names), ``userModified``
false; an ``Edit`` adds ``oldString``/``newString`` (the whole before and after) and
``replaceAll`` false, the others ``type`` (``create`` or ``update``) and ``content`` (the after,
empty for none). ``claude-code-local`` derives a ``changes/1`` part from that result; an ``sd``
build lands the same bytes as one more ``data`` part of the result record
(:func:`runtime_record`), derived by the adapter's rules from what the result says, so the two
formats land the same record (``captured_by`` ``claude-code``, basis ``runtime_reported``).

**Every other tool** is the plugin's: it writes one ``changes/1`` line per call it saw, into
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

from asz_core.changes.files import FileDiff, endpoint, line_diff
from asz_core.scenario.model import EDITING_TOOLS, FileChange
from asz_core.scenario.plan import Event, Plan, format_ms
from asz_core.sessiondata.jsonbytes import marshal_value

__all__ = ["PLUGIN_DATA", "PLUGIN_DIR", "plugin_files", "plugin_lines", "runtime_record", "runtime_result"]

#: where under the runtime's directory the plugin keeps its data (the adapter's source root)
PLUGIN_DATA: Final = "plugins/data"
#: the plugin's data directory: its name (``file-changes``) and, after a dash, the marketplace
#: upstream publishes it in (``skywalking-ai-sessionizer``), as Claude Code names it on install
PLUGIN_DIR: Final = "file-changes-skywalking-ai-sessionizer"


def plugin_lines(p: Plan) -> dict[str, list[bytes]]:
    """The plugin's records, each as its line without the newline, by the stream they ran in."""
    lines: dict[str, list[bytes]] = {}
    for e in p.written():
        if e.kind == "result" and e.changes and not e.replayed and e.tool_name not in EDITING_TOOLS:
            lines.setdefault(e.stream, []).append(marshal_value(_record(p, e)))
    return lines


def plugin_files(p: Plan) -> dict[str, bytes]:
    """Each change file the plugin would have written, by its path under :data:`PLUGIN_DATA`."""
    return {f"{PLUGIN_DIR}/output/{p.session}/{stream}.jsonl": b"".join(line + b"\n" for line in found)
            for stream, found in plugin_lines(p).items()}


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


def _runtime_diff(change: FileChange) -> FileDiff:
    return line_diff(change.before or "", change.after or "")


def runtime_result(p: Plan, e: Event) -> dict[str, Any]:
    """What the runtime writes as an editing tool's ``toolUseResult`` for its one change."""
    change = e.changes[0]
    patch = [{"oldStart": h["old_start"], "oldLines": h["old_lines"], "newStart": h["new_start"],
              "newLines": h["new_lines"], "lines": h["lines"]} for h in _runtime_diff(change).hunks]
    out: dict[str, Any] = {"filePath": f"{p.cwd}/{change.path}", "originalFile": change.before,
                           "structuredPatch": patch, "userModified": False}
    if e.tool_name == "Edit":  # the model refuses an Edit without both sides
        out.update(oldString=change.before, newString=change.after, replaceAll=False)
    else:
        out.update(type="create" if change.before is None else "update", content=change.after or "")
    return out


def runtime_record(p: Plan, e: Event) -> bytes | None:
    """The ``changes/1`` record ``claude-code-local`` derives from :func:`runtime_result`, by its
    rules, encoded as it encodes it; ``None`` where it derives none (no patch and no after)."""
    change = e.changes[0]
    before = change.before
    # the after the result names: a Write's content; an Edit's before with its oldString replaced,
    # which says nothing when the oldString is empty
    after = (change.after or "") if e.tool_name != "Edit" else (change.after if before else None)
    computed = _runtime_diff(change)
    if not computed.hunks and after is None:
        return None
    if not computed.hunks:  # no patch: the adapter diffs the two sides itself
        computed = line_diff(before or "", after or "")
    available = computed.diff == "available"
    file: dict[str, Any] = {
        "path": change.path, "operation": "create" if before is None else "modify",
        "before": endpoint(None if before is None else before.encode("utf-8")),
        "after": endpoint(after.encode("utf-8")) if after is not None else {"present": True, "bytes": None},
        "diff": computed.diff,
        "additions": (computed.additions or 0) if available else None,
        "deletions": (computed.deletions or 0) if available else None,
    }
    if computed.hunks:
        file["hunks"] = computed.hunks
    return marshal_value({
        "schema": "changes/1", "id": e.of, "captured_by": "claude-code", "session": p.session, "stream": e.stream,
        "tool": e.of, "time": format_ms(e.at or 0), "basis": "runtime_reported", "root": {"path": p.cwd},
        "changed_files": 1, "changes": [file]})
