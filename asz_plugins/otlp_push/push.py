"""One push: every landed file not sent yet, session by session, in seq order.

Sessions go in the order they were first landed (the earliest stamp among their files), so
during a long first push sessions become complete at the receiver one after another. Within a
session files go in seq order, then the rounds of its chain in round order (``asz.format sf``),
so a receiver holds a round's files before the round. Files are grouped into requests of at most ``batch_bytes`` of
file bytes; a file larger than that goes alone. A file is recorded in ``push.state`` only after
the request carrying it was taken, so anything short of that — a timeout, a refused connection,
a receiver killed mid-request — leaves it for the next push, and nothing recorded is ever sent
again (``push.state`` records what was sent, as upstream's does, not to which receiver).

Listing what is pending only lists directories and looks names up in ``push.state``; a file is
read (once through the strict reader, once for its bytes) only when it is about to be sent, so
a push with nothing new costs next to nothing and holds at most one request's files in memory.

Then, when ``export.otlp.metrics`` is on, the metrics spool goes by the same rules
(:mod:`~asz_plugins.otlp_push.metrics`); ``export.otlp.logs`` off sends the spool alone.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asz_core.assembly.chain import Chain
from asz_core.assembly.flow import RoundError
from asz_core.cli.console import human_bytes
from asz_core.redact import redact_text
from asz_core.root.durable import open_landed
from asz_core.root.layout import parse_file_name
from asz_core.root.storage import StorageRoot, landed_files
from asz_core.sessiondata import SessionDataError, parse_instant
from asz_plugins.otlp_push.config import OtlpConfig
from asz_plugins.otlp_push.limiter import WireBudget
from asz_plugins.otlp_push.metrics import SpoolFile, batches, metrics_request, pending_spool, read_spool
from asz_plugins.otlp_push.records import (
    Body,
    LandedInfo,
    Resources,
    build_request,
    describe,
    describe_round,
    read_body,
)
from asz_plugins.otlp_push.state import PushState, PushStateError
from asz_plugins.otlp_push.transport import SendFailed, Taken, Throttled, Transport

__all__ = ["PushResult", "make_transport", "push_root"]


@dataclass
class PushResult:
    """What one push did: the push line, and its exit status."""

    receiver: str
    started_ns: int = 0
    files: int = 0        #: files the receiver took (recorded in push.state)
    metrics: int = 0      #: metrics spool files the receiver took (recorded in push.state too)
    bytes: int = 0        #: their bytes, as landed
    wire: int = 0         #: encoded bytes of every request sent, taken or not
    requests: int = 0     #: requests sent, taken or not
    rejected: int = 0     #: log records the receiver said it rejected (partial success)
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    waiting: int = 0      #: files left for a later push (throttled, or the receiver failed)
    throttled: bool = False
    retry_after_s: float | None = None
    paused_s: float = 0.0  #: waited for max_bytes_per_minute
    elapsed_s: float = 0.0

    @property
    def failed(self) -> bool:
        """Errors fail a push; being throttled does not (the rest waits, as waiting does)."""
        return bool(self.errors)

    def line(self) -> str:
        """``[17:14:09] push files=51 bytes=1.0MB wire=1.0MB requests=1 rejected=0 errors=0 (0.210s)``."""
        clock = time.strftime("%H:%M:%S", time.localtime(self.started_ns / 1e9))
        return (f"[{clock}] push files={self.files} bytes={human_bytes(self.bytes)} "
                f"wire={human_bytes(self.wire)} requests={self.requests} rejected={self.rejected} "
                f"errors={len(self.errors)} ({self.elapsed_s:.3f}s)")

    def as_dict(self) -> dict[str, Any]:
        return {"receiver": self.receiver, "files": self.files, "metrics": self.metrics, "bytes": self.bytes,
                "wire": self.wire, "requests": self.requests, "rejected": self.rejected,
                "errors": len(self.errors), "waiting": self.waiting, "throttled": self.throttled,
                "retry_after_s": self.retry_after_s, "paused_s": round(self.paused_s, 3),
                "elapsed_s": round(self.elapsed_s, 3), "failed": self.failed,
                "errors_list": [redact_text(e) for e in self.errors],
                "notes": [redact_text(n) for n in self.notes]}


def make_transport(cfg: OtlpConfig) -> Transport:
    if cfg.protocol == "http":
        from asz_plugins.otlp_push.transport_http import HttpTransport

        return HttpTransport(cfg.endpoint, cfg.headers, cfg.timeout_s)
    from asz_plugins.otlp_push.transport_grpc import GrpcTransport  # grpc only when it is the protocol

    return GrpcTransport(cfg.endpoint, tls=cfg.tls, headers=cfg.headers, timeout_s=cfg.timeout_s)


@dataclass
class _Session:
    """One session's files not yet taken by the receiver, by seq."""

    id: str
    first_stamp: str
    pending: list[tuple[int, Path]]
    others: list[Path]  #: the session's files already taken, read only for a time if needed
    #: the session's rounds not yet taken, in round order: sent after its files
    rounds: list[Path] = field(default_factory=list)


