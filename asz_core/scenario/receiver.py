"""Loopback OTLP logs and metrics receivers, gRPC and HTTP, on 127.0.0.1 only: what
``push_follows_the_wire`` and ``metrics_match_the_plan`` push to, and what the push, retention
and assembly tests push to.

Both are built from ``opentelemetry-proto``'s own definitions (the gRPC one is a
``LogsServiceServicer`` served by ``grpcio``; the HTTP one decodes ``ExportLogsServiceRequest``
from a POST to ``/v1/logs`` with the standard library's ``http.server``), and both check every
record as the SkyWalking OAP does: the SHA-256 of the body equals ``asz.file.digest``, and the
body's line count equals ``asz.lines``, and the record carries the attributes its format
(``sd`` or ``sf``) must. A record that fails is rejected (partial success) and listed in
``problems``.

A metrics request (``MetricsService`` / ``/v1/metrics``) is kept apart, in ``metric_requests``, one
:class:`Point` per data point, and follows the same plan.

A caller scripts what a receiver does with each request: ``plan("fail", "throttle")`` refuses the
first request and throttles the second; after the plan, ``default`` applies. Actions:

``ok``        take it
``fail``      an error that says the receiver cannot take anything now (UNAVAILABLE / 503)
``throttle``  RESOURCE_EXHAUSTED with a RetryInfo / 429 with Retry-After (``retry_after`` s)
``partial``   take it, saying ``partial_rejects`` records were rejected
``hang``      answer nothing until released (the sender times out); nothing is stored
``html``      (HTTP) 200 with an HTML page, as a login page or proxy would
``redirect``  (HTTP) 307 to another address
``die``       kill this very process with SIGKILL before answering (run as a process)

``with make_receiver("grpc") as rx:`` serves for the block. Run as a module
(``python -m asz_core.scenario.receiver grpc|http --port P --store DIR``) it serves until killed,
writing what it takes under ``DIR`` (each body at its ``asz.file``, and one line per taken record
in ``DIR/arrivals.log``) and printing ``ready <endpoint>`` once it listens.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import signal
import threading
import time
from collections import deque
from concurrent import futures
from dataclasses import MISSING, dataclass, field, fields
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

import grpc
from google.protobuf.duration_pb2 import Duration
from google.rpc import code_pb2
from google.rpc.error_details_pb2 import RetryInfo
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2_grpc
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsPartialSuccess,
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2_grpc
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsPartialSuccess,
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

__all__ = ["GrpcReceiver", "HttpReceiver", "Point", "Received", "Receiver", "make_receiver"]

RESOURCE_KEYS = ("service.name", "service.instance.id", "service.layer", "telemetry.sdk.name",
                 "telemetry.sdk.language", "telemetry.sdk.version")
RECORD_KEYS = ("asz.format", "asz.format.version", "asz.file", "asz.file.kind", "asz.file.digest",
               "asz.lines", "asz.session")
#: what a record carries besides, by its ``asz.format``: a landed file's sequence, a round's place
FORMAT_KEYS = {"sd": ("asz.seq",), "sf": ("asz.conversation", "asz.round")}
HANG_LIMIT_S = 30.0  # a hung handler gives up by itself, so no caller can hang for ever


def _value(v: AnyValue) -> Any:
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


@dataclass
class Received:
    """One log record a receiver took."""

    resource: dict[str, Any]
    attributes: dict[str, Any]
    body: bytes
    time_unix_nano: int
    observed_time_unix_nano: int

    @property
    def file(self) -> str:
        return str(self.attributes.get("asz.file"))


@dataclass(frozen=True)
class Point:
    """One data point of a metrics request a receiver took."""

    resource: dict[str, Any]
    scope: str
    metric: str
    unit: str
    temporality: int
    monotonic: bool
    attributes: dict[str, Any]
    start_unix_nano: int
    time_unix_nano: int
    value: float


@dataclass
class Outcome:
    action: str
    rejected: int = 0
    message: str = ""


@dataclass
class Receiver:
    """What both receivers share: the plan, the checks, what was taken."""

    default: str = "ok"
    retry_after: float = 7.0
    partial_rejects: int = 1
    store: Path | None = None
    requests: list[list[Received]] = field(default_factory=list)  #: taken, in arrival order
    metric_requests: list[list[Point]] = field(default_factory=list)  #: metrics taken, in order
    seen: int = 0                                                #: requests that arrived
    problems: list[str] = field(default_factory=list)
    _plan: deque[str] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _release: threading.Event = field(default_factory=threading.Event)

    def plan(self, *actions: str) -> None:
        with self._lock:
            self._plan.extend(actions)

    def reset(self, **settings: Any) -> None:
        """Forget everything, as a new receiver made with ``settings`` would start, while still
        listening where it listens: what it took, its plan, what it saw and its problems. A
        handler still hanging is released first, on the event it waits on."""
        self.release()
        unknown = set(settings) - {f.name for f in fields(self)}
        if unknown:
            raise TypeError(f"no receiver setting {sorted(unknown)}")
        with self._lock:
            for f in fields(self):
                if f.name == "_lock":  # the handlers' threads may be waiting on this one
                    continue
                if f.name in settings:
                    value = settings[f.name]
                elif f.default_factory is not MISSING:
                    value = f.default_factory()
                else:
                    value = f.default
                setattr(self, f.name, value)

    def release(self) -> None:
        """Let every hanging handler return."""
        self._release.set()

    @property
    def records(self) -> list[Received]:
        return [r for request in self.requests for r in request]

    @property
    def points(self) -> list[Point]:
        return [p for request in self.metric_requests for p in request]

    @property
    def endpoint(self) -> str:
        raise NotImplementedError

    def start(self, port: int = 0) -> Receiver:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _check(self, record: Received) -> str | None:
        """The OAP's checks on one record; a problem, or ``None``."""
        missing = [k for k in RESOURCE_KEYS if k not in record.resource]
        missing += [k for k in RECORD_KEYS if k not in record.attributes]
        missing += [k for k in FORMAT_KEYS.get(str(record.attributes.get("asz.format")), ())
                    if k not in record.attributes]
        if missing:
            return f"{record.file}: missing {', '.join(missing)}"
        digest = hashlib.sha256(record.body).hexdigest()
        if digest != record.attributes["asz.file.digest"]:
            return f"{record.file}: body digest {digest} is not asz.file.digest"
        lines = record.body.count(b"\n")
        if lines != record.attributes["asz.lines"]:
            return f"{record.file}: body has {lines} lines, asz.lines says {record.attributes['asz.lines']}"
        return None

    def handle(self, request: ExportLogsServiceRequest) -> Outcome:
        """Decide what to do with a request and, when it is taken, keep its records."""
        action, refused = self._act()
        if refused is not None:
            return refused
        taken: list[Received] = []
        rejected = 0
        for resource_logs in request.resource_logs:
            resource = {kv.key: _value(kv.value) for kv in resource_logs.resource.attributes}
            for scope_logs in resource_logs.scope_logs:
                for log in scope_logs.log_records:
                    body = log.body.string_value.encode("utf-8") if log.body.HasField("string_value") \
                        else log.body.bytes_value
                    record = Received(resource, {kv.key: _value(kv.value) for kv in log.attributes},
                                      body, log.time_unix_nano, log.observed_time_unix_nano)
                    problem = self._check(record)
                    if problem is not None:
                        rejected += 1
                        with self._lock:
                            self.problems.append(problem)
                        continue
                    taken.append(record)
        self._keep(taken)
        if action == "partial":
            return Outcome("ok", rejected + self.partial_rejects, "some records were rejected")
        return Outcome("ok", rejected, "digest or line count mismatch" if rejected else "")

    def _act(self) -> tuple[str, Outcome | None]:
        """The planned action for this request, carried out when it takes nothing: die (the
        receiver's process is killed), hang (until released), or a refusal; else the action
        (``ok`` or ``partial``) and ``None``, for the caller to take the request."""
        action = self._next_action()
        if action == "die":
            os.kill(os.getpid(), signal.SIGKILL)
        if action == "hang":
            self._release.wait(HANG_LIMIT_S)
            return action, Outcome("hang")
        if action not in ("ok", "partial"):
            return action, Outcome(action)
        return action, None

    def _next_action(self) -> str:
        with self._lock:
            self.seen += 1
            return self._plan.popleft() if self._plan else self.default

    def handle_metrics(self, request: ExportMetricsServiceRequest) -> Outcome:
        """As :meth:`handle`, for a metrics request: every point is kept (a sum's points only)."""
        action, refused = self._act()
        if refused is not None:
            return refused
        taken = []
        for resource_metrics in request.resource_metrics:
            resource = {kv.key: _value(kv.value) for kv in resource_metrics.resource.attributes}
            for scope_metrics in resource_metrics.scope_metrics:
                for metric in scope_metrics.metrics:
                    for dp in metric.sum.data_points:
                        value = dp.as_double if dp.HasField("as_double") else float(dp.as_int)
                        taken.append(Point(resource, scope_metrics.scope.name, metric.name, metric.unit,
                                           metric.sum.aggregation_temporality, metric.sum.is_monotonic,
                                           {kv.key: _value(kv.value) for kv in dp.attributes},
                                           dp.start_time_unix_nano, dp.time_unix_nano, value))
        with self._lock:
            self.metric_requests.append(taken)
        if action == "partial":
            return Outcome("ok", self.partial_rejects, "some points were rejected")
        return Outcome("ok")

    def _keep(self, taken: list[Received]) -> None:
        with self._lock:
            self.requests.append(taken)
            if self.store is None:
                return
            for record in taken:
                target = self.store / record.file
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(record.body)
                with open(self.store / "arrivals.log", "a", encoding="utf-8") as log:
                    log.write(f"{record.file} {record.attributes['asz.file.digest']}\n")
                    log.flush()
                    os.fsync(log.fileno())


