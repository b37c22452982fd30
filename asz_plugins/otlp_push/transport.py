"""What a transport answers for one request, whichever protocol carried it.

A request ends in exactly one of three ways:

* :class:`Taken` — the receiver took it, possibly rejecting some records (partial success);
  every file in it is recorded as sent.
* :class:`Throttled` — the receiver asked to slow down (HTTP 429, gRPC ``RESOURCE_EXHAUSTED``);
  nothing is recorded and the pass stops, the rest waits for the next one.
* :class:`SendFailed` — anything else: a timeout, a refused connection, an error status, an
  answer that is not OTLP. Nothing is recorded; ``stop`` says whether the next request would
  fail the same way (the receiver is down or misconfigured) or only this one was refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

__all__ = ["SendFailed", "Taken", "Throttled", "Transport"]


@dataclass(frozen=True)
class Taken:
    """The receiver took the request; ``rejected`` records (or data points) of it were refused."""

    rejected: int = 0
    message: str = ""


class Throttled(Exception):
    """The receiver asked the sender to slow down, maybe saying for how long."""

    def __init__(self, message: str, retry_after_s: float | None = None) -> None:
        self.retry_after_s = retry_after_s
        super().__init__(message)


class SendFailed(Exception):
    """The request was not taken. ``stop``: the receiver cannot take any request now."""

    def __init__(self, message: str, *, stop: bool = True) -> None:
        self.stop = stop
        super().__init__(message)


class Transport(Protocol):
    """Sends encoded requests to one receiver; one connection for a whole push."""

    def export(self, request: ExportLogsServiceRequest) -> Taken:
        """Send one request; raise :class:`Throttled` or :class:`SendFailed` when it was not
        taken."""
        ...

    def export_metrics(self, request: ExportMetricsServiceRequest) -> Taken:
        """Send one metrics request, answered by the same three outcomes."""
        ...

    def close(self) -> None: ...
