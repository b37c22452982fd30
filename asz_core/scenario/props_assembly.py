"""The properties that read the round chain: registered here, over :mod:`.properties`.

* ``fold_equals_parse``: the fold of every round equals one full assembly of the landed files
  through the head's ``through_seq`` (every node's kind, parent and attributes; the relations).
* ``immutable_rounds``: every round reads, links to the one before, continues its sequences,
  and is not writable.
* ``bundle``: without the state files the fold reads the same, and a parse writes nothing.
* ``header_matches_fold``: the head's header says what the fold holds.
* ``changes_leave_the_fold``, ``provider_bodies_leave_the_fold``: the same scenario built
  without its change records (or provider bodies), with the same ids, folds to the same nodes,
  parents and relations; an id built from a landed position is compared by the record it
  stands on, since other files landing in between shift positions.
* ``repack_keeps_structure``: the root repacked under the smallest budget into a new root holds
  every record's line byte for byte in each stream's order, verifies as the root does, folds to
  the same structure (positions named by record), and its provider bodies still rebuild.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from asz_core.assembly import model as m
from asz_core.assembly.assemble import assemble
from asz_core.assembly.chain import Chain
from asz_core.assembly.chaincheck import check_chain
from asz_core.assembly.evidence import landed_seqs, load_session
from asz_core.assembly.flow import Fold, RoundError
from asz_core.assembly.parse import DEFAULT_MAX_ROUND_BYTES, parse_session
from asz_core.repack import repack_root
from asz_core.repack.structure import fold_structure
from asz_core.retention.plan import session_files
from asz_core.scenario.model import Agent, Scenario, Step
from asz_core.scenario.properties import Property, register
from asz_core.scenario.props_records import provider_bodies_rebuild
from asz_core.scenario.workspace import Workspace, remove_tree
from asz_core.sessiondata.reader import open_file
from asz_core.verify import verify_root

__all__: list[str] = []


def _fold(root: Path, session: str) -> Fold:
    return Chain(root, session).fold()


def fold_equals_parse(ws: Workspace) -> list[str]:
    fold = _fold(ws.out, ws.session)
    files, _ = load_session(ws.out / ws.session, fold.through_seq)
    full = assemble(files, ws.session, ws.session, fold.through_seq)
    out = []
    if len(full.nodes) != len(fold.nodes):
        out.append(f"a full parse has {len(full.nodes)} nodes, the fold of {fold.rounds} rounds has {len(fold.nodes)}")
    for id, n in full.nodes.items():
        f = fold.nodes.get(id)
        if f is None:
            out.append(f"{id} is in a full parse but not in the fold")
        elif (f["kind"], f.get("parent"), f.get("attrs")) != (n["kind"], n.get("parent"), n.get("attrs")):
            out.append(f"{id} differs: parse {n['kind']} parent={n.get('parent')} attrs={n.get('attrs')}; "
                       f"fold {f['kind']} parent={f.get('parent')} attrs={f.get('attrs')}")
    if len(full.relations) != len(fold.relations):
        out.append(f"relations: a full parse has {len(full.relations)}, the fold has {len(fold.relations)}")
    return out[:8]


def immutable_rounds(ws: Workspace) -> list[str]:
    chain = Chain(ws.out, ws.session)
    out = [f"{p.kind}: {p.message}" for p in check_chain(ws.out, ws.session)
           if p.kind not in ("lost file", "input digest")]
    for rf in chain.files():
        if os.stat(rf.path).st_mode & 0o222:
            out.append(f"round {rf.number} is writable")
    if not chain.files():
        out.append("the chain has no round")
    return out


def bundle(ws: Workspace) -> list[str]:
    copy = ws.copy("bundle")
    try:
        before = _fold(copy, ws.session)
        for gone in (copy / ws.session / "index", copy / ws.session / "session.state",
                     copy / "_conversations" / ws.session / "conversation.state"):
            if gone.is_dir():
                shutil.rmtree(gone)
            elif gone.exists():
                gone.unlink()
        try:
            after = _fold(copy, ws.session)
        except (RoundError, OSError) as exc:
            return [f"the root cannot be read without its index and state: {exc}"]
        out = []
        if (after.rounds, after.digest, len(after.nodes)) != (before.rounds, before.digest, len(before.nodes)):
            out.append(f"the fold changed without index and state: round {before.rounds} became {after.rounds}")
        again = parse_session(copy, ws.session)
        if again.outcome or again.rounds:
            out.append(f"re-deriving from the landed files wrote {len(again.rounds)} round(s) {again.message}")
        return out
    finally:
        remove_tree(copy)


def header_matches_fold(ws: Workspace) -> list[str]:
    chain = Chain(ws.out, ws.session)
    fold = chain.fold()
    if fold.head is None:
        return ["the chain has no round"]
    h = fold.head
    attrs = (fold.nodes.get(f"session/{ws.session}") or {}).get("attrs") or {}
    out = []
    said = (h.get("title", ""), h.get("session_from_time", ""), h.get("session_through_time", ""))
    if said != (attrs.get("title", ""), attrs.get("from_time", ""), attrs.get("through_time", "")):
        out.append(f"header says {said}, the session node says "
                   f"{(attrs.get('title', ''), attrs.get('from_time', ''), attrs.get('through_time', ''))}")
    kinds: dict[str, int] = {}
    for n in fold.nodes.values():
        kinds[n["kind"]] = kinds.get(n["kind"], 0) + 1
    folded = {"talks": kinds.get("talk", 0), "streams": kinds.get("stream", 0),
              "segments": kinds.get("segment", 0), "llm_calls": kinds.get("llm.call", 0),
              "steps": sum(c for k, c in kinds.items() if k not in m.STRUCTURE_KINDS),
              "unresolved": sum(u["state"] == m.OPEN for u in fold.unresolved.values())}
    header = {k: h.get(k) for k in folded}
    if header != folded:
        out.append(f"header counts {header}; the fold has {folded}")
    return out


# ---- leaving the fold -----------------------------------------------------------------------

_POSITIONAL = re.compile(r"^([a-z]+)/(\d+)/(\d+)(:\d+)?$")
_AT = re.compile(r"at_(\d+)_(\d+)")


def _record_keys(root: Path, session: str) -> dict[tuple[int, int], str]:
    """Each landed position → the record it holds, named by file kind, stream and ``ord``."""
    import orjson

    out: dict[tuple[int, int], str] = {}
    for seq, path in landed_seqs(root / session).items():
        lines = path.read_bytes().split(b"\n")
        head = orjson.loads(lines[0])
        where = f"{head.get('kind')}:{head.get('stream') or head.get('batch') or ''}"
        for row, line in enumerate(lines[1:], start=1):
            if not line or line.startswith(b'{"t":"end"'):
                break
            out[(seq, row)] = f"{where}#{orjson.loads(line).get('ord')}"
    return out


def _canonical_fold(root: Path, session: str) -> tuple[set[tuple[str, str, str]], set[tuple[str, str, str]]]:
    keys = _record_keys(root, session)

    def canon(id: str) -> str:
        m_ = _POSITIONAL.match(id)
        if m_:
            return f"{m_.group(1)}/{keys.get((int(m_.group(2)), int(m_.group(3))), '?')}{m_.group(4) or ''}"
        return _AT.sub(lambda a: f"at_{keys.get((int(a.group(1)), int(a.group(2))), '?')}", id)

    fold = _fold(root, session)
    nodes = {(canon(n["id"]), n["kind"], canon(n.get("parent", ""))) for n in fold.nodes.values()}
    rels = {(r["type"], canon(r["from"]), canon(r["to"])) for r in fold.relations.values()}
    return nodes, rels


def _without(ws: Workspace, name: str, scenario: Scenario,
             drop: Callable[[Workspace], None] | None = None) -> list[str]:
    twin = Workspace(scenario, ws.expect, ws.format, ws.out.parent / f"{ws.out.name}-{name}", ws.at_ms,
                     ws.scale, ws.interval_ms)
    try:
        twin.build()
        if drop is not None:
            drop(twin)
        twin.collect()
        twin.parse()
        a_nodes, a_rels = _canonical_fold(ws.out, ws.session)
        b_nodes, b_rels = _canonical_fold(twin.out, twin.session)
        out = [f"node {n} only with them" for n in sorted(a_nodes - b_nodes)]
        out += [f"node {n} only without them" for n in sorted(b_nodes - a_nodes)]
        out += [f"relation {r} differs" for r in sorted(a_rels ^ b_rels)]
        return out[:8]
    finally:
        if twin.out.exists():
            remove_tree(twin.out)


def _strip_changes(steps: list[Step]) -> list[Step]:
    out = []
    for s in steps:
        call = s.call
        if call is not None and call.tool is not None and call.tool.changes:
            call = dataclasses.replace(call, tool=dataclasses.replace(call.tool, changes=[]))
        if call is not None and call.agent is not None:
            agent: Agent = call.agent
            call = dataclasses.replace(call, agent=dataclasses.replace(agent, steps=_strip_changes(agent.steps)))
        out.append(dataclasses.replace(s, call=call))
    return out


def changes_leave_the_fold(ws: Workspace) -> list[str]:
    twin = dataclasses.replace(ws.scenario, session=ws.session, steps=_strip_changes(ws.scenario.steps))
    return _without(ws, "nochanges", twin)


def _drop_bodies(twin: Workspace) -> None:
    """The same build, ids and all, with its provider bodies gone before anything reads them."""
    for gone in (twin.source / "provider-bodies", twin.out / twin.session / "provider_body"):
        if gone.is_dir():
            shutil.rmtree(gone)


def provider_bodies_leave_the_fold(ws: Workspace) -> list[str]:
    return _without(ws, "nobodies", ws.scenario, _drop_bodies)


# ---- a repack keeps the structure ----------------------------------------------------------

SMALLEST_BUDGET = 4096  #: the smallest ``max_delta_bytes`` a configuration accepts


def _record_lines(session_dir: Path) -> dict[str, list[bytes]]:
    """``<stream directory>:<kind>`` → every record's landed line, in seq order."""
    out: dict[str, list[bytes]] = {}
    files = session_files(session_dir)
    for seq in sorted(files):
        path = files[seq].get("sd") or files[seq]["sk"]
        with open_file(path) as reader:
            key = f"{path.parent.relative_to(session_dir).as_posix()}:{reader.header['kind']}"
            out.setdefault(key, []).extend(line for line, _ in reader.raw_records())
    return out