# ---- gRPC ---------------------------------------------------------------------------------


class _LogsServicer(logs_service_pb2_grpc.LogsServiceServicer):
    def __init__(self, receiver: Receiver) -> None:
        self.receiver = receiver

    def Export(self, request: ExportLogsServiceRequest, context: grpc.ServicerContext) -> ExportLogsServiceResponse:
        outcome = self.receiver.handle(request)
        _abort_unless_taken(outcome, self.receiver, context)
        partial = ExportLogsPartialSuccess(rejected_log_records=outcome.rejected,
                                           error_message=outcome.message) if outcome.rejected else None
        return ExportLogsServiceResponse(partial_success=partial)


class _MetricsServicer(metrics_service_pb2_grpc.MetricsServiceServicer):
    def __init__(self, receiver: Receiver) -> None:
        self.receiver = receiver

    def Export(self, request: ExportMetricsServiceRequest,
               context: grpc.ServicerContext) -> ExportMetricsServiceResponse:
        outcome = self.receiver.handle_metrics(request)
        _abort_unless_taken(outcome, self.receiver, context)
        partial = ExportMetricsPartialSuccess(rejected_data_points=outcome.rejected,
                                              error_message=outcome.message) if outcome.rejected else None
        return ExportMetricsServiceResponse(partial_success=partial)


