"""Deriving ``agent.token.usage`` from the landed files into the root's ``_metrics/`` spool.

Every landed file is derived once, in seq order per session, and what it counts goes into one
write-once spool file named after it; its accounting is published first as a receipt, so a pass
cut short at any instant is run again from the saved state and writes the same bytes, counting
nothing twice and losing nothing. The first pass over a root reaches back ``metrics.lookback``
only; later passes derive every new file whole.

The steps, for each session in turn:

1. Apply the receipts of files not yet in ``metrics.state`` (a pass that stopped after them): a
   receipt only moves a series forward.
2. For each file not derived yet: read its calls (:mod:`~asz_core.metrics.calls`), reading on
   into the stream's next files when its last call may continue there.
3. Count each finished call not counted before: four points (``input``, ``output``,
   ``cacheRead``, ``cacheCreation``, zero included) in the minute its last fragment ended,
   unless that minute ended before the look-back.
4. Give each point its window: its minute, unless the series already has a point at or past it,
   in which case it follows that point; no two windows of a series overlap.
5. Stage the receipt (or use the one there; a file that counted nothing needs none) and the
   request for the spool, then take the file's effect into the state. A file that fails stops
   its session there, for the next pass.
6. Install what is staged, every session's together (:mod:`~asz_core.root.writeonce`): every
   receipt is durable under its name before any request is named, so a request is never in the
   spool without the accounting it was made by. A request whose name is taken was installed by
   a pass that stopped after it, from the same receipt, and is kept.

Then, once every request is durable, ``metrics.state`` is saved, once, in a spool that exists: a
root where no call was ever counted gets no ``_metrics/``. A commit that fails saves no state and
leaves every session owed: what it did install is taken again from its receipts next pass. A
killed pass's temporary files (dot names no reader takes) are swept by the next, in the spool and
in each session it derives.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from asz_core import __version__
from asz_core.metrics.calls import Call, read_calls, read_on
from asz_core.metrics.encode import Point, encode_request
from asz_core.metrics.spool import SPOOL_DIR, Receipt, read_receipt, receipt_path, spool_name
from asz_core.metrics.state import MetricsState, SessionCounts
from asz_core.root.durable import fsync_dir, make_dirs, sha256_of
from asz_core.root.layout import parse_file_name
from asz_core.root.storage import StorageRoot, landed_files, sweep_temporaries
from asz_core.root.writeonce import FaultSteps, Staged, WriteOnceGroup
from asz_core.sessiondata import SessionDataError

__all__ = ["TOKEN_USAGE", "TYPES", "DeriveStats", "derive_root"]

TOKEN_USAGE = "agent.token.usage"
TYPES = ("input", "output", "cacheRead", "cacheCreation")
#: the runtime's own exporter's description and unit, which the derived metric keeps
DESCRIBE = {TOKEN_USAGE: ("Number of tokens used", "tokens")}
#: the resource a derived request carries, as the runtime's exporter names itself; a push
#: normalises it to asz's identity on the way out
RUNTIME_SERVICE = "claude-code"
SCOPE = "github.com/apache/skywalking-ai-sessionizer/metrics"
MINUTE = 60_000_000_000
MILLI = 1_000_000
#: files staged past which the derivation installs them before it goes on, so that a first
#: derivation over a large root leaves few temporary files at a time
GROUP_FILES = 4096
RECEIPTS, REQUESTS = 0, 1  #: the tiers of step 6
STEPS = FaultSteps(fsync="metrics-fsync", install="metrics-install", names="metrics-names")


@dataclass
class DeriveStats:
    """What one derivation did, for the pass line."""

    files: int = 0       #: landed files derived
    requests: int = 0    #: spool files written
    points: int = 0
    skipped: int = 0     #: files with points older than the look-back
    counted: int = 0     #: calls counted (the look-back's included)
    errors: list[str] = field(default_factory=list)
    undone: list[str] = field(default_factory=list)  #: sessions with a file left for the next pass


def derive_root(root: Path, *, lookback_s: float, clock: Callable[[], int] = time.time_ns,
                sessions: list[str] | None = None) -> DeriveStats:
    """Derive what is new in ``root`` (every session, or ``sessions``). The caller holds the
    root's lock. ``MetricsStateError`` when ``metrics.state`` does not read."""
    spool = root / SPOOL_DIR
    state = MetricsState.load(spool)
    stats = DeriveStats()
    since = clock() - int(lookback_s * 1e9) if state.first and lookback_s > 0 else None
    sweep_temporaries(spool)  # what a killed pass was writing; the caller holds the root's lock
    looked = sessions if sessions is not None else list(StorageRoot(root).sessions())
    publisher = _Publisher(root)
    try:
        installed = True
        for session in looked:
            if since is not None:
                state.pending_since[session] = since
            if _derive_session(root, spool, session, state, stats, publisher):
                state.pending_since.pop(session, None)
            else:
                stats.undone.append(session)
            if len(publisher.group) >= GROUP_FILES and not (installed := publisher.install(stats)):
                break
        installed = installed and publisher.install(stats)
    finally:
        publisher.group.close()
    if not installed:  # step 6 failed: the state stays as it was, and owes every session
        stats.undone = list(looked)
        return stats
    # Nothing is written to a root with no call counted yet (a Kiro root, an empty one), and every
    # pass reads only the headers it must; the spool appears once a call is counted, even one the
    # look-back left out, so that the state says the first pass is over.
    if (stats.files or state.first) and (stats.counted or os.path.isdir(spool)):
        for created in make_dirs(spool):
            fsync_dir(created.parent)
        state.save(clock())
    return stats


