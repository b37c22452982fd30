"""One OTLP log record per landed file: what a file is (read once, streaming), and its record.

:func:`describe` reads a landed file with the core's strict reader, one record at a time, to
learn its header, its record count and its earliest and latest record times; the body sent is
read separately, as the bytes on disk (:func:`read_body`), and its digest is taken from those
very bytes, so what a receiver checks is what it received. A body is held only while the
request carrying it is built and sent: at most one batch at a time.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope, KeyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord, ScopeLogs
from opentelemetry.proto.resource.v1.resource_pb2 import Resource

from asz_core import __version__
from asz_core.root.durable import open_landed, read_bytes
from asz_core.sessiondata import SessionDataError, format_instant, parse_instant

__all__ = ["Body", "LandedInfo", "Resources", "build_request", "describe", "describe_round", "read_body"]

FORMAT = "sd"
SCOPE_NAME = "asz"


@dataclass(frozen=True, slots=True)
class LandedInfo:
    """A landed file as a push needs it; nothing of its body is kept."""

    path: Path
    relpath: str            #: root-relative, forward slashes: ``asz.file`` and the state key
    session: str
    seq: int
    kind: str
    schema: str             #: ``sd/1``: the version in the file's first line
    adapter: str            #: the header's ``adapter``, e.g. ``claude-code-local/0.1.0``
    stream: str | None
    run: str | None         #: the header's ``batch``: the workflow run a file belongs to
    size: int
    lines: int              #: header, records and closing line
    from_ns: int | None     #: earliest record time
    through_ns: int | None  #: latest record time
    #: a round's header (``asz.format`` ``sf``); ``None`` for a landed file
    round: dict[str, Any] | None = None

    @property
    def adapter_name(self) -> str:
        """The adapter's name without its contract version."""
        name, _, _version = self.adapter.rpartition("/")
        return name or self.adapter


@dataclass(frozen=True, slots=True)
class Body:
    """A file's bytes as read for sending, with the digest a receiver checks them against.

    OTLP carries them as the body's ``string_value``, as the upstream sends them: a landed
    file is UTF-8 by the format's rules, and a protobuf string is UTF-8 on the wire, so the
    receiver gets exactly the bytes on disk.
    """

    info: LandedInfo
    data: bytes
    sha256: str

    @property
    def size(self) -> int:
        return len(self.data)


def describe(root: Path, path: Path) -> LandedInfo:
    """Read ``path`` through the strict reader; ``SessionDataError`` if it is damaged."""
    first: int | None = None
    last: int | None = None
    records = 0
    with open_landed(path) as landed:
        header = landed.header
        for record in landed:
            records += 1
            instant = parse_instant(record.time)
            if instant is None:
                continue
            if first is None or instant < first:
                first = instant
            if last is None or instant > last:
                last = instant
    seq = header.get("seq")
    return LandedInfo(
        path=path, relpath=path.relative_to(root).as_posix(), session=str(header["session"]),
        seq=seq if isinstance(seq, int) else 0, kind=str(header["kind"]),
        schema=str(header["schema"]), adapter=str(header.get("adapter") or ""),
        stream=_text(header.get("stream")), run=_text(header.get("batch")),
        size=os.stat(path, follow_symlinks=False).st_size,  # never what a link planted since points at
        lines=records + 2, from_ns=first, through_ns=last)


def describe_round(root: Path, path: Path, adapter: str) -> LandedInfo:
    """Read a round strictly (``SessionDataError`` when a reader must reject it); ``adapter`` is
    the one that landed its session's files, whose runtime is the round's service too."""
    from asz_core.assembly.flow import RoundError, read_round

    data = read_bytes(path)
    try:
        header = read_round(data).header
    except RoundError as exc:
        raise SessionDataError(f"is a round a reader rejects: {exc}", path=str(path)) from None
    return LandedInfo(
        path=path, relpath=path.relative_to(root).as_posix(), session=str(header["session"]), seq=0,
        kind="round", schema=str(header["schema"]), adapter=adapter, stream=None, run=None,
        size=len(data), lines=data.count(b"\n"), from_ns=parse_instant(header.get("from_time")),
        through_ns=parse_instant(header.get("through_time")), round=header)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def read_body(info: LandedInfo) -> Body:
    """The file's bytes, unchanged; ``SessionDataError`` if they are not what was described.

    Landed files never change, so a difference means the root was damaged or tampered with
    between the two reads; such a file is not sent.
    """
    data = read_bytes(info.path)
    lines = data.count(b"\n")
    if lines != info.lines or not data.endswith(b"\n"):
        raise SessionDataError(f"has {lines} lines now, {info.lines} when it was read; not sent",
                               path=str(info.path))
    try:
        data.decode("utf-8")  # checked here, one file at a time, so a request never fails on it
    except UnicodeDecodeError as exc:
        raise SessionDataError(f"is not UTF-8 at byte {exc.start}; not sent", path=str(info.path)) from None
    return Body(info, data, hashlib.sha256(data).hexdigest())


