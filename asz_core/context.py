"""The pass context every adapter and plugin of one pass shares, and each adapter's view of it.

:class:`PassContext` holds what is common to the pass: the root, the clock, dry-run, the
reporter, every adapter's counters. What lands is counted and announced to plugins file by file
(``asz_file_landed``), not kept: a pass holds nothing per landed file, so its memory does not
grow with the corpus. :class:`AdapterContext` is what one adapter's hooks receive: its own
options and counters, its session filter, and the way to open a session for landing so that
what it lands is counted and announced.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from asz_core.filters import SessionFilter
from asz_core.quietpass import PassStamps
from asz_core.root.settled import SettledSessions

if TYPE_CHECKING:
    from asz_core.config import Config
    from asz_core.host import PluginHost
    from asz_core.root.landing import LandedFile
    from asz_core.root.storage import SessionHandle, StorageRoot

__all__ = [
    "MAX_WINDOWS",
    "AdapterContext",
    "AdapterCounters",
    "Clock",
    "PassContext",
    "PassError",
    "PassSummary",
    "Reporter",
]

_V = TypeVar("_V")

#: At most this many files land from one source in one pass; the rest is counted pending.
MAX_WINDOWS = 65

Clock = Callable[[], int]
"""Returns the time now in nanoseconds since the epoch (``time.time_ns`` unless injected)."""


class Reporter(Protocol):
    """Where a pass tells a person what is happening (the CLI prints; tests collect)."""

    def warn(self, message: str) -> None: ...

    def progress(self, adapter: str, done: int, total: int) -> None:
        """``done`` sessions of ``adapter`` landed, of ``total`` (0 when not known ahead: the
        adapter yields its claims as it goes)."""


class QuietReporter:
    """A reporter that keeps warnings and shows nothing."""

    def __init__(self) -> None:
        self.warnings: list[str] = []

    def warn(self, message: str) -> None:
        self.warnings.append(message)

    def progress(self, adapter: str, done: int, total: int) -> None:
        pass


@dataclass
class AdapterCounters:
    """What one adapter found and did in one pass."""

    found: int = 0        #: units discovered (sessions, body files, ...)
    sessions: int = 0     #: sessions claimed (set by the host from the claims)
    sources: int = 0      #: source files seen
    landed: int = 0       #: files landed
    records: int = 0      #: records landed
    bytes: int = 0        #: bytes landed, as written
    gone: int = 0         #: sources found deleted since they landed
    conflicts: int = 0    #: sources whose landed bytes changed (fails the pass)
    busy: int = 0         #: sessions another writer held
    pending: int = 0      #: sources with more to land than one pass takes (fails the pass)
    errors: int = 0       #: failures (fails the pass)
    waiting: int = 0      #: units that cannot be placed yet; tried again every pass
    unreadable: int = 0   #: units that cannot be read
    excluded: int = 0     #: units the session filter leaves out (shown when the adapter labels it)

    def add(self, other: AdapterCounters) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class PassError:
    """A failure inside a pass, with whose it was."""

    adapter: str
    message: str
    session: str | None = None

    def __str__(self) -> str:
        where = f"{self.adapter}" + (f" session {self.session}" if self.session else "")
        return f"{where}: {self.message}"


@dataclass
class PassContext:
    """One pass: shared by every adapter's hooks and every observer."""

    root: StorageRoot
    host: PluginHost
    clock: Clock = time.time_ns
    dry_run: bool = False
    reporter: Reporter = field(default_factory=QuietReporter)
    started_ns: int = 0
    counters: dict[str, AdapterCounters] = field(default_factory=dict)
    labels: dict[str, Mapping[str, str]] = field(default_factory=dict)
    errors: list[PassError] = field(default_factory=list)
    #: every session some adapter claimed this pass (the pass line's ``sessions``)
    sessions_claimed: set[str] = field(default_factory=set)
    #: what adapters leave for later ones in the same pass (e.g. an index they updated)
    notes: dict[str, Any] = field(default_factory=dict)
    #: the configuration the pass runs with, so a plugin can read its own section
    #: (``config.section("export.otlp")``); ``None`` where no configuration was loaded
    config: Config | None = None
    #: in a worker process (:mod:`asz_core.workers`): what landed, announced later by the pass
    deferred_landed: list[tuple[str, LandedFile]] | None = None
    #: the paths the adapters read outside the root, each with whether all under it counts
    #: (:mod:`asz_core.quietpass`); ``None`` in a pass that will not be recorded as quiet (a dry
    #: run, ``sources``)
    watched: set[tuple[str, bool]] | None = None
    #: the earliest instant from which this pass's outcome would change by time alone
    recheck_ns: int | None = None

    def recheck_at(self, when_ns: int) -> None:
        """Say that from ``when_ns`` on, a pass finding the same files would decide otherwise
        (a file waiting until it is old enough to read); a quiet pass is repeated only before."""
        self.recheck_ns = when_ns if self.recheck_ns is None else min(self.recheck_ns, when_ns)

    def error(self, adapter: str, message: str, session: str | None = None) -> None:
        self.errors.append(PassError(adapter, message, session))
        self.counters.setdefault(adapter, AdapterCounters()).errors += 1

    def file_landed(self, adapter: str, landed: LandedFile) -> None:
        if self.deferred_landed is not None:
            self.deferred_landed.append((adapter, landed))
            return
        counters = self.counters.setdefault(adapter, AdapterCounters())
        counters.landed += 1
        counters.records += landed.summary.records
        counters.bytes += landed.summary.bytes
        if not landed.dry_run:
            self.host.file_landed(self, adapter, landed)