@dataclass(frozen=True, slots=True)
class _Landed:
    """A landed file as its name and place say (nothing is opened to list a session)."""

    seq: int
    path: Path
    relpath: str
    kind: str
    stream: str | None  #: the directory under ``streams/``; ``None`` elsewhere


def _landed(root: Path, session: str) -> list[_Landed]:
    out = []
    for seq, path in sorted(landed_files(root / session)):
        name = parse_file_name(path.name)
        if name is None or name.skeleton:
            continue
        relpath = path.relative_to(root).as_posix()
        parts = relpath.split("/")
        stream = parts[2] if len(parts) == 4 and parts[1] == "streams" else None
        out.append(_Landed(seq, path, relpath, name.kind, stream))
    return out


class _Publisher:
    """The receipts and requests staged by a derivation, and their installation (step 6)."""

    def __init__(self, root: Path) -> None:
        self.group = WriteOnceGroup(root, STEPS)
        self.staged: list[Staged] = []
        self.requests: list[tuple[Staged, int]] = []  #: each request and its points

    def receipt(self, path: Path, receipt: Receipt, session: str) -> None:
        self.staged.append(self.group.stage(path, receipt.encode(), owner=session, tier=RECEIPTS))

    def request(self, path: Path, receipt: Receipt, session: str) -> None:
        staged = self.group.stage(path, receipt.request, owner=session, tier=REQUESTS, keep_existing=True)
        self.staged.append(staged)
        self.requests.append((staged, receipt.points))

    def install(self, stats: DeriveStats) -> bool:
        """Install what is staged; False (said in ``stats``) when a session's files were not."""
        failed = self.group.commit()
        for staged, points in self.requests:
            if staged.installed:
                stats.requests += 1
                stats.points += points
        errors = [s for s in self.staged if s.error is not None]
        self.staged, self.requests = [], []
        if not failed:
            return True
        first = errors[0] if errors else None
        stats.errors.append(f"metrics: the derived files of {len(failed)} session(s) were not installed"
                            f"{f' ({first.final}: {first.error})' if first else ''}; every session of this "
                            f"pass is derived again next pass")
        return False


def _derive_session(root: Path, spool: Path, session: str, state: MetricsState,
                    stats: DeriveStats, publisher: _Publisher) -> bool:
    """Steps 1-5 for one session; whether every file of it is derived."""
    try:
        files = _landed(root, session)
    except (SessionDataError, OSError) as exc:
        stats.errors.append(f"metrics: {session}: {exc}; its files are derived next pass")
        return False
    counts = state.session(session)
    since = state.pending_since.get(session)
    for lf in files:  # step 1
        path = receipt_path(root, session, lf.seq)
        if lf.relpath not in state.derived and os.path.exists(path):
            try:
                receipt = read_receipt(path, sha256_of(lf.path))
            except (ValueError, OSError):
                continue  # said when the loop below reaches it
            if receipt is not None:
                _commit(counts, receipt)
    swept = False
    for i, lf in enumerate(files):
        if lf.relpath in state.derived:
            continue
        if not swept:
            sweep_temporaries(receipt_path(root, session, lf.seq).parent)
            swept = True
        try:
            receipt = _receipt_for(root, lf, files[i + 1:], since, counts, publisher)
            if receipt.request:
                publisher.request(spool / spool_name(session, lf.seq), receipt, session)
        except (SessionDataError, OSError, ValueError) as exc:
            stats.errors.append(f"metrics: {lf.relpath}: {exc}; it is derived again next pass")
            return False
        stats.skipped += receipt.skipped
        stats.counted += len(receipt.counted)
        _commit(counts, receipt)
        state.derived[lf.relpath] = receipt.digest
        stats.files += 1
    return True


