"""The expectation keys that read the round chain: registered here, over :mod:`.keys`.

Each reads the fold of the session's chain (:class:`~asz_core.assembly.flow.Fold`) as the
checkpoint's parse left it, and says what it found when that differs from what is expected.
A stream may be named by its scenario name, in a stream key and inside a node or talk id.
``view`` reads the document built from the rounds: :mod:`.keys_view`.
"""

from __future__ import annotations

import re
from typing import Any

from asz_core.assembly.chain import Chain
from asz_core.assembly.flow import Fold
from asz_core.scenario.keys import register
from asz_core.scenario.workspace import Workspace
from asz_core.sessiondata.times import parse_instant
from asz_core.verify import verify_root

__all__ = ["fold_of", "go_duration_ns"]

_UNIT_NS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000,
            "m": 60_000_000_000, "h": 3_600_000_000_000}
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")


def go_duration_ns(text: str) -> int:
    """A delta such as ``+11.1s`` or ``1m30s`` in nanoseconds; ``ValueError`` otherwise."""
    body = text.strip().lstrip("+")
    sign = -1 if body.startswith("-") else 1
    body = body.lstrip("-")
    if body == "0":
        return 0
    pos, total = 0, 0.0
    for m in _DURATION_PART.finditer(body):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNIT_NS[m.group(2)]
        pos = m.end()
    if pos != len(body) or not body:
        raise ValueError(f"{text!r} is not a delta such as +1.5s")
    return sign * round(total)


def fold_of(ws: Workspace) -> Fold:
    return Chain(ws.out, ws.session).fold()


def _resolve(ws: Workspace, text: str) -> str:
    names = ws.plan.names() if ws.plan else {}
    return "/".join(names.get(part, part) for part in str(text).split("/"))


def _counts(values: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out


def _compare(what: str, want: Any, got: dict[str, int], resolve: Any = None) -> str | None:
    if not isinstance(want, dict):
        return f"{what}: expected a mapping, got {want!r}"
    bad = [f"{k} is {got.get(resolve(k) if resolve else k, 0)}, want {v}" for k, v in want.items()
           if got.get(resolve(k) if resolve else k, 0) != v]
    return "; ".join(bad) or None


def _rounds(ws: Workspace, want: Any) -> str | None:
    have = len(Chain(ws.out, ws.session).files())
    return None if have == want else f"head is round {have}"


def _written(ws: Workspace, want: Any) -> str | None:
    wrote = bool(ws.last_parse and ws.last_parse.rounds)
    return None if wrote == bool(want) else f"the parse wrote a round: {wrote}"


def _delta(ws: Workspace, want: Any) -> str | None:
    if not want:
        return None
    chain = Chain(ws.out, ws.session)
    if not (ws.last_parse and ws.last_parse.rounds):
        return "no round was written"
    fold = chain.fold()
    head = chain.read(chain.files()[-1])
    written = len(head.nodes)
    if written >= len(fold.nodes) or head.header["from_seq"] <= 1:
        return (f"round {head.number} wrote {written} nodes against a fold of {len(fold.nodes)}, starting at "
                f"seq {head.header['from_seq']}; it is not a delta")
    return None


def _kinds(ws: Workspace, want: Any) -> str | None:
    return _compare("kinds", want, _counts(n["kind"] for n in fold_of(ws).nodes.values()))


def _talks_on(ws: Workspace, want: Any) -> str | None:
    talks = _counts(n.get("stream", "") for n in fold_of(ws).nodes.values() if n["kind"] == "talk")
    return _compare("talks_on", want, talks, lambda k: _resolve(ws, k))


def _runs_in(ws: Workspace, want: Any) -> str | None:
    runs = _counts(n.get("parent", "") for n in fold_of(ws).nodes.values() if n["kind"] == "run")
    return _compare("runs_in", want, runs, lambda k: _resolve(ws, k))


def _relations(ws: Workspace, want: Any) -> str | None:
    return _compare("relations", want, _counts(r["type"] for r in fold_of(ws).relations.values()))


def _unresolved(ws: Workspace, want: Any) -> str | None:
    states = _counts("resolved" if u["state"] == "resolved" else "open" for u in fold_of(ws).unresolved.values())
    return _compare("unresolved", want, states)


def _unresolved_kinds(ws: Workspace, want: Any) -> str | None:
    by_kind: dict[str, str] = {}
    for u in fold_of(ws).unresolved.values():
        if u["state"] == "resolved":
            by_kind.setdefault(u["kind"], "resolved")
        else:
            by_kind[u["kind"]] = "open"
    if not isinstance(want, dict):
        return f"expected a mapping, got {want!r}"
    bad = [f"{k} is {by_kind.get(k, 'none')}, want {v}" for k, v in want.items() if by_kind.get(k, "none") != v]
    return "; ".join(bad) or None


def _nodes(ws: Workspace, want: Any) -> str | None:
    fold = fold_of(ws)
    bad = []
    for id, spec in (want or {}).items():
        spec = spec or {}
        node = fold.nodes.get(_resolve(ws, id))
        if spec.get("absent"):
            if node is not None:
                bad.append(f"{id} is present, want absent")
            continue
        if node is None:
            bad.append(f"{id} is missing")
            continue
        if spec.get("kind") and node["kind"] != spec["kind"]:
            bad.append(f"{id} is a {node['kind']}, want {spec['kind']}")
        if spec.get("stream") and node.get("stream") != _resolve(ws, spec["stream"]):
            bad.append(f"{id} is on stream {node.get('stream')}, want {spec['stream']}")
        if "refs" in spec and len(node.get("refs") or []) != spec["refs"]:
            bad.append(f"{id} references {len(node.get('refs') or [])} records, want {spec['refs']}")
        if "revision" in spec and fold.revisions.get(node["id"]) != spec["revision"]:
            bad.append(f"{id} is at revision {fold.revisions.get(node['id'])}, want {spec['revision']}")
        attrs = node.get("attrs") or {}
        for k, v in (spec.get("attrs") or {}).items():
            if str(attrs.get(k)) != str(v):
                bad.append(f"{id} attrs.{k} is {attrs.get(k)}, want {v}")
    return "; ".join(bad) or None


def _session(ws: Workspace, want: Any) -> str | None:
    node = fold_of(ws).nodes.get(f"session/{ws.session}") or {}
    attrs = node.get("attrs") or {}
    bad = []
    for key, attr in (("from", "from_time"), ("to", "through_time")):
        if not (want or {}).get(key):
            continue
        expected = ws.at_ms * 1_000_000 + go_duration_ns(str(want[key]))
        if parse_instant(attrs.get(attr)) != expected:
            bad.append(f"session.{key} is {attrs.get(attr)}, want {want[key]} from the base time")
    return "; ".join(bad) or None


def _verify(ws: Workspace, expected: Any) -> str | None:
    """``verify: {problems: N}``: the streams' problems and the chain's together."""
    want = (expected or {}).get("problems") if isinstance(expected, dict) else None
    if want is None:
        return None
    problems = [p for r in verify_root(ws.out, [ws.session]) for p in r.problems]
    if len(problems) == want:
        return None
    return f"{len(problems)} problem(s): {'; '.join(str(p) for p in problems) or 'none'}"


for _key, _checker in (("rounds", _rounds), ("written", _written), ("delta", _delta), ("kinds", _kinds),
                       ("talks_on", _talks_on), ("runs_in", _runs_in), ("relations", _relations),
                       ("unresolved", _unresolved), ("unresolved_kinds", _unresolved_kinds),
                       ("nodes", _nodes), ("session", _session), ("verify", _verify)):
    register(_key, _checker)
