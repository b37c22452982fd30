"""``view_covers_the_session``: the ``asz.view`` document holds the whole session.

At the end of every scenario (upstream's ``guides/scenario.md``, "Check"), the document built from
the head must hold:

1. the state and the problems ``verify`` reports of the chain, and every round on disk, each
   ``verified`` as ``verify`` finds it, with ``head`` the fold's;
2. every landed file, with its sequence and its digest as on disk, and one entry per round file;
3. every talk, run and step of the fold in a tree, under a talk or in ``loose``, and the talks
   the fold holds, as many as the summary says;
4. every change record joined to a step listed on that step, and nothing more;
5. provider bodies on calls only, never on a synthetic one, the request first, each naming a
   landed ``provider_body`` record of that role; the summary counting the landed bodies and the
   calls that list a request;
6. the session's own range in the summary; and the same document when built again.
"""

from __future__ import annotations

import hashlib
from typing import Any

from asz_core.assembly.chain import Chain
from asz_core.assembly.chaincheck import check_chain
from asz_core.providerbody.manifest import ManifestError
from asz_core.providerbody.reader import provider_body_files
from asz_core.providerbody.store import manifest_of
from asz_core.root.storage import landed_files
from asz_core.scenario.properties import Property, register
from asz_core.scenario.workspace import Workspace
from asz_core.sessiondata.errors import SessionDataError
from asz_core.sessiondata.reader import open_file
from asz_core.sessiondata.times import parse_instant
from asz_core.view import build_view
from asz_core.view.walk import walk

__all__ = ["view_covers_the_session"]

_NOT_IN_TREES = frozenset({"conversation", "session", "stream", "epoch", "segment"})


def _bodies(ws: Workspace) -> dict[tuple[int, int], str]:
    """The role of every landed provider body, by ``(seq, row)``; a body landed twice counts once."""
    out: dict[tuple[int, int], str] = {}
    seen: set[str] = set()
    for seq, path in provider_body_files(ws.out / ws.session):
        try:
            with open_file(path) as landed:
                for row, record in enumerate(landed, start=1):
                    try:
                        manifest = manifest_of(record)
                    except (ManifestError, ValueError):
                        continue
                    if record.id in seen:
                        continue
                    seen.add(str(record.id))
                    out[(seq, row)] = manifest.role
        except SessionDataError:
            continue
    return out


def view_covers_the_session(ws: Workspace) -> list[str]:
    doc = build_view(ws.out, ws.session)
    out: list[str] = []
    summary = doc["summary"]
    chain = Chain(ws.out, ws.session)
    fold = chain.fold()
    problems = check_chain(ws.out, ws.session)
    if len(summary["problems"]) != len(problems):
        out.append(f"the document lists {len(summary['problems'])} problem(s), verify {len(problems)}: "
                   f"{'; '.join(p.message for p in problems)}")
    if (summary["state"] == "verified") != (not problems):
        out.append(f"state is {summary['state']}, verify finds {len(problems)} problem(s)")
    files = chain.files()
    if len(doc["rounds"]) != len(files) or doc["head"] != {"round": fold.rounds, "digest": fold.digest}:
        out.append(f"{len(doc['rounds'])} rounds in the document, {len(files)} on disk; head {doc['head']}, "
                   f"the fold {fold.rounds}/{fold.digest[:12]}")
    bad_rounds = {p.round for p in problems}
    for r in doc["rounds"]:
        if r["verified"] and r["round"] in bad_rounds:
            out.append(f"round {r['round']} says verified, and verify finds a problem in it")

    listed = {f["file"]: f for f in doc["files"]}
    landed = list(landed_files(ws.out / ws.session))
    for seq, path in landed:
        rel = path.relative_to(ws.out).as_posix()
        entry = listed.get(rel)
        if entry is None:
            out.append(f"landed file {rel} is not in the document")
        elif entry["seq"] != seq or entry["digest"] != hashlib.sha256(path.read_bytes()).hexdigest():
            out.append(f"landed file {rel}: digest or sequence differ from disk")
    if len(doc["files"]) != len(landed) + len(files):
        out.append(f"{len(doc['files'])} files in the document, {len(landed)} landed and {len(files)} rounds on disk")

    in_trees = {n["id"] for n in walk(doc)}
    for id, node in fold.nodes.items():
        if node["kind"] not in _NOT_IN_TREES and id not in in_trees:
            out.append(f"{id} ({node['kind']}) is in the fold but in no tree of the document")
    talks = sum(1 for n in fold.nodes.values() if n["kind"] == "talk")
    if len(doc["talks"]) != talks or summary["talks"] != talks:
        out.append(f"{len(doc['talks'])} talks in the document, {talks} in the fold, summary says {summary['talks']}")

    on_step = {n["id"]: n["changes"] for n in walk(doc) if n.get("changes")}
    joined: dict[str, list[str]] = {}
    for change in doc["workspace_changes"]:
        if change["step"]:
            joined.setdefault(change["step"], []).append(change["id"])
    if on_step != joined:
        out.append(f"steps carry changes {on_step}, the document joins {joined}")

    bodies = _bodies(ws)
    prompts = 0
    for node in walk(doc):
        listed_bodies: list[dict[str, Any]] = node.get("provider_bodies", [])
        if listed_bodies and node["kind"] != "llm.call":
            out.append(f"{node['id']} ({node['kind']}) lists provider bodies and is no call")
        if listed_bodies and any(c["kind"] == "message.synthetic" for c in node.get("children", [])):
            out.append(f"{node['id']} is a synthetic call and lists provider bodies")
        for i, body in enumerate(listed_bodies):
            prompts += body["role"] == "request"
            role = bodies.get((body["ref"]["seq"], body["ref"]["row"]))
            if role is None:
                out.append(f"call {node['id']} lists {body['ref']}, which is no landed provider body")
            elif role != body["role"]:
                out.append(f"call {node['id']} lists a {body['role']} at {body['ref']}, and the record is a {role}")
            elif i > 0 and body["role"] == "request":
                out.append(f"call {node['id']} lists its request after another body")
    if summary["captured_prompts"] != prompts or summary["provider_bodies"] != len(bodies):
        out.append(f"summary.provider_bodies is {summary['provider_bodies']} and captured_prompts "
                   f"{summary['captured_prompts']}, the root holds {len(bodies)} bodies and {prompts} calls "
                   f"list a request")

    attrs = (fold.nodes.get(f"session/{ws.session}") or {}).get("attrs") or {}
    want = tuple((parse_instant(attrs.get(k)) or 0) // 1_000_000 for k in ("from_time", "through_time"))
    if (summary["from"], summary["to"]) != want:
        out.append(f"summary range {summary['from']}..{summary['to']}, the session node says "
                   f"{attrs.get('from_time')}..{attrs.get('through_time')}")
    if build_view(ws.out, ws.session) != doc:
        out.append("two builds of the same fold differ")
    return out[:8]


register(Property("view_covers_the_session", view_covers_the_session))