def _receipt_for(root: Path, lf: _Landed, following: list[_Landed], since: int | None,
                 counts: SessionCounts, publisher: _Publisher) -> Receipt:
    """Steps 2-5 for one file: the receipt an earlier pass published, else a new one, staged."""
    found = read_calls(lf.path)
    if not found.digest:  # a file that counts nothing (rule 1 of the calls): nothing to publish
        return Receipt("", (), {}, 0, False, b"")
    path = receipt_path(root, found.session, lf.seq)
    existing = read_receipt(path, found.digest)
    if existing is not None:
        return existing
    tail = found.open_tail
    if tail is not None and tail.id not in counts.calls:
        read_on(tail, [(f.path, f.kind) for f in following if f.stream == lf.stream])
    points, counted, skipped = _points(found.session, found.calls, since, counts)
    series = _windows(points, counts)
    request = encode_request(points, service=RUNTIME_SERVICE, scope=SCOPE, version=__version__,
                             describe=DESCRIBE) if points else b""
    receipt = Receipt(found.digest, tuple(counted), series, len(points), skipped, request)
    if not counted:  # nothing spooled, nothing counted: a later derivation cannot contradict it
        return receipt
    # under the root's lock, so no other derivation publishes it meanwhile; one found there at
    # the commit all the same stops the session, and is used by the next pass (step 1)
    publisher.receipt(path, receipt, found.session)
    return receipt


def _points(session: str, calls: list[Call], since: int | None,
            counts: SessionCounts) -> tuple[list[Point], list[str], bool]:
    """Step 3: the file's points by minute and series, before their windows."""
    sums: dict[tuple[int, str, str, str], int] = {}
    counted: list[str] = []
    skipped = False
    for call in calls:
        if call.id in counts.calls or not call.finished or call.usage is None or call.at_ns is None:
            continue
        counted.append(call.id)  # an old call is counted too, so replaying it cannot pass the look-back
        minute = call.at_ns - call.at_ns % MINUTE
        if since is not None and minute + MINUTE < since:
            skipped = True
            continue
        for kind, n in zip(TYPES, call.usage, strict=True):
            key = (minute, call.model, call.source, kind)
            sums[key] = sums.get(key, 0) + n
    points = []
    for (minute, model, source, kind), value in sorted(sums.items(), key=lambda kv: (kv[0][0], _key(*kv[0][1:]))):
        attributes = [("session.id", session), ("type", kind), ("query_source", source)]
        if model:
            attributes.append(("model", model))
        points.append(Point(TOKEN_USAGE, tuple(attributes), minute, minute + MINUTE, value))
    return points, counted, skipped


def _key(model: str, source: str, kind: str) -> str:
    return f"{model}|{source}|{kind}"


def _series_key(p: Point) -> str:
    attrs = dict(p.attributes)
    return _key(attrs.get("model", ""), attrs["query_source"], attrs["type"])


def _windows(points: list[Point], counts: SessionCounts) -> dict[str, int]:
    """Step 4, in place; the series' ends after these points."""
    ends: dict[str, int] = {}
    for i, p in enumerate(points):
        key = _series_key(p)
        previous = ends.get(key, counts.series.get(key))
        start, end = p.start_ns, p.end_ns
        if previous is not None and previous >= start:
            start = previous
            end = max(end, start + MILLI)
        points[i] = Point(p.metric, p.attributes, start, end, p.value)
        ends[key] = end
    return ends


def _commit(counts: SessionCounts, receipt: Receipt) -> None:
    """A file's effect on its session's counts; a series only moves forward."""
    counts.calls.update(receipt.counted)
    for key, end in receipt.series.items():
        if end > counts.series.get(key, 0):
            counts.series[key] = end
