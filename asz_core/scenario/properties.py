"""The properties every scenario's root must have: one check each, in a registry.

A property runs at the end of a format's checkpoints (``scope="format"``; ``runtime=True`` for
a runtime format's only), or once over both formats (``scope="cross"``). It returns its
problems, each one line; none is a pass. A scenario's expectation file may set one false, and
a property may not apply (``applies``: provider bodies when the scenario writes none).

Every property upstream's guide names is registered. The ones that read rounds, the fold or the
view document need conversation assembly and are registered as :func:`needs_assembly`, and fail
by name until they are replaced with :func:`register`. The implemented ones live in
:mod:`.props_source`, :mod:`.props_records`, :mod:`.props_push`, :mod:`.props_assembly`,
:mod:`.props_view`, :mod:`.props_metrics`, :mod:`.props_executions` and :mod:`.props_removal`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from asz_core.scenario.keys import ASSEMBLY, NotImplementedYet
from asz_core.scenario.workspace import Workspace

__all__ = ["PROPERTIES", "Property", "needs_assembly", "register"]

#: a format's property: problems over one workspace; a cross property: over the two
FormatCheck = Callable[[Workspace], list[str]]
CrossCheck = Callable[[Workspace, Workspace], list[str]]


@dataclass(frozen=True)
class Property:
    name: str
    check: Callable[..., list[str]]
    scope: str = "format"          #: ``format`` or ``cross``
    runtime: bool = False          #: runtime formats only
    applies: Callable[[Workspace], bool] = lambda ws: True
    why_not: str = ""              #: said when it does not apply


PROPERTIES: dict[str, Property] = {}


def register(prop: Property) -> None:
    PROPERTIES[prop.name] = prop


def needs_assembly(*_workspaces: Workspace) -> list[str]:
    raise NotImplementedYet(ASSEMBLY)


def _has_changes(ws: Workspace) -> bool:
    def walk(steps: list) -> bool:  # type: ignore[type-arg]
        for s in steps:
            c = s.call
            if c is None:
                continue
            if c.tool is not None and c.tool.changes:
                return True
            if c.agent is not None and walk(c.agent.steps):
                return True
        return False
    return walk(ws.scenario.steps)


for _name in ("fold_equals_parse", "immutable_rounds", "header_matches_fold", "repack_keeps_structure",
              "view_covers_the_session", "metrics_match_the_plan", "executions_leave_the_fold", "bundle"):
    register(Property(_name, needs_assembly))
register(Property("changes_leave_the_fold", needs_assembly, applies=_has_changes,
                  why_not="the scenario changes no file"))
register(Property("provider_bodies_leave_the_fold", needs_assembly,
                  applies=lambda ws: ws.scenario.provider_bodies, why_not="the scenario writes no provider bodies"))