def _abort_unless_taken(outcome: Outcome, receiver: Receiver, context: grpc.ServicerContext) -> None:
    if outcome.action == "throttle":
        delay = Duration(seconds=int(receiver.retry_after))
        detail = Status(code=code_pb2.RESOURCE_EXHAUSTED, message="slow down")
        detail.details.add().Pack(RetryInfo(retry_delay=delay))
        context.abort_with_status(_RichStatus(grpc.StatusCode.RESOURCE_EXHAUSTED, "slow down",
                                              detail.SerializeToString()))
    if outcome.action in ("fail", "hang"):
        context.abort(grpc.StatusCode.UNAVAILABLE, "the receiver is not taking data now")
    if outcome.action != "ok":
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"{outcome.action} is HTTP only")


class _RichStatus(grpc.Status):
    """A status with a ``google.rpc.Status`` in its details, as OTLP's RetryInfo travels."""

    def __init__(self, code: grpc.StatusCode, details: str, packed: bytes) -> None:
        self.code = code
        self.details = details
        self.trailing_metadata = (("grpc-status-details-bin", packed),)


class GrpcReceiver(Receiver):
    """An OTLP/gRPC logs receiver on 127.0.0.1."""

    server: Any = None
    port: int = 0
    max_receive: int = 64 << 20  #: gRPC refuses a larger request with RESOURCE_EXHAUSTED itself

    def start(self, port: int = 0) -> GrpcReceiver:
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=8),
                                  options=[("grpc.max_receive_message_length", self.max_receive),
                                           ("grpc.so_reuseport", 0)])
        logs_service_pb2_grpc.add_LogsServiceServicer_to_server(  # type: ignore[no-untyped-call]
            _LogsServicer(self), self.server)
        metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server(  # type: ignore[no-untyped-call]
            _MetricsServicer(self), self.server)
        self.port = self.server.add_insecure_port(f"127.0.0.1:{port}")
        self.server.start()
        return self

    @property
    def endpoint(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.release()
        if self.server is not None:
            self.server.stop(grace=0).wait(5)


# ---- HTTP ---------------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    receiver: Receiver  # set on the subclass each server makes

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        if self.path not in ("/v1/logs", "/v1/metrics"):
            self._answer(404, b"not found", "text/plain")
            return
        if (self.headers.get("Content-Type") or "").split(";")[0] != "application/x-protobuf":
            self._answer(415, b"want application/x-protobuf", "text/plain")
            return
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/v1/metrics":
            outcome = self.receiver.handle_metrics(ExportMetricsServiceRequest.FromString(body))
            if outcome.action == "ok":
                taken = ExportMetricsPartialSuccess(rejected_data_points=outcome.rejected,
                                                    error_message=outcome.message) if outcome.rejected else None
                self._answer(200, ExportMetricsServiceResponse(partial_success=taken).SerializeToString(),
                             "application/x-protobuf")
                return
            self._refuse(outcome)
            return
        request = ExportLogsServiceRequest()
        request.ParseFromString(body)
        outcome = self.receiver.handle(request)
        if outcome.action != "ok":
            self._refuse(outcome)
            return
        partial = ExportLogsPartialSuccess(rejected_log_records=outcome.rejected,
                                           error_message=outcome.message) if outcome.rejected else None
        answer = ExportLogsServiceResponse(partial_success=partial).SerializeToString()
        self._answer(200, answer, "application/x-protobuf")

    def _refuse(self, outcome: Outcome) -> None:
        if outcome.action == "throttle":
            self._answer(429, b"", "text/plain", {"Retry-After": str(int(self.receiver.retry_after))})
        elif outcome.action == "fail":
            self._answer(503, Status(code=code_pb2.UNAVAILABLE, message="not now").SerializeToString(),
                         "application/x-protobuf")
        elif outcome.action == "hang":
            self.close_connection = True
        elif outcome.action == "html":
            self._answer(200, b"<html><body>Sign in</body></html>", "text/html; charset=utf-8")
        elif outcome.action == "redirect":
            self._answer(307, b"", "text/plain", {"Location": f"http://127.0.0.1:9{self.path}"})

    def _answer(self, code: int, body: bytes, media: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", media)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)


class HttpReceiver(Receiver):
    """An OTLP/HTTP logs receiver on 127.0.0.1 (protobuf bodies)."""

    server: Any = None
    port: int = 0

    def start(self, port: int = 0) -> HttpReceiver:
        handler = type("Handler", (_Handler,), {"receiver": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        # polled often, so that :meth:`stop` returns at once rather than after the default half second
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        return self

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.release()
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


def make_receiver(protocol: str, **kwargs: Any) -> GrpcReceiver | HttpReceiver:
    return GrpcReceiver(**kwargs) if protocol == "grpc" else HttpReceiver(**kwargs)


# ---- as a process, so a caller can kill it -------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("protocol", choices=("grpc", "http"))
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--plan", nargs="*", default=[])
    args = parser.parse_args()
    receiver = make_receiver(args.protocol, store=args.store)
    receiver.plan(*args.plan)
    receiver.start(args.port)
    print(f"ready {receiver.endpoint}", flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
