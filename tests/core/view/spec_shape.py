"""The shape of an ``asz.view`` 1.0 document, transcribed from upstream's ``formats/asz-view.md``.

Written from the spec's text, never from the builder: each list below is a table or a sentence of
that page, in the order the page lists the keys ("Keys ... are written in the order this page
lists them"). :func:`shape_problems` says, one line each, where a document departs from it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

#: "Top level": the table's rows, in order
TOP = ("format", "version", "conversation", "sessions", "head", "parser", "policy", "summary", "rounds", "files",
       "streams", "segments", "talks", "loose", "relations", "unresolved", "workspace_changes", "tool_executions")
#: the ``head`` row: "``round`` and ``digest`` of the newest round"
HEAD = ("round", "digest")
#: the ``summary`` row: title; state; problems; the counts; from and to; kinds, relation_types and
#: quality; withheld ("``{}`` when nothing was asked to be withheld")
SUMMARY = ("title", "state", "problems", "talks", "steps", "streams", "segments", "rounds", "unresolved", "changes",
           "provider_bodies", "captured_prompts", "from", "to", "kinds", "relation_types", "quality", "withheld")
STATES = ("verified", "incomplete", "mismatch")
#: the ``rounds`` row
ROUND = ("round", "digest", "previous", "from_seq", "through_seq", "input_digest", "from_time", "through_time",
         "verified")
#: the ``files`` row: "Absent values are null"
FILE = ("file", "format", "kind", "seq", "round", "stream", "run", "lines", "bytes", "digest", "from_time",
        "through_time")
#: the ``streams`` row, and ``opened_by`` as ``{step, stream, talk, quality}``
STREAM = ("id", "name", "role", "label", "parent", "records", "steps", "talk", "named_by", "opened_by")
ORIGIN = ("step", "stream", "talk", "quality")
#: the ``segments`` row
SEGMENT = ("id", "state", "committable", "talks", "from", "to")
#: the ``relations`` row
RELATION = ("id", "type", "from", "to", "quality", "via", "evidence")
#: the ``unresolved`` row
UNRESOLVED = ("id", "kind", "ref", "reason", "state")
#: "A node in talks": the table's rows in order; ``children`` and ``edges`` close it
NODE = ("id", "kind", "parent", "stream", "at", "ref", "refs", "attrs", "text", "state", "bytes", "usage", "flags",
        "dropped", "label", "reply", "runs", "steps", "tools", "from", "to", "child", "segment", "name", "failed",
        "result", "result_state", "result_bytes", "request_to_result_ms", "request_to_result_join", "changes",
        "executions", "duration_ms", "duration_measured_by", "provider_bodies", "children", "edges")
NODE_ALWAYS = ("id", "kind", "at")
#: keys only a talk adds, only a tool or agent call adds, only a call step lists
TALK_ONLY = ("label", "reply", "runs", "steps", "tools", "from", "to", "child", "segment")
TOOL_ONLY = ("failed", "result", "result_state", "result_bytes", "request_to_result_ms", "request_to_result_join",
             "changes", "executions")
REF = ("seq", "row", "block")
USAGE = ("in", "out", "cache_read", "cache_write")
DROP = ("what", "bytes", "why")
EDGE = ("type", "other", "dir", "quality", "via")
BODY = ("role", "ref")
#: "Workspace changes" and "Tool executions": where it joins and where it was read, then the record
SIDECAR_FIRST = ("step", "ref")
CLIP_BYTES = 2000
MAX_DEPTH = 12


def spec_top_keys(spec: Path) -> list[str]:
    """The first column of the spec's "Top level" table, read from the page itself."""
    text = spec.read_text("utf-8")
    table = text.split("## Top level", 1)[1].split("\n\n| Key | Value |", 1)[1].split("\n\n", 1)[0]
    keys: list[str] = []
    for line in table.splitlines()[1:]:
        first = line.split("|")[1]
        keys.extend(re.findall(r"`([a-z_]+)`", first))
    return keys


