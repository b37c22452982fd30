"""``serve --watch``: passes (and their parses) on the collector interval, beside the page.

The page keeps answering while the root fills, shows when data was last collected, and says so
when a pass fails; a pass never stops the page, and Ctrl-C stops both cleanly.

1. One thread runs a pass and its parse, then waits ``interval`` seconds from the end of it, then
   runs the next. A request never waits for a pass: the page reads landed files, which a pass only
   adds (each by a rename), and it takes no lock a pass holds.
2. Whatever a pass comes to — data landed, nothing new, refused because another process holds the
   root, an error, an exception — is logged one line and kept as the last pass, which
   ``/api/status`` reports and the page shows. The next pass runs as planned.
3. After a pass, the catalogue is told to look at the root again at the next request, so the list
   shows what landed at once rather than after its one-second reuse.
4. :meth:`Watcher.stop` lets a pass under way finish (cut short it would lose nothing, but the
   next one would do its work again) and ends the thread before the first pass if it has not
   begun. Its caller decides how long to wait.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

__all__ = ["Collected", "Watcher", "now_ms"]


def now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True)
class Collected:
    """What one pass and its parse came to."""

    started_ms: int
    ended_ms: int
    ok: bool
    line: str                                   #: the pass line, or why no pass ran
    problems: tuple[str, ...] = ()              #: errors, refusals and parse failures, one line each
    counts: Mapping[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"started": self.started_ms, "ended": self.ended_ms, "ok": self.ok, "line": self.line,
                "problems": list(self.problems), "counts": dict(self.counts)}


class Watcher:
    """Runs ``collect`` now and every ``interval`` seconds after the last one ended, in a thread of
    its own; logs each outcome to ``log`` and calls ``collected`` after each (rule 3)."""

    def __init__(self, collect: Callable[[], Collected], interval: float, log: TextIO,
                 collected: Callable[[], None] = lambda: None) -> None:
        self.interval = interval
        self._collect = collect
        self._log = log
        self._collected = collected
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._last: Collected | None = None
        self._last_ok_ms: int | None = None
        self._running = False
        self._next_ms: int | None = now_ms()
        self._thread = threading.Thread(target=self._loop, name="asz-serve-watch", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float | None = None) -> bool:
        """Rule 4: ask the thread to end; whether it has, within ``timeout`` seconds."""
        self._stop.set()
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def busy(self) -> bool:
        """A pass is under way."""
        with self._lock:
            return self._running

    def status(self) -> dict[str, Any]:
        """What ``/api/status`` adds in this mode: ``last_refresh`` (when the last pass ended),
        ``next_refresh``, ``collecting``, ``interval_s``, ``last_collected`` (when the last pass that
        went well ended) and ``last_pass``."""
        with self._lock:
            last = self._last
            return {"last_refresh": None if last is None else last.ended_ms,
                    "next_refresh": None if self._running else self._next_ms,
                    "collecting": self._running, "interval_s": self.interval,
                    "last_collected": self._last_ok_ms,
                    "last_pass": None if last is None else last.as_dict()}

    def _loop(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                self._running = True
            started = now_ms()
            try:
                outcome = self._collect()
            except Exception as exc:  # noqa: BLE001 - rule 2: a pass that raises is shown, not fatal
                outcome = Collected(started, now_ms(), False, f"the pass stopped: {type(exc).__name__}: {exc}",
                                    (f"{type(exc).__name__}: {exc}",))
            with self._lock:
                self._last = outcome
                if outcome.ok:
                    self._last_ok_ms = outcome.ended_ms
                self._running = False
                self._next_ms = outcome.ended_ms + int(self.interval * 1000)
            self._log.write(f"{outcome.line}\n")
            for problem in outcome.problems:
                self._log.write(f"asz: {problem}\n")
            self._log.flush()
            self._collected()
            self._stop.wait(self.interval)
