"""OTLP/gRPC: ``LogsService.Export`` (and ``MetricsService.Export``) calls on one channel, opened
for the push and closed after.

``Export`` is a single call and answer, so a push is a sequence of calls on one HTTP/2
connection. ``RESOURCE_EXHAUSTED`` is the receiver asking to slow down, and the OTLP
specification puts how long to wait in a ``google.rpc.RetryInfo`` of the status details; the
same code also means a request larger than the receiver's message limit, which waiting does not
cure, so that case is told apart by its message and reported as the size problem it is.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Mapping
from typing import Final, cast

import grpc
from google.protobuf.message import DecodeError
from google.rpc.error_details_pb2 import RetryInfo
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.logs.v1.logs_service_pb2_grpc import LogsServiceStub
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2_grpc import MetricsServiceStub

from asz_plugins.otlp_push.transport import SendFailed, Taken, Throttled

__all__ = ["GrpcTransport", "retry_delay", "system_roots"]

_DETAILS_KEY: Final = "grpc-status-details-bin"
#: the call failed in transit or the receiver is not there: the next call would fail too
_RECEIVER_DOWN: Final = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED,
                                   grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED,
                                   grpc.StatusCode.UNIMPLEMENTED, grpc.StatusCode.INTERNAL,
                                   grpc.StatusCode.UNKNOWN, grpc.StatusCode.CANCELLED,
                                   grpc.StatusCode.ABORTED})


def system_roots() -> bytes | None:
    """The system's CA bundle, as OpenSSL finds it; ``None`` leaves gRPC its own roots."""
    paths = ssl.get_default_verify_paths()
    for candidate in (paths.cafile, paths.openssl_cafile):
        if candidate and os.path.isfile(candidate):
            try:
                with open(candidate, "rb") as bundle:
                    return bundle.read()
            except OSError:
                continue
    return None


def retry_delay(error: grpc.Call) -> float | None:
    """Seconds from the ``RetryInfo`` in an error's status details, when the receiver sent one."""
    for key, value in error.trailing_metadata() or ():
        if key != _DETAILS_KEY or not isinstance(value, bytes):
            continue
        status = Status()
        try:
            status.ParseFromString(value)
        except DecodeError:
            return None
        for detail in status.details:
            info = RetryInfo()
            if detail.Unpack(info):  # False for a detail of another type
                return float(info.retry_delay.seconds + info.retry_delay.nanos / 1e9)
    return None


class GrpcTransport:
    """One channel to ``host:port``; with ``tls``, TLS verified against the system's roots."""

    def __init__(self, endpoint: str, *, tls: bool, headers: Mapping[str, str],
                 timeout_s: float) -> None:
        self.endpoint = endpoint
        self.name = f"{'grpcs' if tls else 'grpc'}://{endpoint}"  #: as push.state names it
        self.timeout_s = timeout_s
        # gRPC metadata keys are lower case; a header given as "Authorization" means the same.
        self.metadata = tuple((k.lower(), v) for k, v in headers.items())
        # The largest request is one file larger than batch_bytes; a receiver's answer is small.
        options = [("grpc.max_send_message_length", -1)]
        if tls:
            credentials = grpc.ssl_channel_credentials(root_certificates=system_roots())
            self.channel = grpc.secure_channel(endpoint, credentials, options)
        else:
            self.channel = grpc.insecure_channel(endpoint, options)
        self.stub = LogsServiceStub(self.channel)  # type: ignore[no-untyped-call]
        self.metrics_stub = MetricsServiceStub(self.channel)  # type: ignore[no-untyped-call]

    def export(self, request: ExportLogsServiceRequest) -> Taken:
        try:
            response: ExportLogsServiceResponse = self.stub.Export(
                request, timeout=self.timeout_s, metadata=self.metadata)
        except grpc.RpcError as exc:
            raise self._refused(exc) from None
        partial = response.partial_success
        return Taken(rejected=partial.rejected_log_records, message=partial.error_message)

    def export_metrics(self, request: ExportMetricsServiceRequest) -> Taken:
        try:
            response: ExportMetricsServiceResponse = self.metrics_stub.Export(
                request, timeout=self.timeout_s, metadata=self.metadata)
        except grpc.RpcError as exc:
            raise self._refused(exc) from None
        partial = response.partial_success
        return Taken(rejected=partial.rejected_data_points, message=partial.error_message)

    def _refused(self, exc: grpc.RpcError) -> Throttled | SendFailed:
        call = cast(grpc.Call, exc)  # a unary call's error is also its Call, with the status
        code = call.code()
        details = call.details() or ""
        where = self.name
        if code == grpc.StatusCode.RESOURCE_EXHAUSTED and "larger than max" in details:
            return SendFailed(f"{where}: the request is larger than the receiver accepts "
                              f"({details}); raise the receiver's limit (an OpenTelemetry "
                              f"Collector's max_recv_msg_size_mib) or lower "
                              f"export.otlp.batch_bytes", stop=False)
        if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
            wait = retry_delay(call)
            return Throttled(f"{where} answered RESOURCE_EXHAUSTED ({details})"
                             + (f", retry after {wait:g}s" if wait is not None else ""), wait)
        if code == grpc.StatusCode.DEADLINE_EXCEEDED:
            return SendFailed(f"{where}: no answer within {self.timeout_s:g}s; nothing is recorded "
                              f"as sent, it goes again next pass")
        return SendFailed(f"{where} answered {code.name} ({details}); nothing is recorded as sent, "
                          f"it goes again next pass", stop=code in _RECEIVER_DOWN)

    def close(self) -> None:
        self.channel.close()