def _ordered(where: str, value: Any, order: tuple[str, ...], *, exact: bool) -> list[str]:
    if not isinstance(value, dict):
        return [f"{where}: not an object"]
    keys = list(value)
    out = []
    unknown = [k for k in keys if k not in order]
    if unknown:
        out.append(f"{where}: keys the spec does not list: {unknown}")
    if exact and keys != list(order):
        out.append(f"{where}: keys {keys}, the spec lists {list(order)}")
    known = [k for k in keys if k in order]
    if known != sorted(known, key=order.index):
        out.append(f"{where}: keys {known} are not in the spec's order")
    return out


def _ref(where: str, value: Any) -> list[str]:
    out = _ordered(where, value, REF, exact=False)
    if isinstance(value, dict) and not ("seq" in value and "row" in value):
        out.append(f"{where}: a reference without seq and row")
    return out


def _node(where: str, node: Any, depth: int, is_talk: bool) -> list[str]:
    out = _ordered(where, node, NODE, exact=False)
    if not isinstance(node, dict):
        return out
    for key in NODE_ALWAYS:
        if key not in node:
            out.append(f"{where}: no {key}")
    nulls = [k for k, v in node.items() if v is None]
    if nulls:
        out.append(f"{where}: null {nulls} (a key with no value is absent)")
    if not isinstance(node.get("at"), int):
        out.append(f"{where}: at is not whole milliseconds")
    if is_talk != (node.get("kind") == "talk"):
        out.append(f"{where}: a {node.get('kind')} where a {'talk' if is_talk else 'run or step'} belongs")
    if not is_talk and any(k in node for k in TALK_ONLY):
        out.append(f"{where}: a {node.get('kind')} carries a talk's keys")
    if node.get("kind") not in ("tool", "agent.call") and any(k in node for k in TOOL_ONLY if k != "failed"):
        out.append(f"{where}: a {node.get('kind')} carries a tool call's keys")
    if "provider_bodies" in node and node.get("kind") != "llm.call":
        out.append(f"{where}: a {node.get('kind')} lists provider bodies")
    for key in ("text", "label", "reply", "result"):
        if isinstance(node.get(key), str) and len(node[key].encode("utf-8", "surrogatepass")) > CLIP_BYTES:
            out.append(f"{where}: {key} is longer than {CLIP_BYTES} bytes")
    if "ref" in node:
        out += _ref(f"{where}.ref", node["ref"])
    for i, r in enumerate(node.get("refs", [])):
        out += _ref(f"{where}.refs[{i}]", r)
    if "usage" in node:
        out += _ordered(f"{where}.usage", node["usage"], USAGE, exact=False)
        if 0 in node["usage"].values():
            out.append(f"{where}.usage: a count of zero is left out")
    for i, d in enumerate(node.get("dropped", [])):
        out += _ordered(f"{where}.dropped[{i}]", d, DROP, exact=False)
    for i, e in enumerate(node.get("edges", [])):
        out += _ordered(f"{where}.edges[{i}]", e, EDGE, exact=False)
        if e.get("dir") not in ("in", "out"):
            out.append(f"{where}.edges[{i}]: dir {e.get('dir')!r}")
    for i, b in enumerate(node.get("provider_bodies", [])):
        out += _ordered(f"{where}.provider_bodies[{i}]", b, BODY, exact=True)
        if b.get("role") not in ("request", "response") or set(b.get("ref", {})) != {"seq", "row"}:
            out.append(f"{where}.provider_bodies[{i}]: {b}")
    if isinstance(node.get("attrs"), dict) and "provider_bodies" in node["attrs"]:
        out.append(f"{where}.attrs: provider_bodies stays in attrs")
    kids = node.get("children", [])
    if depth >= MAX_DEPTH and kids:
        out.append(f"{where}: children below twelve levels")
    for i, kid in enumerate(kids):
        out += _node(f"{where}.children[{i}]", kid, depth + 1, False)
    return out


