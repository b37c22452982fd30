"""The loopback receivers of one ``scenario check``: one per protocol, started when a property
first asks for it, lent to one property case at a time and stopped when the check ends.

The properties that push (``push_follows_the_wire``, ``removed_after_sent``,
``metrics_match_the_plan``) each started a receiver of their own for every case, and a gRPC
server's start and stop (its threads, its port) was a share of the check's time
(benchmarks/README.md). A lent receiver is reset as it is lent (:meth:`Receiver.reset`), so
nothing one case planned, took or saw reaches the next; what it took stays readable after the
block, as a stopped receiver's would, until it is lent again. Its endpoint is the one thing the
cases share, and a push records what it sent in the copy of the root it pushed, never in the
receiver. Without a pool (a test's workspace), each case gets a receiver of its own, as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from asz_core.scenario.receiver import GrpcReceiver, HttpReceiver, make_receiver

__all__ = ["ReceiverPool", "lend_receiver"]


class ReceiverPool:
    """At most one running receiver per protocol, for whoever holds the pool."""

    def __init__(self) -> None:
        self._running: dict[str, GrpcReceiver | HttpReceiver] = {}
        self._lent: set[str] = set()

    @contextmanager
    def lend(self, protocol: str, **settings: Any) -> Iterator[GrpcReceiver | HttpReceiver]:
        """The protocol's receiver, as a new one made with ``settings`` would be, for the block."""
        if protocol in self._lent:  # two cases at once would see each other's requests
            raise RuntimeError(f"the {protocol} receiver is lent already")
        rx = self._running.get(protocol)
        if rx is None:
            rx = self._running[protocol] = make_receiver(protocol).start()
        rx.reset(**settings)
        self._lent.add(protocol)
        try:
            yield rx
        finally:
            self._lent.discard(protocol)  # what it took stays readable until it is lent again

    def stop(self) -> None:
        for rx in self._running.values():
            rx.stop()
        self._running.clear()


@contextmanager
def lend_receiver(pool: ReceiverPool | None, protocol: str,
                  **settings: Any) -> Iterator[GrpcReceiver | HttpReceiver]:
    """A receiver for the block: the pool's, else one of its own, stopped after it."""
    if pool is not None:
        with pool.lend(protocol, **settings) as rx:
            yield rx
        return
    with make_receiver(protocol, **settings) as own:
        yield own