@dataclass
class AdapterContext:
    """What one adapter's hooks receive in a pass."""

    name: str
    options: dict[str, Any]
    pass_ctx: PassContext
    version: str = "0"
    #: the directories the adapter read from, as it resolved them (``sources`` shows them)
    source_dirs: list[str] = field(default_factory=list)
    _settled: SettledSessions | None = field(default=None, init=False, repr=False)
    #: in a worker process (:mod:`asz_core.workers`): what :meth:`hand_back` was given, applied
    #: by the pass once the worker reports the session
    _handed_back: list[tuple[Callable[[AdapterContext, Any], None], Any]] | None = field(
        default=None, init=False, repr=False)

    @property
    def settled(self) -> SettledSessions:
        """This adapter's table of settled sessions (loaded on first use, saved by the pass
        after the adapter's sessions have landed)."""
        if self._settled is None:
            self._settled = SettledSessions.load(self.root.path, self.name, self.version)
        return self._settled

    def save_settled(self) -> None:
        """Write the settled table if this pass used and changed it (never in a dry run)."""
        if self._settled is not None and not self.dry_run:
            self._settled.save()

    @property
    def counters(self) -> AdapterCounters:
        # not ``setdefault``: that would build a new AdapterCounters on every access (a no-op
        # pass reads this once per session)
        counters = self.pass_ctx.counters.get(self.name)
        if counters is None:
            counters = self.pass_ctx.counters[self.name] = AdapterCounters()
        return counters

    @property
    def root(self) -> StorageRoot:
        return self.pass_ctx.root

    @property
    def dry_run(self) -> bool:
        return self.pass_ctx.dry_run

    @property
    def adapter_id(self) -> str:
        """``<name>/<version>``, as landed files' headers name their adapter."""
        return f"{self.name}/{self.version}"

    @property
    def source_root(self) -> str:
        """The configured ``source_root``; empty means the runtime's own default."""
        return str(self.options.get("source_root") or "")

    @property
    def max_delta_bytes(self) -> int:
        return int(self.options.get("collector", {}).get("max_delta_bytes", 2 * 1024 * 1024))

    @property
    def session_filter(self) -> SessionFilter:
        return SessionFilter.of(self.options.get("include") or (), self.options.get("exclude") or ())

    def now_ns(self) -> int:
        return self.pass_ctx.clock()

    def watch(self, path: str, *, tree: bool = True) -> None:
        """Say that this adapter reads ``path`` (a file, or a directory and all under it) outside
        the root: a pass that changed nothing is repeated by later runs only while nothing under
        the watched paths changes (``asz_pass_repeatable``). ``tree=False``: only the path itself
        counts (a directory whose existence decides where the adapter reads, not its files)."""
        if self.pass_ctx.watched is not None:
            self.pass_ctx.watched.add((path, tree))

    def recheck_at(self, when_ns: int) -> None:
        """See :meth:`PassContext.recheck_at`."""
        self.pass_ctx.recheck_at(when_ns)

    def warn(self, message: str) -> None:
        self.pass_ctx.reporter.warn(f"{self.name}: {message}")

    def error(self, message: str, session: str | None = None) -> None:
        """Record a failure: it is listed after the pass line and fails the pass."""
        self.pass_ctx.error(self.name, message, session)

    def hand_back(self, apply: Callable[[AdapterContext, _V], None], value: _V) -> None:
        """Run ``apply(ctx, value)`` in the pass's own process, with the pass's context.

        For state an adapter keeps outside the session it lands (a table of its own in the
        root, a note for later hooks) while its sessions may land in worker processes
        (``AdapterInfo.parallel_sessions``): a worker is a fork and must write only under the
        session it holds, so what it changes elsewhere goes back to the pass. Landing in the
        pass's process, ``apply`` runs at once; in a worker, ``value`` is pickled back with the
        session's report and ``apply`` runs in the pass when that report arrives (after the
        session's landed files are announced, in the order ``hand_back`` was called). So
        ``apply`` must be a module-level function and ``value`` must pickle; a worker that dies
        before reporting loses what it handed back, as a pass killed there would. An exception
        from ``apply`` is that session's error, and the session's later calls do not run.
        """
        if self._handed_back is None:
            apply(self, value)
        else:
            self._handed_back.append((apply, value))

    def open_session(self, session: str) -> SessionHandle:
        """Lock ``session`` for landing; what lands through it is counted and announced."""
        return self.root.open_session(session, lambda f: self.pass_ctx.file_landed(self.name, f))


