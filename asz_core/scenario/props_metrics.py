"""``metrics_match_the_plan``: the tokens that reach a receiver are the tokens the plan spent.

As upstream's runner does, the points are held on the wire: a copy of the root, its spool derived
(:mod:`asz_core.metrics`: a claude-code build's pass derived it already; an sd build's landed
files are derived here, as a pass would), is pushed with ``export.otlp.metrics`` alone to a
loopback receiver, and what arrives is compared with the plan. What the root reports of tokens
otherwise, each call's ``usage`` in the ``asz.view`` document and the ``usage`` command's count
(the page's too, read by :class:`~asz_core.page.catalogue.Catalogue`), must say the same:

1. The plan's tokens: every call's usage once, whatever its fragments repeat, under the stream
   that made it, ``main`` or ``subagent`` for any child. A lost fragment is not read; a call whose
   every fragment is lost, or a lost stream's call, left no record; a replayed copy is the same
   call again. A count of zero is no count.
2. The wire's: every ``agent.token.usage`` point of the session, under its ``query_source``, by
   its ``type`` (``input``, ``output``, ``cacheRead``, ``cacheCreation``), a monotonic delta sum in
   ``tokens``; no series has two points whose windows overlap, which a call counted twice in
   one minute would need. The wire has no call count: a call appears only in its sums.
3. The document's: each ``llm.call``'s ``usage``, under the source of its stream.
4. The usage count's: each call the catalogue reads of the session, under its stream.
5. A call whose usage record was in a landed file the scenario lost (``lose``) has nothing left
   to report: its ``usage_at`` names a sequence the document's ``files`` no longer list. Its
   planned usage is set aside; a call whose file went without the scenario losing it is a problem.
   On the wire it is set aside only when no pass derived the file before it was lost: once
   derived, its points are in the spool, whatever becomes of the file.
6. Each is compared with the plan source by source and type by type (``in``, ``out``,
   ``cache_read``, ``cache_write``), and the document and the count by the number of calls that
   reported usage too.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Any

from asz_core.page.catalogue import Catalogue
from asz_core.root.layout import parse_file_name
from asz_core.scenario.plan import Plan
from asz_core.scenario.properties import Property, register
from asz_core.scenario.receiver import Point
from asz_core.scenario.workspace import Workspace, remove_tree
from asz_core.view import build_view
from asz_core.view.walk import walk

__all__ = ["calls_lost_with_their_files", "document_tokens", "metrics_match_the_plan", "plan_tokens",
           "tally_differences", "usage_tokens", "wire_tokens"]

MAIN, SUBAGENT = "main", "subagent"
TYPES = ("in", "out", "cache_read", "cache_write")
CALLS = "calls"  #: the type under which a tally counts the calls that reported any usage

#: ``<source>/<type>`` → tokens, and ``<source>/calls`` → calls
Tally = dict[str, int]


def _source(stream: str) -> str:
    return MAIN if stream == MAIN else SUBAGENT


def _add(tally: Tally, stream: str, counts: Iterable[tuple[str, int]]) -> None:
    counted = False
    for kind, n in counts:
        if n > 0:
            key = f"{_source(stream)}/{kind}"
            tally[key] = tally.get(key, 0) + n
            counted = True
    if counted:
        key = f"{_source(stream)}/{CALLS}"
        tally[key] = tally.get(key, 0) + 1


def plan_tokens(plan: Plan, set_aside: frozenset[tuple[str, str]] = frozenset()) -> Tally:
    """Rule 1: what the plan says every call spent, each call once; none of the ``(stream, call)``
    in ``set_aside``."""
    gone = plan.lost_streams()
    seen: set[tuple[str, str]] = set(set_aside)
    out: Tally = {}
    for e in plan.events:
        if e.kind != "fragment" or e.lost or e.stream in gone or (e.stream, e.call) in seen:
            continue
        seen.add((e.stream, e.call))
        _add(out, e.stream, zip(TYPES, e.usage, strict=True))
    return out


def document_tokens(doc: dict[str, Any]) -> Tally:
    """Rule 2: the usage every call of the document carries."""
    out: Tally = {}
    for node in walk(doc):
        if node["kind"] == "llm.call":
            usage = node.get("usage") or {}
            _add(out, str(node.get("stream", "")), ((k, int(usage.get(k, 0))) for k in TYPES))
    return out


def calls_lost_with_their_files(doc: dict[str, Any]) -> dict[tuple[str, str], int]:
    """Rule 4: ``(stream, call)`` → the sequence of its usage record, for every call whose usage
    record is in no landed file."""
    landed = {f["seq"] for f in doc["files"] if f.get("seq") is not None}
    out = {}
    for node in walk(doc):
        at = (node.get("attrs") or {}).get("usage_at")
        if node["kind"] == "llm.call" and isinstance(at, dict) and at.get("seq") not in landed:
            out[(str(node.get("stream", "")), str(node["id"]).removeprefix("call/"))] = int(at.get("seq") or 0)
    return out


#: the wire's token types, as the runtime's exporter spells them, → the plan's
WIRE_TYPES = {"input": "in", "output": "out", "cacheRead": "cache_read", "cacheCreation": "cache_write"}


def wire_tokens(ws: Workspace) -> tuple[Tally, list[str]]:
    """Rule 2: the session's points as a receiver gets them, and what is wrong with their form."""
    copy = ws.copy("metrics-wire")
    try:
        from asz_core.metrics.derive import derive_root

        derive_root(copy, lookback_s=0)  # nothing new after a pass that derived already
        with ws.receiver("grpc") as rx:
            config = copy / "asz.yaml"
            with config.open("a", encoding="utf-8") as f:
                f.write(f"export:\n  otlp:\n    protocol: grpc\n    endpoint: {rx.endpoint}\n"
                        f"    logs: false\n    metrics: true\n    timeout: 10s\n")
            code, said = ws.command("push", "--config", str(config), "--json")
            points = [p for p in rx.points if p.attributes.get("session.id") == ws.session]
    finally:
        remove_tree(copy)
    problems = [f"the metrics push failed: {said.strip()[:300]}"] if code != 0 else []
    problems += _form(points)
    out: Tally = {}
    for p in points:
        kind = WIRE_TYPES.get(str(p.attributes.get("type")))
        source = str(p.attributes.get("query_source"))
        if kind is None or source not in (MAIN, SUBAGENT):
            problems.append(f"a point says type {p.attributes.get('type')!r}, query_source {source!r}")
            continue
        if p.value:
            key = f"{source}/{kind}"
            out[key] = out.get(key, 0) + int(p.value)
    return out, problems


