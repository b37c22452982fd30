"""``NAME.expect.yaml``: what a scenario's root must hold at each checkpoint, and the properties.

The file (upstream's ``guides/scenario.md``, "Check"): ``checkpoints`` (one block per checkpoint
the scenario names, ``final`` for its end), ``properties`` (all on unless set false),
``collect.max_delta_bytes``, ``parse.max_round_bytes`` and ``push.kinds``. A missing file is an
empty one: every property on, nothing else checked. A checkpoint the scenario does not name, or
a property no one knows, is refused: it would otherwise check nothing and pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from asz_core.scenario.model import Scenario, ScenarioError

__all__ = ["KNOWN_PROPERTIES", "Expectations", "expect_path", "load_expectations"]

#: every property upstream's guide names, in the order a check runs them
KNOWN_PROPERTIES = (
    "reproducible", "fold_equals_parse", "immutable_rounds", "header_matches_fold", "records_well_formed",
    "repack_keeps_structure", "recollect_idempotent", "every_line_a_record", "parts_keep_source_bytes",
    "discovery_ignores_noise", "pruned_sources_gone", "push_follows_the_wire", "removed_after_sent",
    "view_covers_the_session", "changes_leave_the_fold", "provider_bodies_leave_the_fold",
    "provider_bodies_rebuild", "metrics_match_the_plan", "executions_leave_the_fold", "bundle",
    "cross_format", "records_match",
)


@dataclass
class Expectations:
    path: Path
    checkpoints: dict[str, dict[str, Any]] = field(default_factory=dict)
    properties: dict[str, bool] = field(default_factory=dict)
    max_delta_bytes: int = 0
    max_round_bytes: int = 0
    push_kinds: list[str] = field(default_factory=list)

    def on(self, prop: str) -> bool:
        return self.properties.get(prop, True)


def expect_path(scenario_path: Path) -> Path:
    name = scenario_path.name
    stem = name[: -len(scenario_path.suffix)] if scenario_path.suffix else name
    return scenario_path.with_name(stem + ".expect.yaml")


def load_expectations(scenario: Scenario) -> Expectations:
    path = expect_path(scenario.path)
    out = Expectations(path)
    if not path.exists():
        return out
    try:
        raw = yaml.safe_load(path.read_text("utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ScenarioError(f"{path}: cannot be read as YAML: {exc}") from None
    if not isinstance(raw, dict):
        raise ScenarioError(f"{path}: expected a mapping")
    unknown = set(raw) - {"checkpoints", "properties", "collect", "parse", "push"}
    if unknown:
        raise ScenarioError(f"{path}: unknown key(s) {', '.join(sorted(unknown))}")
    named = {*scenario.checkpoints(), "final"}
    for name, block in (raw.get("checkpoints") or {}).items():
        if name not in named:
            raise ScenarioError(f"{path}: checkpoints.{name}: the scenario names no such checkpoint "
                                f"(it names {', '.join(sorted(named))})")
        if block is not None and not isinstance(block, dict):
            raise ScenarioError(f"{path}: checkpoints.{name}: expected a mapping")
        out.checkpoints[str(name)] = dict(block or {})
    for name, value in (raw.get("properties") or {}).items():
        if name not in KNOWN_PROPERTIES:
            raise ScenarioError(f"{path}: properties.{name}: no such property")
        if not isinstance(value, bool):
            raise ScenarioError(f"{path}: properties.{name}: expected true or false")
        out.properties[name] = value
    out.max_delta_bytes = int((raw.get("collect") or {}).get("max_delta_bytes") or 0)
    out.max_round_bytes = int((raw.get("parse") or {}).get("max_round_bytes") or 0)
    out.push_kinds = [str(k) for k in (raw.get("push") or {}).get("kinds") or []]
    return out
