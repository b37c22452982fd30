"""``scenario check``: a scenario run as a test, format by format, checkpoint by checkpoint.

For each format, in order:

1. At each checkpoint the scenario names, then at its end (``final``): build through it into the
   format's directory, collect when the format needs it (a runtime's files go through its
   adapter, by the configuration the build wrote), delete what the checkpoint's ``lose`` names,
   then compare every key the checkpoint's expectations write (:data:`~.keys.KEY_CHECKERS`).
2. Then every property that is on and applies (:data:`~.properties.PROPERTIES`).

Then, with both formats, the cross-format properties. A key or property that cannot be checked
yet fails with its name and why; only what passes passes. Every failure reads
``scenario / checkpoint / key: expected X, got Y``. ``--at`` defaults to 2026-01-01T00:00:00Z,
so a check writes the same bytes every time; its directory is kept when ``--out`` names one,
else made where :mod:`.scratch` says (in memory when it can) and removed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asz_core.scenario import (  # noqa: F401 - they register
    keys_assembly,
    keys_view,
    props_assembly,
    props_executions,
    props_metrics,
    props_push,
    props_records,
    props_removal,
    props_source,
    props_view,
)
from asz_core.scenario.expect import load_expectations
from asz_core.scenario.keys import KEY_CHECKERS, NotImplementedYet, apply_losses
from asz_core.scenario.model import Scenario, ScenarioError, load_scenario
from asz_core.scenario.properties import PROPERTIES
from asz_core.scenario.receiver_pool import ReceiverPool
from asz_core.scenario.scratch import make_scratch
from asz_core.scenario.workspace import Workspace, remove_tree

__all__ = ["DEFAULT_AT_MS", "CheckOptions", "Outcome", "ScenarioReport", "check_scenario"]

DEFAULT_AT_MS = 1_767_225_600_000  #: 2026-01-01T00:00:00Z


@dataclass
class CheckOptions:
    formats: tuple[str, ...] = ("claude-code", "sd")
    out: Path | None = None
    at_ms: int | None = None
    scale: float = 1.0
    interval_ms: float = 0.0
    #: only these properties (``None``: all); a test's quick subset
    properties: frozenset[str] | None = None


@dataclass
class Outcome:
    """One key or property, in one format (``both`` for a cross-format property)."""

    format: str
    checkpoint: str          #: a checkpoint's name, or ``properties``
    key: str
    status: str              #: ``pass``, ``fail``, ``not implemented``, ``off``, ``n/a``
    expected: str = ""
    got: str = ""

    def line(self, scenario: str) -> str:
        where = f"{scenario} / {self.checkpoint} ({self.format}) / {self.key}"
        if self.status in ("fail", "not implemented"):
            return f"{where}: expected {self.expected}, got {self.got}"
        return f"{where}: {self.status}" + (f" ({self.got})" if self.got else "")


@dataclass
class ScenarioReport:
    name: str
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status in ("fail", "not implemented")]

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def passed(self) -> int:
        return sum(o.status == "pass" for o in self.outcomes)

    def status_of(self, key: str, fmt: str | None = None) -> set[str]:
        return {o.status for o in self.outcomes if o.key == key and (fmt is None or o.format == fmt)}

    def lines(self) -> list[str]:
        return [o.line(self.name) for o in self.outcomes]

    def to_json(self) -> dict[str, Any]:
        return {"scenario": self.name, "ok": self.ok,
                "outcomes": [{"format": o.format, "checkpoint": o.checkpoint, "key": o.key, "status": o.status,
                              "expected": o.expected, "got": o.got} for o in self.outcomes]}


def _show(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def check_scenario(path: Path | str, opts: CheckOptions) -> ScenarioReport:
    scenario = load_scenario(path)
    expect = load_expectations(scenario)
    report = ScenarioReport(scenario.name)
    base = opts.out / scenario.name if opts.out else make_scratch("asz-scenario-")
    if opts.out and base.exists():
        remove_tree(base)
    done: dict[str, Workspace] = {}
    receivers = ReceiverPool()
    try:
        for fmt in opts.formats:
            ws = Workspace(scenario, expect, fmt, base / fmt, opts.at_ms or DEFAULT_AT_MS, opts.scale, opts.interval_ms,
                           receivers=receivers)
            _checkpoints(ws, scenario, report)
            _properties(ws, opts, report)
            done[fmt] = ws
        if len(done) > 1:
            a, b = done[opts.formats[0]], done[opts.formats[1]]
            for prop in PROPERTIES.values():
                if prop.scope == "cross" and _wanted(prop.name, opts):
                    _run(report, "both", prop.name, lambda p=prop: p.check(a, b), expect.on(prop.name))
    finally:
        receivers.stop()
        if opts.out is None:
            remove_tree(base)
    return report


def _wanted(name: str, opts: CheckOptions) -> bool:
    return opts.properties is None or name in opts.properties


def _checkpoints(ws: Workspace, scenario: Scenario, report: ScenarioReport) -> None:
    for name in [*scenario.checkpoints(), "final"]:
        ws.build("" if name == "final" else name)
        summary = ws.collect()
        if summary is not None and (summary.totals.errors or summary.totals.conflicts):
            errors = "; ".join(str(e) for e in summary.errors) or f"{summary.totals.conflicts} conflict(s)"
            report.outcomes.append(Outcome(ws.format, name, "collect", "fail", "a clean pass", errors))
        parsed = ws.parse()
        if parsed.outcome:
            report.outcomes.append(Outcome(ws.format, name, "parse", "fail", "a round chain", parsed.message))
        want = ws.expect.checkpoints.get(name, {})
        for problem in apply_losses(ws, want.get("lose")):
            report.outcomes.append(Outcome(ws.format, name, "lose", "fail", _show(want.get("lose")), problem))
        for key, expected in want.items():
            if key == "lose":
                continue
            checker = KEY_CHECKERS.get(key)
            if checker is None:
                report.outcomes.append(Outcome(ws.format, name, key, "fail", _show(expected),
                                               "no such expectation key (a newer scenario format?)"))
                continue
            try:
                found = checker(ws, expected)
            except NotImplementedYet as exc:
                report.outcomes.append(Outcome(ws.format, name, key, "not implemented", _show(expected), str(exc)))
                continue
            status = "pass" if found is None else "fail"
            report.outcomes.append(Outcome(ws.format, name, key, status, _show(expected), found or ""))


def _properties(ws: Workspace, opts: CheckOptions, report: ScenarioReport) -> None:
    for prop in PROPERTIES.values():
        if prop.scope != "format" or not _wanted(prop.name, opts):
            continue
        if prop.runtime and not ws.runtime:
            continue
        if not prop.applies(ws):
            report.outcomes.append(Outcome(ws.format, "properties", prop.name, "n/a", got=prop.why_not))
            continue
        _run(report, ws.format, prop.name, lambda p=prop: p.check(ws), ws.expect.on(prop.name))


def _run(report: ScenarioReport, fmt: str, name: str, check: Any, on: bool) -> None:
    if not on:
        report.outcomes.append(Outcome(fmt, "properties", name, "off", got="set false by the expectations"))
        return
    try:
        problems = check()
    except NotImplementedYet as exc:
        report.outcomes.append(Outcome(fmt, "properties", name, "not implemented", "to hold", str(exc)))
        return
    except (OSError, ValueError) as exc:
        if isinstance(exc, ScenarioError):
            raise
        problems = [f"{name}: the check could not run: {exc}"]
    if problems:
        report.outcomes.append(Outcome(fmt, "properties", name, "fail", "to hold", " | ".join(problems)))
    else:
        report.outcomes.append(Outcome(fmt, "properties", name, "pass"))
