"""A loopback OTLP logs receiver for ``push_follows_the_wire``: gRPC or HTTP, on 127.0.0.1 only.

Built from ``opentelemetry-proto``'s own messages: a ``LogsServiceServicer`` served by
``grpcio``, or ``http.server`` decoding ``ExportLogsServiceRequest`` from a POST to
``/v1/logs``. It keeps every request it takes, and refuses the next ``refuse`` requests
(UNAVAILABLE / 503), so a check can see that a refused request leaves its files for later.
"""

from __future__ import annotations

import threading
from concurrent import futures
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import grpc
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2_grpc
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

__all__ = ["Receiver", "Taken"]


def _value(v: AnyValue) -> Any:
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


@dataclass
class Taken:
    """One log record the receiver took."""

    resource: dict[str, Any]
    attributes: dict[str, Any]
    body: bytes
    time_unix_nano: int
    observed_time_unix_nano: int


@dataclass
class Receiver:
    protocol: str
    refuse: int = 0
    requests: list[list[Taken]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stop: Any = None
    endpoint: str = ""

    def take(self, request: ExportLogsServiceRequest) -> bool:
        """Keep a request's records; ``False`` when it is to be refused."""
        with self._lock:
            if self.refuse > 0:
                self.refuse -= 1
                return False
        taken = []
        for resource_logs in request.resource_logs:
            resource = {kv.key: _value(kv.value) for kv in resource_logs.resource.attributes}
            for scope in resource_logs.scope_logs:
                for log in scope.log_records:
                    body = (log.body.string_value.encode("utf-8") if log.body.HasField("string_value")
                            else log.body.bytes_value)
                    taken.append(Taken(resource, {kv.key: _value(kv.value) for kv in log.attributes}, body,
                                       log.time_unix_nano, log.observed_time_unix_nano))
        with self._lock:
            self.requests.append(taken)
        return True

    @property
    def records(self) -> list[Taken]:
        return [r for request in self.requests for r in request]

    def __enter__(self) -> Receiver:
        if self.protocol == "grpc":
            self._start_grpc()
        else:
            self._start_http()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._stop is not None:
            self._stop()

    def _start_grpc(self) -> None:
        receiver = self

        class Servicer(logs_service_pb2_grpc.LogsServiceServicer):
            def Export(self, request: ExportLogsServiceRequest,
                       context: grpc.ServicerContext) -> ExportLogsServiceResponse:
                if not receiver.take(request):
                    context.abort(grpc.StatusCode.UNAVAILABLE, "refused by the check")
                return ExportLogsServiceResponse()

        server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        logs_service_pb2_grpc.add_LogsServiceServicer_to_server(Servicer(), server)  # type: ignore[no-untyped-call]
        port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        self.endpoint = f"127.0.0.1:{port}"
        self._stop = lambda: server.stop(None)

    def _start_http(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                request = ExportLogsServiceRequest()
                request.ParseFromString(data)
                if self.path.rstrip("/") != "/v1/logs" or not receiver.take(request):
                    self.send_response(503)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = ExportLogsServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        self.endpoint = f"http://127.0.0.1:{server.server_address[1]}"

        def stop() -> None:
            server.shutdown()
            server.server_close()
            thread.join()
        self._stop = stop
