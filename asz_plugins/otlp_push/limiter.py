"""``max_bytes_per_minute``: a budget of wire bytes, refilled continuously, at most a minute's.

The budget starts full, so a push of a few new files never waits; before each request the push
waits until the budget covers the request's encoded size. A request larger than a whole
minute's budget waits for a full budget and leaves it empty. A receiver that throttles empties
it, so the next request waits a minute's worth. Zero is no limit.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["WireBudget"]


class WireBudget:
    """A token bucket of bytes: capacity ``per_minute``, refilled at ``per_minute / 60``/s."""

    def __init__(self, per_minute: int, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.per_minute = per_minute
        self._clock = clock
        self._sleep = sleep
        self._tokens = float(per_minute)
        self._at = clock()

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(float(self.per_minute),
                           self._tokens + (now - self._at) * self.per_minute / 60.0)
        self._at = now

    def take(self, size: int) -> float:
        """Wait until ``size`` bytes may go, spend them; the seconds waited."""
        if self.per_minute <= 0:
            return 0.0
        self._refill()
        need = min(size, self.per_minute)
        waited = 0.0
        if self._tokens < need:
            waited = (need - self._tokens) * 60.0 / self.per_minute
            self._sleep(waited)
            self._refill()
        self._tokens = max(0.0, self._tokens - size)
        return waited

    def empty(self) -> None:
        """The receiver asked to slow down: the next request waits for a refill."""
        self._refill()
        self._tokens = 0.0
