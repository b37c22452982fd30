"""``_metrics/metrics.state``: what the derivation has counted, one JSON object saved once a pass.

1. ``derived`` maps each landed file derived (root-relative path) to its digest then: a file
   there is never derived again.
2. ``sessions`` holds, per session, the calls counted (``calls``, so a call is counted once
   however many files its records reach) and where each series' last window ended
   (``series``, ``model|query_source|type`` → nanoseconds, so no two windows of it overlap).
3. ``pending_session_since`` keeps the first pass's look-back for each session that pass did
   not finish, until every file of it is derived.
4. An absent file is the first pass; a file that does not read is refused, never overwritten
   (the message says to move it aside, which derives everything again as a first pass).
5. Saving replaces the whole file atomically (temp, fsync, rename, directory fsync), owner-only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import orjson

from asz_core.root.durable import read_small, write_replace
from asz_core.sessiondata import format_instant, parse_instant

__all__ = ["STATE_NAME", "MetricsState", "MetricsStateError", "SessionCounts"]

STATE_NAME: Final = "metrics.state"
SCHEMA: Final = 1


class MetricsStateError(ValueError):
    """``metrics.state`` does not read; the message says what to do."""


@dataclass
class SessionCounts:
    """Rule 2 for one session."""

    calls: set[str] = field(default_factory=set)
    series: dict[str, int] = field(default_factory=dict)


@dataclass
class MetricsState:
    path: Path
    first: bool = True  #: no state was there: the look-back bounds this pass
    derived: dict[str, str] = field(default_factory=dict)
    sessions: dict[str, SessionCounts] = field(default_factory=dict)
    pending_since: dict[str, int] = field(default_factory=dict)

    @classmethod
    def load(cls, spool: Path) -> MetricsState:
        path = spool / STATE_NAME
        state = cls(path)
        try:
            raw = read_small(path)
        except OSError as exc:
            raise MetricsStateError(f"{path}: cannot be read ({exc.strerror or exc}); move it aside "
                                    f"to derive every landed file again") from None
        if raw is None:
            return state
        try:
            data = orjson.loads(raw)
            if not isinstance(data, dict) or data.get("schema") != SCHEMA:
                raise ValueError(f"schema {data.get('schema') if isinstance(data, dict) else None!r} "
                                 f"is not {SCHEMA}")
            state.first = False
            state.derived = {str(k): str(v) for k, v in (data.get("derived") or {}).items()}
            for session, counts in (data.get("sessions") or {}).items():
                state.sessions[str(session)] = SessionCounts(
                    {str(c) for c, on in (counts.get("calls") or {}).items() if on},
                    {str(k): int(v) for k, v in (counts.get("series") or {}).items()})
            for session, since in (data.get("pending_session_since") or {}).items():
                instant = parse_instant(since)
                if instant is None:
                    raise ValueError(f"pending_session_since of {session} is not a time")
                state.pending_since[str(session)] = instant
        except (orjson.JSONDecodeError, ValueError, TypeError, AttributeError) as exc:
            raise MetricsStateError(f"{path}: does not read ({exc}); move it aside to derive every "
                                    f"landed file again") from None
        return state

    def session(self, session: str) -> SessionCounts:
        counts = self.sessions.get(session)
        if counts is None:
            counts = self.sessions[session] = SessionCounts()
        return counts

    def forget(self, session: str) -> None:
        """Drop what the state says of ``session`` (its removal: storage-root.md's step 6)."""
        prefix = f"{session}/"
        self.derived = {k: v for k, v in self.derived.items() if not k.startswith(prefix)}
        self.sessions.pop(session, None)
        self.pending_since.pop(session, None)

    def render(self, now_ns: int) -> bytes:
        data: dict[str, Any] = {
            "schema": SCHEMA,
            "updated_at": format_instant(now_ns),
            "derived": dict(sorted(self.derived.items())),
            "sessions": {s: {"calls": dict.fromkeys(sorted(c.calls), True), "series": dict(sorted(c.series.items()))}
                         for s, c in sorted(self.sessions.items())},
        }
        if self.pending_since:
            data["pending_session_since"] = {s: format_instant(t) for s, t in sorted(self.pending_since.items())}
        return orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n"

    def save(self, now_ns: int) -> None:
        write_replace(self.path, self.render(now_ns))
