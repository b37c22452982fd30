"""``push.state`` in the storage root: which landed files were sent, and to which receivers.

Upstream's ``key value`` lines, read and grouped as upstream reads them::

    schema 1
    updated_at 2026-09-11T10:00:00Z
    endpoint grpc://127.0.0.1:11800
    pushed <session>/streams/main/transcript-20260911T095959.000000000Z-000001.sd 9f2c…
    rejected <session>/streams/main/transcript-20260911T095959.000000000Z-000001.sd

1. ``pushed`` lines say what was sent (path → SHA-256 as sent), whichever receiver took it:
   a file is sent once per root. ``endpoint`` lines name every receiver files went to; they say
   nothing about which file went where (a state with two cannot tell). ``rejected`` names a file
   a receiver took while rejecting some of its records; it is not sent again either.
2. A line is read only when it has its kind's number of fields (``pushed`` three, ``endpoint``
   and ``rejected`` two), wherever it sits; anything else is a newer writer's and passed over.
3. Files recorded with no ``endpoint`` line were sent to a receiver named ``unknown``.
4. Saving writes every kind, sorted: the endpoints, then pushed, then rejected lines; a receiver
   named with a URL password is written with it redacted (:mod:`asz_core.redact`).
5. A file is added only after the request carrying it succeeded, and the whole file is replaced
   atomically each time, so a crash leaves the previous state: at worst a file is sent again,
   never one marked sent that no receiver took. To send a root to a new receiver from the start,
   move ``push.state`` aside.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from asz_core.redact import redact_url
from asz_core.root.durable import write_replace
from asz_core.sessiondata import format_instant

__all__ = ["STATE_NAME", "UNKNOWN_RECEIVER", "PushState", "PushStateError"]

STATE_NAME: Final = "push.state"
SCHEMA: Final = "1"
UNKNOWN_RECEIVER: Final = "unknown"


class PushStateError(ValueError):
    """``push.state`` cannot be read; the message says which line and what to do."""


@dataclass
class PushState:
    """``push.state`` of one root, read whole (it holds one short line per file)."""

    path: Path
    pushed: dict[str, str] = field(default_factory=dict)
    receivers: set[str] = field(default_factory=set)
    rejected: set[str] = field(default_factory=set)
    updated_at: str = ""

    @classmethod
    def load(cls, root: Path) -> PushState:
        """Read ``<root>/push.state``; an absent file is an empty state."""
        path = root / STATE_NAME
        state = cls(path)
        try:
            text = path.read_text("utf-8")
        except FileNotFoundError:
            return state
        except (OSError, UnicodeDecodeError) as exc:
            raise PushStateError(f"{path}: cannot be read ({exc}); move it aside to send "
                                 f"every file again") from None
        for number, line in enumerate(text.splitlines(), start=1):
            fields = line.split()
            kind = fields[0] if fields else ""
            if kind == "schema" and fields[1:] != [SCHEMA]:
                raise PushStateError(f"{path}:{number}: schema {' '.join(fields[1:])!r} is not {SCHEMA}, "
                                     f"which this asz writes; a newer asz wrote it, use that one")
            if kind == "updated_at" and len(fields) == 2:
                state.updated_at = fields[1]
            elif kind == "pushed" and len(fields) == 3:
                state.pushed[fields[1]] = fields[2]
            elif kind == "endpoint" and len(fields) == 2:
                state.receivers.add(fields[1])
            elif kind == "rejected" and len(fields) == 2:
                state.rejected.add(fields[1])
        if state.pushed and not state.receivers:
            state.receivers.add(UNKNOWN_RECEIVER)
        return state

    def is_pushed(self, relpath: str) -> bool:
        return relpath in self.pushed

    def record(self, receiver: str, pushed: list[tuple[str, str]], rejected: list[str],
               now_ns: int) -> None:
        """Note what a successful request to ``receiver`` carried, then save: the only way a
        file is marked."""
        self.pushed.update(pushed)
        self.rejected.update(rejected)
        self.receivers.add(redact_url(receiver))
        self.updated_at = format_instant(now_ns - now_ns % 1_000_000_000)
        self.save()

    def forget(self, sessions: list[str]) -> bool:
        """Drop the lines of every file of ``sessions`` (landed files, rounds, metrics spool
        files), once a scenario removal deleted them; whether any went. The endpoint lines stay."""
        prefixes = tuple(p for s in sessions for p in (f"{s}/", f"_conversations/{s}/"))
        spooled = {f"_metrics/{name}" for name in self.pushed_spool_names(sessions)}
        gone = [p for p in self.pushed if p.startswith(prefixes) or p in spooled]
        for path in gone:
            del self.pushed[path]
        dropped = {p for p in self.rejected if p.startswith(prefixes) or p in spooled}
        self.rejected -= dropped
        return bool(gone or dropped)

    def pushed_spool_names(self, sessions: list[str]) -> list[str]:
        """The metrics spool files of ``sessions`` this state names (``metrics-<session>-<seq>-local.pb``)."""
        wanted = set(sessions)
        out = []
        for path in (*self.pushed, *self.rejected):
            name = path.removeprefix("_metrics/")
            if name != path and name.startswith("metrics-") and name.endswith("-local.pb"):
                session, _, seq = name[len("metrics-"):-len("-local.pb")].rpartition("-")
                if session in wanted and seq.isdigit():
                    out.append(name)
        return out

    def render(self) -> bytes:
        lines = [f"schema {SCHEMA}", f"updated_at {self.updated_at}"]
        lines.extend(f"endpoint {name}" for name in sorted(self.receivers))
        lines.extend(f"pushed {p} {self.pushed[p]}" for p in sorted(self.pushed))
        lines.extend(f"rejected {p}" for p in sorted(self.rejected))
        return ("\n".join(lines) + "\n").encode("utf-8")

    def save(self) -> None:
        write_replace(self.path, self.render())
