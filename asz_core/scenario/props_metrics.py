"""``metrics_match_the_plan``: the tokens the root reports are the tokens the plan spent.

Upstream derives a token metric from the landed transcripts and holds its points on the wire to
the plan. This project derives no metric family; what it reports of tokens is each call's
``usage`` in the ``asz.view`` document, and the ``usage`` command's count (the page's too), read by
:class:`~asz_core.page.catalogue.Catalogue`. Both must say what the plan says:

1. The plan's tokens: every call's usage once, whatever its fragments repeat, under the stream
   that made it, ``main`` or ``subagent`` for any child. A lost fragment is not read; a call whose
   every fragment is lost, or a lost stream's call, left no record; a replayed copy is the same
   call again. A count of zero is no count.
2. The document's: each ``llm.call``'s ``usage``, under the source of its stream.
3. The usage count's: each call the catalogue reads of the session, under its stream.
4. A call whose usage record was in a landed file the scenario lost (``lose``) has nothing left
   to report: its ``usage_at`` names a sequence the document's ``files`` no longer list. Its
   planned usage is set aside; a call whose file went without the scenario losing it is a problem.
5. Each is compared with the plan source by source and type by type (``in``, ``out``,
   ``cache_read``, ``cache_write``), and by the number of calls that reported usage.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Any

from asz_core.page.catalogue import Catalogue
from asz_core.root.layout import parse_file_name
from asz_core.scenario.keys_view import walk
from asz_core.scenario.plan import Plan
from asz_core.scenario.properties import Property, register
from asz_core.scenario.workspace import Workspace
from asz_core.view import build_view

__all__ = ["calls_lost_with_their_files", "document_tokens", "metrics_match_the_plan", "plan_tokens",
           "tally_differences", "usage_tokens"]

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
    out += tally_differences("the document", document_tokens(doc), want)
    out += tally_differences("the usage count", usage_tokens(ws), want)
    return out[:8]


register(Property("metrics_match_the_plan", metrics_match_the_plan))
