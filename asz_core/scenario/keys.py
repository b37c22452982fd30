"""The expectation keys of a checkpoint: one checker each, in a registry.

A checker is handed the workspace (built, collected, losses applied) and the expected value, and
returns what it found when that differs, else ``None``. Every key upstream's guide defines is
registered; the ones that read the fold (rounds, kinds, talks, relations, nodes, the view
document) need conversation assembly, which this project does not have yet, and are registered
as :func:`needs_assembly`: they fail by name, never pass. Assembly replaces them with
:func:`register`. A key nobody registered fails as unknown.

``lose`` is no comparison: it deletes landed files (:func:`apply_losses`) before the keys run.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from asz_core.root.layout import KIND_PREFIX
from asz_core.scenario.workspace import Workspace
from asz_core.verify import verify_root

__all__ = ["ASSEMBLY", "KEY_CHECKERS", "NotImplementedYet", "apply_losses", "needs_assembly", "register"]

ASSEMBLY = "not implemented: needs conversation assembly"


class NotImplementedYet(Exception):
    """A check this project cannot make yet; the message says what it needs."""


#: key → checker(workspace, expected) → what was found when it differs, else ``None``
KeyChecker = Callable[[Workspace, Any], "str | None"]
KEY_CHECKERS: dict[str, KeyChecker] = {}


def register(key: str, checker: KeyChecker) -> None:
    KEY_CHECKERS[key] = checker


def needs_assembly(ws: Workspace, expected: Any) -> str | None:
    raise NotImplementedYet(ASSEMBLY)


for _key in ("rounds", "written", "delta", "kinds", "talks_on", "runs_in", "relations", "unresolved",
             "unresolved_kinds", "nodes", "session", "view"):
    register(_key, needs_assembly)


def _verify(ws: Workspace, expected: Any) -> str | None:
    """``verify: {problems: N}``: what ``asz verify`` reports over the root. Once a file is lost,
    the count includes the chain's problems (a round naming the gone file), and the chain is
    assembly's: the streams' own problems are all this project can count then."""
    want = (expected or {}).get("problems") if isinstance(expected, dict) else None
    if want is None:
        return None
    problems = [p for r in verify_root(ws.out, [ws.session]) for p in r.problems]
    if len(problems) == want:
        return None
    if ws.lost:
        raise NotImplementedYet(f"{ASSEMBLY} (the chain's problems over the lost files; the streams "
                                f"report {len(problems)}: {', '.join(p.kind for p in problems)})")
    return f"{len(problems)} problem(s): {'; '.join(str(p) for p in problems) or 'none'}"


register("verify", _verify)


def apply_losses(ws: Workspace, losses: Any) -> list[str]:
    """Delete the landed files a checkpoint's ``lose`` names; returns what went wrong."""
    if not losses:
        return []
    if not isinstance(losses, list):
        return [f"lose: expected a list of {{stream|run, kind, nth}}, got {losses!r}"]
    names = ws.plan.names() if ws.plan else {}
    problems = []
    for item in losses:
        if not isinstance(item, dict):
            problems.append(f"lose: {item!r} is not a mapping")
            continue
        kind, nth = str(item.get("kind") or ""), int(item.get("nth") or 1)
        run = str(item.get("run") or "")
        stream = names.get(str(item.get("stream") or ""), str(item.get("stream") or ""))
        prefix = KIND_PREFIX.get(kind, kind)
        seen = 0
        for landed in ws.landed():
            if run and f"/runs/{run}/" not in "/" + landed.relpath:
                continue
            if not run and landed.header.get("stream") != stream:
                continue
            if prefix and not os.path.basename(landed.relpath).startswith(prefix + "-"):
                continue
            seen += 1
            if seen == nth:
                os.unlink(ws.out / landed.relpath)
                ws.lost.append(landed.relpath)
                break
        else:
            problems.append(f"lose: no landed file {nth} of kind {kind!r} on stream {stream!r} run {run!r}")
    return problems