def _problems(root: Path, session: str) -> list[str]:
    return sorted(p.kind for r in verify_root(root, [session]) for p in r.problems)


def repack_keeps_structure(ws: Workspace) -> list[str]:
    dest = ws.out.parent / f"{ws.out.name}-repacked"
    if dest.exists():
        remove_tree(dest)
    try:
        rows = repack_root(ws.out, dest, lambda _: SMALLEST_BUDGET, time.time_ns(), [ws.session],
                           max_round_bytes=ws.expect.max_round_bytes or DEFAULT_MAX_ROUND_BYTES)
        out = [f"the repack refused the session: {r.refused}" for r in rows if r.refused]
        before, after = _record_lines(ws.out / ws.session), _record_lines(dest / ws.session)
        out += [f"{k}: {len(before.get(k, []))} records became {len(after.get(k, []))}, or their bytes changed"
                for k in sorted(before.keys() | after.keys()) if before.get(k) != after.get(k)]
        for path in (dest / ws.session).rglob("*.sd"):  # only a record over the budget makes a larger file
            if path.stat().st_size > SMALLEST_BUDGET and _count(path) > 1:
                out.append(f"{path.name} is {path.stat().st_size} bytes with more than one record")
        if (was := _problems(ws.out, ws.session)) != (now := _problems(dest, ws.session)):
            out.append(f"verify found {was or 'nothing'} in the root and {now or 'nothing'} in the repack")
        out += fold_structure(ws.out, ws.session).differences(fold_structure(dest, ws.session))
        if ws.scenario.provider_bodies:
            moved = dataclasses.replace(ws, out=dest)
            out += [f"after the repack, {p}" for p in provider_bodies_rebuild(moved)]
        return out[:12]
    finally:
        if dest.exists():
            remove_tree(dest)


def _count(path: Path) -> int:
    with open_file(path) as reader:
        return sum(1 for _ in reader.raw_records())


def _has_changes(ws: Workspace) -> bool:
    def walk(steps: list[Any]) -> bool:
        for s in steps:
            c = s.call
            if c is not None and ((c.tool is not None and c.tool.changes) or (c.agent and walk(c.agent.steps))):
                return True
        return False
    return walk(ws.scenario.steps)


register(Property("fold_equals_parse", fold_equals_parse))
register(Property("immutable_rounds", immutable_rounds))
register(Property("bundle", bundle))
register(Property("header_matches_fold", header_matches_fold))
register(Property("repack_keeps_structure", repack_keeps_structure))
register(Property("changes_leave_the_fold", changes_leave_the_fold, applies=_has_changes,
                  why_not="the scenario changes no file"))
register(Property("provider_bodies_leave_the_fold", provider_bodies_leave_the_fold,
                  applies=lambda ws: ws.scenario.provider_bodies, why_not="the scenario writes no provider bodies"))
