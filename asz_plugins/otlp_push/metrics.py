"""The metrics spool on the wire: each ``_metrics/`` request not sent yet, after the files.

1. A spool file is pending while ``push.state`` has no ``pushed`` line for
   ``_metrics/<name>``; it is recorded there, with its digest, only once the request carrying it
   was taken, so a refused or unanswered request leaves it for the next push and a taken one is
   never sent again.
2. A spool file that does not decode as an OTLP metrics request is not sent, and said.
3. On the way out the resource is asz's identity, as the logs carry it (the service: the
   runtime of the session's adapter unless ``service_name`` names one; the sender; the layer);
   the points, the metric and the derivation's own scope are sent as spooled.
4. Requests hold at most ``batch_bytes`` of spool bytes (a larger file alone), spend the same
   ``max_bytes_per_minute`` budget, and stop on the same answers as the files do.
5. A receiver that rejects some points (partial success) took the request: its files are marked
   sent and ``rejected``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

from asz_core.metrics.spool import SPOOL_DIR
from asz_core.root import confined
from asz_core.root.durable import read_small
from asz_plugins.otlp_push.records import Resources

__all__ = ["SpoolFile", "batches", "metrics_request", "pending_spool", "read_spool"]

_NAME_PREFIX, _NAME_SUFFIX = "metrics-", "-local.pb"


@dataclass(frozen=True, slots=True)
class SpoolFile:
    relpath: str   #: ``_metrics/<name>``, the key in ``push.state``
    session: str
    data: bytes
    sha256: str


def _session_of(name: str) -> str | None:
    """``metrics-<session>-<seq>-local.pb`` → the session."""
    if not (name.startswith(_NAME_PREFIX) and name.endswith(_NAME_SUFFIX)):
        return None
    session, _, seq = name[len(_NAME_PREFIX):-len(_NAME_SUFFIX)].rpartition("-")
    return session if session and seq.isdigit() else None


def pending_spool(root: Path, is_pushed: Callable[[str], bool]) -> list[tuple[str, str]]:
    """Rule 1: ``(relpath, session)`` of each spool file not sent, in name order (a session's
    files in seq order); names only, nothing read."""
    try:
        names = sorted(confined.listdir(root / SPOOL_DIR))
    except (FileNotFoundError, NotADirectoryError, confined.LinkRefused):
        return []
    out = []
    for name in names:
        session = _session_of(name)
        relpath = f"{SPOOL_DIR}/{name}"
        if session is not None and not is_pushed(relpath):
            out.append((relpath, session))
    return out


def read_spool(root: Path, relpath: str, session: str) -> SpoolFile:
    """A spool file's bytes; ``ValueError`` when it is not an OTLP metrics request (rule 2)."""
    data = read_small(root / relpath)
    if data is None:
        raise FileNotFoundError(f"{root / relpath}: gone before it was sent")
    try:
        ExportMetricsServiceRequest.FromString(data)
    except DecodeError:
        raise ValueError(f"{root / relpath}: is not an OTLP metrics request; not sent (move it aside, "
                         f"and remove its file's line in metrics.state to derive it again)") from None
    return SpoolFile(relpath, session, data, hashlib.sha256(data).hexdigest())


def batches(files: Iterator[SpoolFile], limit: int) -> Iterator[list[SpoolFile]]:
    """Rule 4's cut: at most ``limit`` spool bytes a request, a larger file alone."""
    batch: list[SpoolFile] = []
    size = 0
    for f in files:
        if batch and size + len(f.data) > limit:
            yield batch
            batch, size = [], 0
        batch.append(f)
        size += len(f.data)
        if size >= limit:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def metrics_request(files: list[SpoolFile], resources: Resources,
                    service_of: Callable[[str], str]) -> ExportMetricsServiceRequest:
    """Rule 3: one request for ``files``, in order, each under asz's resource for its session."""
    request = ExportMetricsServiceRequest()
    for f in files:
        spooled = ExportMetricsServiceRequest.FromString(f.data)
        for resource_metrics in spooled.resource_metrics:
            resource_metrics.resource.CopyFrom(resources.resource(service_of(f.session)))
            request.resource_metrics.append(resource_metrics)
    return request
