"""OTLP/HTTP: one POST of the protobuf request to ``<base>/v1/logs`` (``/v1/metrics`` for the
metrics spool) per request.

A request counts as taken only on a 2xx answer whose body is empty or protobuf
(``application/x-protobuf`` or ``application/protobuf``, whatever the parameters): a login page
or a proxy's HTML answered with 200 must never leave files marked as sent that no receiver
stored. Redirects are refused for the same reason, and a receiver that moved is configured
again. The standard library's ``urllib`` carries it; a connection is kept per request only, as
HTTP/1.1 through urllib allows.
"""

from __future__ import annotations

import email.utils
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from http.client import HTTPException, HTTPMessage, HTTPResponse
from typing import IO, Final

from google.protobuf.message import DecodeError
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)

from asz_core import __version__
from asz_plugins.otlp_push.transport import SendFailed, Taken, Throttled

__all__ = ["HttpTransport", "parse_retry_after"]

LOGS_PATH: Final = "/v1/logs"
METRICS_PATH: Final = "/v1/metrics"
_PROTOBUF_TYPES: Final = ("application/x-protobuf", "application/protobuf")
_MAX_ANSWER: Final = 1 << 20  # an OTLP answer is a few bytes; more is not one
_REQUEST_REFUSED: Final = (400, 413)  # this request only: the next one may be taken


class _RefuseRedirects(urllib.request.HTTPRedirectHandler):
    """Turns a redirect into the error it is here (urllib raises ``HTTPError`` on ``None``)."""

    def redirect_request(self, req: urllib.request.Request, fp: IO[bytes], code: int, msg: str,
                         headers: HTTPMessage, newurl: str) -> None:
        return None


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delay-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class HttpTransport:
    """POSTs each request to ``<endpoint>/v1/logs`` with ``application/x-protobuf``."""

    def __init__(self, endpoint: str, headers: Mapping[str, str], timeout_s: float) -> None:
        self.url = endpoint.rstrip("/") + LOGS_PATH
        self.metrics_url = endpoint.rstrip("/") + METRICS_PATH
        self.headers = {"User-Agent": f"asz/{__version__}", **headers,
                        "Content-Type": "application/x-protobuf"}
        self.timeout_s = timeout_s
        self._opener = urllib.request.build_opener(_RefuseRedirects())

    def export(self, request: ExportLogsServiceRequest) -> Taken:
        return self._post(self.url, request.SerializeToString(), _logs_taken)

    def export_metrics(self, request: ExportMetricsServiceRequest) -> Taken:
        return self._post(self.metrics_url, request.SerializeToString(), _metrics_taken)

    def _post(self, url: str, data: bytes, parse: Callable[[bytes], Taken]) -> Taken:
        post = urllib.request.Request(url, data=data, headers=self.headers, method="POST")
        try:
            with self._opener.open(post, timeout=self.timeout_s) as answer:
                return self._taken(url, answer, parse)
        except urllib.error.HTTPError as exc:
            with exc:
                raise self._refused(url, exc) from None
        except urllib.error.URLError as exc:
            raise SendFailed(f"{url}: cannot connect ({exc.reason}); nothing is recorded as "
                             f"sent, it goes again next pass") from None
        except TimeoutError:
            raise SendFailed(f"{url}: no answer within {self.timeout_s:g}s; nothing is "
                             f"recorded as sent, it goes again next pass") from None
        except (OSError, HTTPException) as exc:
            raise SendFailed(f"{url}: the connection failed ({type(exc).__name__}: {exc}); "
                             f"nothing is recorded as sent, it goes again next pass") from None

    def close(self) -> None:
        """Nothing stays open between requests (urllib opens a connection per request)."""

    def _taken(self, url: str, answer: HTTPResponse, parse: Callable[[bytes], Taken]) -> Taken:
        status = f"{answer.status} {answer.reason}"
        body = answer.read(_MAX_ANSWER + 1)
        if not body:
            return Taken()
        media = (answer.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if media not in _PROTOBUF_TYPES or len(body) > _MAX_ANSWER:
            raise SendFailed(f"{url} answered {status} with {media or 'no content type'}, not "
                             f"an OTLP response; nothing is recorded as sent (is the endpoint the "
                             f"receiver's base URL?)")
        try:
            return parse(body)
        except DecodeError:
            raise SendFailed(f"{url} answered {status} with a body that is not an OTLP "
                             f"response; nothing is recorded as sent") from None

    def _refused(self, url: str, exc: urllib.error.HTTPError) -> Throttled | SendFailed:
        status = f"{exc.code} {exc.reason}"
        if exc.code == 429:
            wait = parse_retry_after(exc.headers.get("Retry-After"))
            return Throttled(f"{url} answered {status}"
                             + (f", retry after {wait:g}s" if wait is not None else ""), wait)
        if 300 <= exc.code < 400:
            where = exc.headers.get("Location") or "elsewhere"
            return SendFailed(f"{url} answered {status} to {where}; redirects are not "
                              f"followed, set export.otlp.endpoint to the receiver itself")
        detail = _status_text(exc)
        return SendFailed(f"{url} answered {status}{detail}; nothing is recorded as sent, it "
                          f"goes again next pass", stop=exc.code not in _REQUEST_REFUSED)


def _logs_taken(body: bytes) -> Taken:
    partial = ExportLogsServiceResponse.FromString(body).partial_success
    return Taken(rejected=partial.rejected_log_records, message=partial.error_message)


def _metrics_taken(body: bytes) -> Taken:
    partial = ExportMetricsServiceResponse.FromString(body).partial_success
    return Taken(rejected=partial.rejected_data_points, message=partial.error_message)


def _status_text(exc: urllib.error.HTTPError) -> str:
    """The receiver's reason: OTLP/HTTP sends a ``google.rpc.Status``; others send text."""
    try:
        body = exc.read(_MAX_ANSWER)
    except (OSError, HTTPException):
        return ""
    media = (exc.headers.get("Content-Type") or "").split(";")[0].strip().lower()
    text = ""
    if media in _PROTOBUF_TYPES and body:
        status = Status()
        try:
            status.ParseFromString(body)
            text = status.message
        except DecodeError:
            text = ""
    elif media.startswith("text/") or media == "application/json":
        text = body.decode("utf-8", "replace")
    first = text.strip().splitlines()[0][:200] if text.strip() else ""
    return f" ({first})" if first else ""