def _kv(key: str, value: str | int) -> KeyValue:
    any_value = AnyValue(int_value=value) if isinstance(value, int) else AnyValue(string_value=value)
    return KeyValue(key=key, value=any_value)


class Resources:
    """The resource of each file: the service is the runtime of the file's adapter unless
    ``service_name`` names one; the rest is the same for every file."""

    def __init__(self, *, service_name: str, instance_id: str, layer: str,
                 runtime_of: Callable[[str], str]) -> None:
        self.service_name = service_name
        self.instance_id = instance_id
        self.layer = layer
        self.runtime_of = runtime_of

    def service_of(self, info: LandedInfo) -> str:
        return self.service_name or self.runtime_of(info.adapter_name)

    def resource(self, service: str) -> Resource:
        return Resource(attributes=[
            _kv("service.name", service),
            _kv("service.instance.id", self.instance_id),
            _kv("service.layer", self.layer),
            _kv("telemetry.sdk.name", "asz"),
            _kv("telemetry.sdk.language", "python"),
            _kv("telemetry.sdk.version", __version__),
        ])


def _round_attributes(body: Body) -> list[tuple[str, Any]]:
    """A round's attributes: what it is, and what a list of conversations shows as of it,
    copied off its header, so a receiver lists conversations without folding."""
    info, h = body.info, body.info.round or {}
    out: list[tuple[str, Any]] = [
        ("asz.format", "sf"), ("asz.format.version", info.schema), ("asz.file", info.relpath),
        ("asz.file.kind", "round"), ("asz.file.digest", body.sha256), ("asz.lines", info.lines),
        ("asz.session", info.session), ("asz.conversation", str(h.get("conversation", ""))),
        ("asz.round", int(h.get("round", 0))),
    ]
    for key, attr in (("from_time", "asz.from_time"), ("through_time", "asz.through_time"),
                      ("session_from_time", "asz.session.from_time"),
                      ("session_through_time", "asz.session.through_time"), ("title", "asz.conversation.title")):
        if isinstance(h.get(key), str) and h[key]:
            out.append((attr, h[key]))
    for key in ("talks", "steps", "streams", "segments", "unresolved"):
        if type(h.get(key)) is int:
            out.append((f"asz.conversation.{key}", h[key]))
    return out


def log_record(body: Body, *, time_ns: int, observed_ns: int) -> LogRecord:
    """The record of one file: body = its bytes; attributes say what the file is."""
    info = body.info
    if info.round is not None:
        return LogRecord(time_unix_nano=time_ns, observed_time_unix_nano=observed_ns,
                         body=AnyValue(string_value=body.data),  # type: ignore[arg-type]
                         attributes=[_kv(k, v) for k, v in _round_attributes(body)])
    attributes: list[tuple[str, Any]] = [
        ("asz.format", FORMAT),
        ("asz.format.version", info.schema),
        ("asz.file", info.relpath),
        ("asz.file.kind", info.kind),
        ("asz.file.digest", body.sha256),
        ("asz.lines", info.lines),
        ("asz.session", info.session),
        ("asz.seq", info.seq),
    ]
    if info.stream is not None and info.kind != "provider_body":
        attributes.append(("asz.stream", info.stream))
    if info.run is not None:
        attributes.append(("asz.run", info.run))
    if info.from_ns is not None and info.through_ns is not None:
        attributes.append(("asz.from_time", format_instant(info.from_ns)))
        attributes.append(("asz.through_time", format_instant(info.through_ns)))
    return LogRecord(time_unix_nano=time_ns, observed_time_unix_nano=observed_ns,
                     # protobuf takes a string field's UTF-8 bytes as they are: no decoded copy
                     body=AnyValue(string_value=body.data),  # type: ignore[arg-type]
                     attributes=[_kv(k, v) for k, v in attributes])


def build_request(bodies: Sequence[Body], resources: Resources, *,
                  time_of: Callable[[LandedInfo], int], observed_ns: int) -> ExportLogsServiceRequest:
    """One request for ``bodies``, in their order; consecutive files of one service share a
    ``ResourceLogs``, so the order a receiver reads them in is the order they were given."""
    request = ExportLogsServiceRequest()
    current_service: str | None = None
    scope_logs: ScopeLogs | None = None
    for body in bodies:
        service = resources.service_of(body.info)
        if scope_logs is None or service != current_service:
            resource_logs = request.resource_logs.add(resource=resources.resource(service))
            scope_logs = resource_logs.scope_logs.add(
                scope=InstrumentationScope(name=SCOPE_NAME, version=__version__))
            current_service = service
        scope_logs.log_records.append(
            log_record(body, time_ns=time_of(body.info), observed_ns=observed_ns))
    return request