def _derived_seqs(ws: Workspace) -> set[int]:
    """Rule 5 on the wire: the sequences of the session's files a pass derived before the scenario
    lost them; their points are in the spool already, so their calls are not set aside there."""
    from asz_core.metrics.spool import SPOOL_DIR
    from asz_core.metrics.state import MetricsState, MetricsStateError

    try:
        derived = MetricsState.load(ws.out / SPOOL_DIR).derived
    except MetricsStateError:
        return set()
    names = (parse_file_name(PurePosixPath(p).name) for p in derived if p.startswith(f"{ws.session}/"))
    return {name.seq for name in names if name is not None}


def _form(points: list[Point]) -> list[str]:
    """Rule 2's form: the metric, its unit and kind, and windows that never overlap in a series."""
    problems = [f"a point of {p.metric} in {p.unit!r}, temporality {p.temporality}, monotonic {p.monotonic}"
                for p in points if (p.metric, p.unit, p.temporality, p.monotonic)
                != ("agent.token.usage", "tokens", 1, True)]
    series: dict[tuple[tuple[str, Any], ...], list[tuple[int, int]]] = {}
    for p in points:
        key = tuple(sorted(p.attributes.items()))
        series.setdefault(key, []).append((p.start_unix_nano, p.time_unix_nano))
    for key, windows in series.items():
        windows.sort()
        if any(b[0] < a[1] for a, b in itertools.pairwise(windows)):
            problems.append(f"two points of the series {dict(key)} overlap")
    return problems


def usage_tokens(ws: Workspace) -> Tally:
    """Rule 3: the session's calls as the ``usage`` command counts them."""
    out: Tally = {}
    for digest in Catalogue(ws.out).digests():
        if digest.id == ws.session:
            for c in digest.calls:
                _add(out, c.stream, zip(TYPES, (c.in_, c.out, c.cache_read, c.cache_write), strict=True))
    return out


def tally_differences(what: str, got: Tally, want: Tally) -> list[str]:
    """Rule 5: one line per count that differs from the plan's."""
    return [f"{what}: {key} is {got.get(key, 0)}, the plan says {want.get(key, 0)}"
            for key in sorted(got.keys() | want.keys()) if got.get(key, 0) != want.get(key, 0)]


def metrics_match_the_plan(ws: Workspace) -> list[str]:
    assert ws.plan is not None, "nothing built yet"
    doc = build_view(ws.out, ws.session)
    gone = calls_lost_with_their_files(doc)
    lost_seqs = {name.seq for name in map(parse_file_name, (PurePosixPath(p).name for p in ws.lost)) if name}
    out = [f"the usage of {call} is in seq {seq}, which is in no landed file, and the scenario did not lose it"
           for (_, call), seq in sorted(gone.items()) if seq not in lost_seqs]
    want = plan_tokens(ws.plan, frozenset(gone))
    derived = _derived_seqs(ws)  # before the copy derives what is left
    wire, malformed = wire_tokens(ws)
    out += malformed
    on_wire = plan_tokens(ws.plan, frozenset(k for k, seq in gone.items() if seq not in derived))
    out += tally_differences("the wire", wire, {k: v for k, v in on_wire.items() if not k.endswith(f"/{CALLS}")})
    out += tally_differences("the document", document_tokens(doc), want)
    out += tally_differences("the usage count", usage_tokens(ws), want)
    return out[:8]


register(Property("metrics_match_the_plan", metrics_match_the_plan))