def _sessions(root: Path, state: PushState, errors: list[str]) -> list[_Session]:
    """Every session with something to send, the one landed first first; names only. A chain
    whose rounds cannot be listed (a link on the way) sends none of them, said in ``errors``."""
    out = []
    for session in StorageRoot(root).sessions():
        pending: list[tuple[int, Path]] = []
        others: list[Path] = []
        stamps = []
        for seq, path in landed_files(root / session):
            name = parse_file_name(path.name)
            if name is None or name.skeleton:
                continue  # a skeleton is a local stand-in for removed content: never sent
            stamps.append(name.stamp)
            relpath = path.relative_to(root).as_posix()
            if state.is_pushed(relpath):
                others.append(path)
            else:
                pending.append((seq, path))
        try:
            listed = Chain(root, session).files()
        except RoundError as exc:
            errors.append(f"{session}: its rounds are not sent: {exc}")
            listed = []
        rounds = [rf.path for rf in listed if not state.is_pushed(rf.path.relative_to(root).as_posix())]
        if pending or rounds:
            pending.sort()
            out.append(_Session(session, min(stamps, default=""), pending, others, rounds))
    out.sort(key=lambda s: (s.first_stamp, s.id))
    return out


class _Pusher:
    """The state of one push while it runs."""

    def __init__(self, root: Path, cfg: OtlpConfig, resources: Resources,
                 transport_factory: Callable[[OtlpConfig], Transport], budget: WireBudget,
                 clock: Callable[[], int]) -> None:
        self.root = root
        self.cfg = cfg
        self.resources = resources
        self.transport_factory = transport_factory
        self.budget = budget
        self.clock = clock
        self.state = PushState.load(root)
        self.receiver = cfg.receiver
        self.result = PushResult(cfg.receiver, started_ns=clock())
        self.transport: Transport | None = None
        self.session_time: dict[str, int | None] = {}
        self.session_adapter: dict[str, str] = {}
        self.skipped = 0  #: files not sent because they do not read by the rules

    def run(self) -> PushResult:
        perf = time.perf_counter()
        sessions = _sessions(self.root, self.state, self.result.errors) if self.cfg.logs else []
        spooled = pending_spool(self.root, self.state.is_pushed) if self.cfg.metrics else []
        total = sum(len(s.pending) + len(s.rounds) for s in sessions) + len(spooled)
        try:
            going = True
            for batch in self._batches(sessions):
                bodies = []
                for info in batch:
                    try:
                        bodies.append(read_body(info))
                    except (SessionDataError, OSError) as exc:
                        self._damaged(exc)
                if bodies and not self._send(bodies):
                    going = False
                    break
            if going and spooled:  # the metrics after the files they were derived from
                for spool_batch in batches(self._spool_files(spooled), self.cfg.batch_bytes):
                    if not self._send_metrics(spool_batch):
                        break
        finally:
            if self.transport is not None:
                self.transport.close()
        self.result.waiting = max(0, total - self.result.files - self.result.metrics - self.skipped)
        self.result.elapsed_s = time.perf_counter() - perf
        return self.result

    def _spool_files(self, pending: list[tuple[str, str]]) -> Iterator[SpoolFile]:
        for relpath, session in pending:
            try:
                yield read_spool(self.root, relpath, session)
            except (ValueError, OSError) as exc:
                self.skipped += 1
                self.result.errors.append(str(exc))

    def _service_of_session(self, session: str) -> str:
        """The service of a session's metrics: its files' runtime, as their log records say."""
        if self.cfg.service_name:
            return self.cfg.service_name
        adapter = self.session_adapter.get(session)
        if adapter is None:
            paths = [path for _seq, path in sorted(landed_files(self.root / session))]
            adapter = self.session_adapter[session] = self._adapter_of(paths[:1])
        name = adapter.rpartition("/")[0] or adapter
        return self.resources.runtime_of(name)

    def _send_metrics(self, files: list[SpoolFile]) -> bool:
        """Send one metrics request; record its spool files when taken. ``False`` stops the push."""
        request = metrics_request(files, self.resources, self._service_of_session)
        taken = self._deliver(request, lambda t: t.export_metrics(request),
                              [(f.relpath, f.sha256) for f in files], "metrics file(s)")
        if isinstance(taken, bool):
            return taken
        self.result.metrics += len(files)
        if taken.rejected:
            self.result.rejected += taken.rejected
            self.result.notes.append(
                f"{self.receiver} took a metrics request and rejected {taken.rejected} of its points "
                f"({taken.message or 'no reason given'}); its spool files are marked rejected in "
                f"push.state and not sent again")
        return True

    def _damaged(self, exc: Exception) -> None:
        self.skipped += 1
        self.result.errors.append(f"{exc}; a landed file that does not read by the rules is not "
                                  f"sent (`asz-pipeline verify` says more)")

    def _batches(self, sessions: list[_Session]) -> Iterator[list[LandedInfo]]:
        """Files in order, cut into requests of at most ``batch_bytes`` (a larger file alone)."""
        limit = self.cfg.batch_bytes
        batch: list[LandedInfo] = []
        size = 0
        for session in sessions:
            for info in self._described(session):
                if batch and size + info.size > limit:
                    yield batch
                    batch, size = [], 0
                batch.append(info)
                size += info.size
                if size >= limit:
                    yield batch
                    batch, size = [], 0
        if batch:
            yield batch

    def _described(self, session: _Session) -> Iterator[LandedInfo]:
        infos = []
        for _seq, path in session.pending:
            try:
                infos.append(describe(self.root, path))
            except (SessionDataError, OSError) as exc:
                self._damaged(exc)
        times = [i.through_ns for i in infos if i.through_ns is not None]
        self.session_time[session.id] = max(times) if times else None
        if any(i.through_ns is None for i in infos) and not times:
            self.session_time[session.id] = self._latest_of(session.others)
        yield from infos
        # then its rounds: a receiver rebuilds a session once it holds both
        adapter = next((i.adapter for i in infos), "") or self._adapter_of(session.others)
        for path in session.rounds:
            try:
                yield describe_round(self.root, path, adapter)
            except (SessionDataError, OSError) as exc:
                self._damaged(exc)

    def _adapter_of(self, paths: list[Path]) -> str:
        """The adapter that landed a session's files already sent (a round's service is its runtime)."""
        for path in paths:
            try:
                with open_landed(path) as landed:
                    return str(landed.header.get("adapter") or "")
            except (SessionDataError, OSError):
                continue
        return ""

    def _latest_of(self, paths: list[Path]) -> int | None:
        """The latest record time among files already sent (for a file with no time of its own)."""
        latest = None
        for path in paths:
            try:
                info = describe(self.root, path)
            except (SessionDataError, OSError):
                continue
            if info.through_ns is not None and (latest is None or info.through_ns > latest):
                latest = info.through_ns
        return latest

    def _time_of(self, info: LandedInfo) -> int:
        """The file's last record time; a file with none (a child's meta file) takes its
        session's latest, which is inside the session's range and cannot go stale; 0 (unknown
        to OTLP) when the session has no time at all."""
        if info.round is not None:  # the session's last activity as of the round: its head is newest
            return parse_instant(info.round.get("session_through_time")) or info.through_ns or 0
        if info.through_ns is not None:
            return info.through_ns
        return self.session_time.get(info.session) or 0

    def _send(self, bodies: list[Body]) -> bool:
        """Send one request; record it when taken. ``False`` stops the push."""
        request = build_request(bodies, self.resources, time_of=self._time_of,
                                observed_ns=self.clock())
        files = [(b.info.relpath, b.sha256) for b in bodies]
        size = sum(b.size for b in bodies)
        bodies.clear()  # the request holds its own copy; keep one, not two
        taken = self._deliver(request, lambda t: t.export(request), files, "file(s)")
        if isinstance(taken, bool):
            return taken
        self.result.files += len(files)
        self.result.bytes += size
        if taken.rejected:
            self.result.rejected += taken.rejected
            self.result.notes.append(
                f"{self.receiver} took a request and rejected {taken.rejected} of its "
                f"{len(files)} records ({taken.message or 'no reason given'}); its files are "
                f"marked rejected in push.state and not sent again")
        return True

    def _deliver(self, request: Any, export: Callable[[Transport], Taken], files: list[tuple[str, str]],
                 what: str) -> Taken | bool:
        """The one way a request goes out, logs or metrics: within the wire budget, counted, and
        its ``files`` recorded in ``push.state`` once the receiver took them (all marked
        rejected when it rejected any). Returns what the receiver took; when it took nothing,
        whether the push goes on (a throttle or a failure that stops it: ``False``)."""
        wire = request.ByteSize()
        self.result.paused_s += self.budget.take(wire)
        if self.transport is None:
            self.transport = self.transport_factory(self.cfg)
        self.result.requests += 1
        self.result.wire += wire
        try:
            taken = export(self.transport)
        except Throttled as exc:
            self.budget.empty()
            self.result.throttled = True
            self.result.retry_after_s = exc.retry_after_s
            self.result.notes.append(f"{exc}; the rest waits for the next push")
            return False
        except SendFailed as exc:
            self.result.errors.append(str(exc))
            return not exc.stop
        rejected = [relpath for relpath, _ in files] if taken.rejected else []
        try:
            self.state.record(self.receiver, files, rejected, self.clock())
        except OSError as exc:
            self.result.errors.append(f"{self.state.path}: cannot be written ({exc.strerror or exc}); "
                                      f"the receiver took {len(files)} {what} that will be sent "
                                      f"again next push")
            return False
        return taken


def push_root(root: Path, cfg: OtlpConfig, *, runtime_of: Callable[[str], str],
              transport_factory: Callable[[OtlpConfig], Transport] = make_transport,
              budget: WireBudget | None = None,
              clock: Callable[[], int] = time.time_ns) -> PushResult:
    """Send every landed file of ``root`` the receiver of ``cfg`` has not taken.

    The caller holds the root's lock, so no pass writes ``push.state`` meanwhile.
    ``runtime_of`` turns an adapter's name into its runtime's display name ("Claude Code").
    """
    if not os.path.isdir(root):
        result = PushResult(cfg.receiver, started_ns=clock())
        result.notes.append(f"{root} holds no storage root yet; nothing to send")
        return result
    resources = Resources(service_name=cfg.service_name, instance_id=cfg.instance_id,
                          layer=cfg.layer, runtime_of=runtime_of)
    try:
        pusher = _Pusher(root, cfg, resources, transport_factory,
                         budget or WireBudget(cfg.max_bytes_per_minute), clock)
    except PushStateError as exc:
        result = PushResult(cfg.receiver, started_ns=clock())
        result.errors.append(str(exc))
        return result
    return pusher.run()
