"""``removed_after_sent``: a marked session goes once all of it is sent, and not before.

Each case works on a full copy of the finished root (root, source, configuration) and runs a
pipeline's pass over it as ``run`` does: collect, send to a loopback receiver (gRPC), remove,
then parse. For a ``claude-code`` build, in this order:

1. No receiver named: nothing is sent, and nothing is removed.
2. The receiver refuses every request: nothing is removed.
3. The receiver takes every request but rejects records (a partial success): nothing is removed,
   then or at the pass after.
4. ``push.state`` names another receiver besides this one: nothing is removed.
5. The marker is gone: the session is sent, and nothing is removed.
6. After a clean push, ``immediately`` removes the whole session in that pass: the files the
   build wrote for it, its landed files, its chain, its lines in ``push.state`` and
   ``_provider/seen.state``, and its marker,
   leaving ``_removed/`` empty and the noise beside it. Then a pass and a parse land, send and
   write nothing, and leave no session or chain directory behind.
7. A retention of 24 hours keeps the sent session one second before its last record is 24 hours
   old, and removes it at that moment.

An ``sd`` build is never marked: it has no ``_scenario/`` and no marker, and a clean push
removes nothing of it.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Callable
from pathlib import Path

from asz_core.context import PassSummary, QuietReporter
from asz_core.removal.marker import MARKER_DIR, marker_path
from asz_core.removal.scenario_root import REMOVED_DIR, SCENARIO_DIR
from asz_core.scenario.properties import Property, register
from asz_core.scenario.receiver import GrpcReceiver
from asz_core.scenario.workspace import Workspace, remove_tree
from asz_core.sessiondata.times import parse_instant

__all__: list[str] = []

_S = 1_000_000_000
_DAY = 24 * 3600 * _S


def removed_after_sent(ws: Workspace) -> list[str]:
    if not ws.runtime:
        return _never_marked(ws)
    problems: list[str] = []
    for name, case in _CASES:
        # every case's copy in one place, each removed before the next is made: the cases that
        # push then read one asz.yaml, path and bytes, validated once (the configuration cache)
        copy = ws.copy("removal")
        try:
            problems.extend(f"removed_after_sent ({name}): {p}" for p in case(ws, copy))
        finally:
            remove_tree(copy)
    return problems


def _last_record_ns(ws: Workspace) -> int:
    times = [t for f in ws.landed() for _line, r in f.records if r.time and (t := parse_instant(r.time)) is not None]
    return max(times)


def _pass(ws: Workspace, copy: Path, rx: GrpcReceiver | None = None, at_ns: int | None = None) -> PassSummary:
    """One pass over the copy as ``run`` makes it, then its parse."""
    from asz_core.config import load_config
    from asz_core.pipeline import run_pass

    config = copy / "asz.yaml"
    if rx is not None and "\nexport:\n" not in config.read_text("utf-8"):
        with config.open("a", encoding="utf-8") as f:
            f.write(f"export:\n  otlp:\n    protocol: grpc\n    endpoint: {rx.endpoint}\n    timeout: 10s\n")
    moment = at_ns if at_ns is not None else _last_record_ns(ws) + 3600 * _S
    with contextlib.redirect_stderr(io.StringIO()):  # the push's and the removal's lines: a check prints its own
        summary = run_pass(ws.host, load_config(ws.host, str(config)), clock=lambda: moment,
                           reporter=QuietReporter())
    ws.parse(copy)
    return summary


def _errors(summary: PassSummary) -> list[str]:
    return [f"the pass failed: {e}" for e in summary.errors]


def _kept_whole(ws: Workspace, copy: Path, *, marker: bool = True) -> list[str]:
    """Everything of the session is still there."""
    problems = []
    if not (copy / ws.session).is_dir():
        problems.append("the session's landed files were removed")
    if not (copy / "_conversations" / ws.session).is_dir():
        problems.append("the session's chain was removed")
    if marker and not marker_path(copy / "_source", ws.session).is_file():
        problems.append("the session's marker was removed")
    built = _built_files(ws)
    gone = [p for p in built if not (copy / "_source" / p).is_file()]
    if gone:
        problems.append(f"{len(gone)} file(s) the build wrote were removed, such as {gone[0]}")
    return problems


def _built_files(ws: Workspace) -> list[str]:
    data = json.loads(marker_path(ws.source, ws.session).read_bytes())
    return [f["path"] for f in data["files"]]


def _no_push(ws: Workspace, copy: Path) -> list[str]:
    _pass(ws, copy)
    return _kept_whole(ws, copy)


def _refused(ws: Workspace, copy: Path) -> list[str]:
    with ws.receiver("grpc", default="fail") as rx:
        assert isinstance(rx, GrpcReceiver)
        _pass(ws, copy, rx)
        problems = [] if not rx.records else [f"the refusing receiver took {len(rx.records)} record(s)"]
    return problems + _kept_whole(ws, copy)


def _partial(ws: Workspace, copy: Path) -> list[str]:
    with ws.receiver("grpc", default="partial") as rx:
        assert isinstance(rx, GrpcReceiver)
        _pass(ws, copy, rx)
        problems = [] if rx.records else ["the receiver took nothing"]
        problems += _kept_whole(ws, copy)
        rx.default = "ok"
        _pass(ws, copy, rx)
    return problems + [f"at the pass after: {p}" for p in _kept_whole(ws, copy)]


def _other_receiver(ws: Workspace, copy: Path) -> list[str]:
    (copy / "push.state").write_text("schema 1\nupdated_at 2026-01-01T00:00:00Z\nendpoint grpc://127.0.0.1:9\n",
                                     encoding="utf-8")
    with ws.receiver("grpc") as rx:
        assert isinstance(rx, GrpcReceiver)
        _pass(ws, copy, rx)
        problems = [] if rx.records else ["nothing was sent"]
    return problems + _kept_whole(ws, copy)


def _marker_gone(ws: Workspace, copy: Path) -> list[str]:
    marker_path(copy / "_source", ws.session).unlink()
    with ws.receiver("grpc") as rx:
        assert isinstance(rx, GrpcReceiver)
        _pass(ws, copy, rx)
        problems = [] if rx.records else ["nothing was sent"]
    return problems + _kept_whole(ws, copy, marker=False)


def _removed_whole(ws: Workspace, copy: Path) -> list[str]:
    problems = []
    left = [p for p in _built_files(ws) if (copy / "_source" / p).exists()]
    if left:
        problems.append(f"{len(left)} file(s) the build wrote are still there, such as {left[0]}")
    for what, path in (("landed files", copy / ws.session), ("chain", copy / "_conversations" / ws.session),
                       ("marker", marker_path(copy / "_source", ws.session))):
        if path.exists():
            problems.append(f"the session's {what} are still there ({path.relative_to(copy)})")
    removed = copy / REMOVED_DIR
    if removed.is_dir() and any(removed.iterdir()):
        problems.append(f"{REMOVED_DIR}/ is not empty: {sorted(p.name for p in removed.iterdir())}")
    for state in (copy / "push.state", copy / "_provider" / "seen.state"):
        if state.exists() and ws.session in state.read_text("utf-8"):
            problems.append(f"{state.relative_to(copy)} still names the session")
    noise = [p for p in (copy / "_source").rglob("*") if p.is_file() and MARKER_DIR not in p.parts]
    if not noise:
        problems.append("the noise beside the session, which no session owns, was removed too")
    return problems


def _immediately(ws: Workspace, copy: Path) -> list[str]:
    with ws.receiver("grpc") as rx:
        assert isinstance(rx, GrpcReceiver)
        problems = _errors(_pass(ws, copy, rx))
        problems += [] if rx.records else ["nothing was sent"]
        problems += _removed_whole(ws, copy)
        sent = len(rx.requests)
        after = _pass(ws, copy, rx)
        problems += _errors(after)
        if after.totals.landed:
            problems.append(f"the pass after the removal landed {after.totals.landed} file(s)")
        if len(rx.requests) != sent:
            problems.append(f"the pass after the removal sent {len(rx.requests) - sent} request(s)")
        if (copy / ws.session).exists() or (copy / "_conversations" / ws.session).exists():
            problems.append("the pass and parse after the removal left a session or chain directory")
    return problems


def _retained(ws: Workspace, copy: Path) -> list[str]:
    path = marker_path(copy / "_source", ws.session)
    data = json.loads(path.read_bytes())
    data.update(policy="retain", retain="24h")
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    last = _last_record_ns(ws)
    with ws.receiver("grpc") as rx:
        assert isinstance(rx, GrpcReceiver)
        problems = _errors(_pass(ws, copy, rx, at_ns=last + _DAY - _S))
        problems += [f"one second before 24 hours: {p}" for p in _kept_whole(ws, copy)]
        problems += _errors(_pass(ws, copy, rx, at_ns=last + _DAY))
    return problems + [f"at 24 hours: {p}" for p in _removed_whole(ws, copy)]


def _never_marked(ws: Workspace) -> list[str]:
    problems = []
    if (ws.out / SCENARIO_DIR).exists():
        problems.append(f"an sd build made {SCENARIO_DIR}/")
    if (ws.source / MARKER_DIR).exists():
        problems.append("an sd build wrote a marker")
    copy = ws.copy("removal-sd")
    try:
        with ws.receiver("grpc") as rx:
            assert isinstance(rx, GrpcReceiver)
            _pass(ws, copy, rx)
            if not rx.records:
                problems.append("nothing was sent")
        if not (copy / ws.session).is_dir() or not (copy / "_conversations" / ws.session).is_dir():
            problems.append("a clean push of an sd build removed its session")
    finally:
        remove_tree(copy)
    return problems


_CASES: tuple[tuple[str, Callable[[Workspace, Path], list[str]]], ...] = (
    ("no receiver", _no_push), ("refused", _refused), ("partial success", _partial),
    ("another receiver", _other_receiver), ("marker gone", _marker_gone), ("immediately", _immediately),
    ("24h", _retained))

register(Property("removed_after_sent", removed_after_sent))