def shape_problems(doc: Any) -> list[str]:
    """Every way ``doc`` departs from the shape the spec gives, one line each."""
    out = _ordered("document", doc, TOP, exact=True)
    if out:
        return out
    if (doc["format"], doc["version"]) != ("asz.view", "1.0"):
        out.append(f"format/version {doc['format']}/{doc['version']}")
    if not isinstance(doc["sessions"], list) or not doc["sessions"] or not all(isinstance(s, str)
                                                                                for s in doc["sessions"]):
        out.append("sessions: not a list of session ids")
    out += _ordered("head", doc["head"], HEAD, exact=True)
    summary = doc["summary"]
    out += _ordered("summary", summary, SUMMARY, exact=True)
    if isinstance(summary, dict) and list(summary) == list(SUMMARY):
        if summary["state"] not in STATES:
            out.append(f"summary.state {summary['state']!r}")
        if (summary["state"] == "verified") != (summary["problems"] == []):
            out.append(f"summary: state {summary['state']} with problems {summary['problems']}")
        for key in SUMMARY[3:14]:
            if not isinstance(summary[key], int):
                out.append(f"summary.{key} is not a whole number")
        if summary["talks"] != len(doc["talks"]) or summary["rounds"] != len(doc["rounds"]):
            out.append("summary: talks or rounds differ from the lists")
        if summary["streams"] != len(doc["streams"]) or summary["segments"] != len(doc["segments"]):
            out.append("summary: streams or segments differ from the lists")
        if summary["changes"] != len(doc["workspace_changes"]):
            out.append("summary.changes is not the change records listed")
        for key in ("kinds", "relation_types", "quality", "withheld"):
            if not isinstance(summary[key], dict):
                out.append(f"summary.{key} is not a map")
    for i, r in enumerate(doc["rounds"]):
        out += _ordered(f"rounds[{i}]", r, ROUND, exact=True)
    sd = True
    for i, f in enumerate(doc["files"]):
        out += _ordered(f"files[{i}]", f, FILE, exact=True)
        if f.get("format") == "sd" and not sd:
            out.append(f"files[{i}]: a landed file after a round: one per .sd file, then one per round")
        sd = sd and f.get("format") == "sd"
        if f.get("format") == "sd" and not isinstance(f.get("seq"), int):
            out.append(f"files[{i}]: a landed file without seq")
        if f.get("format") == "sf" and (f.get("kind") != "round" or not isinstance(f.get("round"), int)):
            out.append(f"files[{i}]: a round file without round")
    if sum(f.get("format") == "sf" for f in doc["files"]) != len(doc["rounds"]):
        out.append("files: not one per round")
    for i, s in enumerate(doc["streams"]):
        out += _ordered(f"streams[{i}]", s, STREAM, exact=True)
        if s.get("role") not in ("main", "child"):
            out.append(f"streams[{i}]: role {s.get('role')!r}")
        for j, o in enumerate(s.get("opened_by", [])):
            out += _ordered(f"streams[{i}].opened_by[{j}]", o, ORIGIN, exact=True)
    for i, s in enumerate(doc["segments"]):
        out += _ordered(f"segments[{i}]", s, SEGMENT, exact=True)
    for i, t in enumerate(doc["talks"]):
        out += _node(f"talks[{i}]", t, 0, True)
    for i, n in enumerate(doc["loose"]):
        out += _node(f"loose[{i}]", n, 0, False)
    for i, r in enumerate(doc["relations"]):
        out += _ordered(f"relations[{i}]", r, RELATION, exact=False)
        if list(r)[:5] != list(RELATION[:5]):
            out.append(f"relations[{i}]: lacks one of {RELATION[:5]}")
    for i, u in enumerate(doc["unresolved"]):
        out += _ordered(f"unresolved[{i}]", u, UNRESOLVED, exact=True)
    for name in ("workspace_changes", "tool_executions"):
        for i, e in enumerate(doc[name]):
            if list(e)[:2] != list(SIDECAR_FIRST):
                out.append(f"{name}[{i}]: does not start with step and ref")
            out += _ref(f"{name}[{i}].ref", e.get("ref"))
    return out
