"""``push.state`` in the storage root: which landed files each receiver has taken.

The upstream's ``key value`` lines::

    schema 1
    updated_at 2026-09-11T10:00:00Z
    endpoint grpc://127.0.0.1:11800
    pushed <session>/streams/main/transcript-20260911T095959.000000000Z-000001.sd 9f2c…
    rejected <session>/streams/main/transcript-20260911T095959.000000000Z-000001.sd

``pushed`` and ``rejected`` lines belong to the ``endpoint`` line above them, so a file is sent
once per receiver: pointing ``export.otlp`` at a new receiver sends it the whole root. (A file
the upstream wrote with one receiver reads the same; ``pushed`` lines before any ``endpoint``
line belong to a receiver named ``unknown``, as the upstream names it.) A file is added only
after the request carrying it succeeded, and the whole file is replaced atomically each time,
so a crash leaves the previous state: at worst a file is sent again, never one marked sent that
no receiver took.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from asz_core.root.durable import write_replace
from asz_core.sessiondata import format_instant

__all__ = ["STATE_NAME", "PushState", "PushStateError", "ReceiverState"]

STATE_NAME: Final = "push.state"
SCHEMA: Final = "1"
UNKNOWN_RECEIVER: Final = "unknown"


class PushStateError(ValueError):
    """``push.state`` cannot be read; the message says which line and what to do."""


@dataclass
class ReceiverState:
    """What one receiver has taken: path → SHA-256, and the files it partly rejected."""

    pushed: dict[str, str] = field(default_factory=dict)
    rejected: set[str] = field(default_factory=set)


@dataclass
class PushState:
    """``push.state`` of one root, read whole (it holds one short line per file)."""

    path: Path
    receivers: dict[str, ReceiverState] = field(default_factory=dict)
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
        current: ReceiverState | None = None
        for number, line in enumerate(text.splitlines(), start=1):
            key, _, value = line.partition(" ")
            if not key:
                continue
            if key == "schema":
                if value != SCHEMA:
                    raise PushStateError(f"{path}:{number}: schema {value!r} is not {SCHEMA}, which "
                                         f"this asz writes; a newer asz wrote it, use that one")
            elif key == "updated_at":
                state.updated_at = value
            elif key == "endpoint":
                current = state.receivers.setdefault(value, ReceiverState())
            elif key in ("pushed", "rejected"):
                if current is None:
                    current = state.receivers.setdefault(UNKNOWN_RECEIVER, ReceiverState())
                relpath, _, digest = value.partition(" ")
                if not relpath or (key == "pushed" and not digest):
                    raise PushStateError(f"{path}:{number}: a {key} line names a path"
                                         f"{' and its SHA-256' if key == 'pushed' else ''}")
                if key == "pushed":
                    current.pushed[relpath] = digest
                else:
                    current.rejected.add(relpath)
            # any other key is a newer writer's: kept out of what this one reads, as upstream does
        return state

    def receiver(self, name: str) -> ReceiverState:
        """What ``name`` has taken (an empty record for a receiver never sent to)."""
        return self.receivers.setdefault(name, ReceiverState())

    def is_pushed(self, receiver: str, relpath: str) -> bool:
        taken = self.receivers.get(receiver)
        return taken is not None and relpath in taken.pushed

    def record(self, receiver: str, pushed: list[tuple[str, str]], rejected: list[str],
               now_ns: int) -> None:
        """Note what a successful request carried, then save: the only way a file is marked."""
        taken = self.receiver(receiver)
        taken.pushed.update(pushed)
        taken.rejected.update(rejected)
        self.updated_at = format_instant(now_ns - now_ns % 1_000_000_000)
        self.save()

    def render(self) -> bytes:
        lines = [f"schema {SCHEMA}", f"updated_at {self.updated_at}"]
        for name, taken in self.receivers.items():
            if not taken.pushed and not taken.rejected:
                continue
            lines.append(f"endpoint {name}")
            lines.extend(f"pushed {p} {d}" for p, d in taken.pushed.items())
            lines.extend(f"rejected {p}" for p in sorted(taken.rejected))
        return ("\n".join(lines) + "\n").encode("utf-8")

    def save(self) -> None:
        write_replace(self.path, self.render())