@dataclass
class PassSummary:
    """The counts of one pass: the pass line, and its exit status."""

    totals: AdapterCounters
    by_adapter: dict[str, AdapterCounters]
    labels: dict[str, Mapping[str, str]]
    errors: list[PassError]
    started_ns: int
    elapsed_s: float
    dry_run: bool = False
    #: set on a pass that changed nothing and may be repeated (``run_pass(stamp=True)``)
    stamps: PassStamps | None = None

    @property
    def failed(self) -> bool:
        """A pass fails on conflicts, pending sources or errors; waiting never fails it."""
        t = self.totals
        return bool(t.conflicts or t.pending or t.errors)

    def fields(self) -> dict[str, int]:
        """The pass line's counts in order, with each adapter's names for waiting/unreadable."""
        t = self.totals
        out = {"sessions": t.sessions, "sources": t.sources, "landed": t.landed,
               "records": t.records, "bytes": t.bytes, "gone": t.gone, "conflicts": t.conflicts,
               "busy": t.busy, "pending": t.pending, "errors": t.errors}
        for adapter, counters in self.by_adapter.items():
            labels = self.labels.get(adapter, {})
            for key in ("waiting", "unreadable", *(k for k in labels if k == "excluded")):
                label = labels.get(key, key)
                out[label] = out.get(label, 0) + getattr(counters, key)
        return out

    def as_dict(self) -> dict[str, Any]:
        return {**self.fields(), "elapsed_s": round(self.elapsed_s, 3), "dry_run": self.dry_run,
                "failed": self.failed,
                "adapters": {n: c.as_dict() for n, c in self.by_adapter.items()},
                "errors_list": [str(e) for e in self.errors]}
