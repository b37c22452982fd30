"""The services a pass gives its adapters and observers, and each adapter's view of them.

:class:`PassContext` is what is common to the pass: the root, the clock, dry-run, the reporter,
the configuration. It holds no results: those go to the pass's tally (:mod:`asz_core.tally`),
where an observer records its own failure with :meth:`PassContext.error`.
:class:`AdapterContext` is what one adapter's hooks receive: its options and version, its
session filter, a slot for its own state in the pass, and where its counts, warnings and
failures go. While a session lands, they go to that session's
:class:`~asz_core.tally.SessionOutcome` (the pass merges it once the landing is over); while
the adapter discovers and claims, to the adapter's counters in the tally. Both are plain
classes, not dataclasses, for the reason :mod:`asz_core.tally`'s are.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import pluggy

from asz_core.filters import SessionFilter
from asz_core.root.settled import SettledSessions
from asz_core.tally import AdapterCounters, PassError, PassSummary, PassTally, SessionOutcome

if TYPE_CHECKING:
    from asz_core.plugin import AdapterInfo
    from asz_core.root.storage import StorageRoot

__all__ = [
    "MAX_WINDOWS",
    "AdapterContext",
    "AdapterCounters",
    "Clock",
    "ConfigSections",
    "ConfiguredAdapter",
    "PassContext",
    "PassError",
    "PassSummary",
    "QuietReporter",
    "Reporter",
]

_V = TypeVar("_V")
_S = TypeVar("_S")

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


class ConfiguredAdapter(Protocol):
    """One adapter as ``asz.yaml`` lists it (``asz_core.config.AdapterEntry``)."""

    @property
    def name(self) -> str: ...

    @property
    def enabled(self) -> bool: ...

    @property
    def options(self) -> dict[str, Any]: ...


class ConfigSections(Protocol):
    """The configuration as a pass's hooks read it (``asz_core.config.Config``, named by what it
    offers, so that this module needs nothing of the configuration's loading): a plugin's own
    section (``asz_config_sections``) and the adapters the file lists."""

    @property
    def adapters(self) -> Sequence[ConfiguredAdapter]: ...

    def section(self, dotted: str) -> dict[str, Any]: ...


def _no_adapter(name: str) -> AdapterInfo | None:
    return None


class PassContext:
    """One pass's services: shared by every adapter's hooks and every observer."""

    __slots__ = ("adapter_info", "clock", "config", "dry_run", "hooks", "reporter", "root", "started_ns", "tally",
                 "would_index")

    def __init__(self, root: StorageRoot, clock: Clock = time.time_ns, dry_run: bool = False,
                 reporter: Reporter | None = None, started_ns: int = 0, config: ConfigSections | None = None,
                 adapter_info: Callable[[str], AdapterInfo | None] = _no_adapter,
                 hooks: pluggy.HookRelay | None = None, tally: PassTally | None = None) -> None:
        self.root = root
        self.clock = clock
        self.dry_run = dry_run
        self.reporter: Reporter = QuietReporter() if reporter is None else reporter
        self.started_ns = started_ns
        #: the configuration the pass runs with, so a plugin can read its own section
        #: (``config.section("export.otlp")``); ``None`` where no configuration was loaded
        self.config = config
        #: what an installed adapter says about itself (``asz_adapter_info``), by its name
        self.adapter_info = adapter_info
        #: every plugin's hooks, for an observer that asks the others a question (``asz_receipts``)
        self.hooks = hooks
        #: where the pass's results go (the pass finishes it into the summary after ``asz_pass_end``)
        self.tally = PassTally() if tally is None else tally
        #: in a dry run, the ids index lines (:class:`~asz_core.root.index.SessionIndex`) the
        #: pass would have appended, by session and key: a dry run writes no index, so an adapter
        #: that runs later in the pass reads these beside the landed ones, and counts what the
        #: pass lands
        self.would_index: dict[str, dict[str, set[str]]] = {}

    def index_would_add(self, session: str, pairs: Iterable[tuple[str, str]]) -> None:
        """Note ``(key, value)`` lines a dry run would have appended to ``session``'s index."""
        keys = self.would_index.setdefault(session, {})
        for key, value in pairs:
            keys.setdefault(key, set()).add(value)

    def error(self, source: str, message: str, session: str | None = None) -> None:
        """Record a failure of ``source`` (an adapter's or a plugin's name): it is listed after
        the pass line and fails the pass."""
        self.tally.error(source, message, session)


class AdapterContext:
    """What one adapter's hooks receive in a pass."""

    __slots__ = ("_outcome", "_settled", "_state", "name", "options", "pass_ctx", "source_dirs", "version")

    def __init__(self, name: str, options: dict[str, Any], pass_ctx: PassContext, version: str = "0",
                 source_dirs: list[str] | None = None) -> None:
        self.name = name
        self.options = options
        self.pass_ctx = pass_ctx
        self.version = version
        #: the directories the adapter read from, as it resolved them (``sources`` shows them)
        self.source_dirs: list[str] = [] if source_dirs is None else source_dirs
        self._state: object = None
        self._settled: SettledSessions | None = None
        #: the session landing now (between :meth:`landing` and its end), where results go
        self._outcome: SessionOutcome | None = None

    # ---- the adapter's own state in this pass ----------------------------------------------

    def keep(self, state: object) -> None:
        """Keep ``state`` for this adapter's later hooks in the same pass (an index discovery
        built, say). A worker process landing sessions starts with what was kept before it was
        started; what it changes stays in the worker (give it back with :meth:`hand_back`)."""
        self._state = state

    def kept(self, kind: type[_S]) -> _S | None:
        """What :meth:`keep` was given, if it is a ``kind``; else ``None``."""
        state = self._state
        return state if isinstance(state, kind) else None

    # ---- where results go ------------------------------------------------------------------

    @property
    def counters(self) -> AdapterCounters:
        """The counters to add to: the landing session's while one lands, else the adapter's."""
        outcome = self._outcome
        return outcome.counters if outcome is not None else self.pass_ctx.tally.adapter(self.name)

    def warn(self, message: str) -> None:
        text = f"{self.name}: {message}"
        if self._outcome is not None:
            self._outcome.warn(text)
        else:
            self.pass_ctx.reporter.warn(text)

    def error(self, message: str, session: str | None = None) -> None:
        """Record a failure: it is listed after the pass line and fails the pass (while a
        session lands, it is that session's)."""
        if self._outcome is not None:
            self._outcome.error(message)
        else:
            self.pass_ctx.error(self.name, message, session)

    def undecided(self) -> None:
        """Say that the session landing now left something it could not judge this pass (a
        place whose source may or may not be gone): the pass does not record it settled."""
        if self._outcome is not None:
            self._outcome.undecided = True

    def hand_back(self, apply: Callable[[AdapterContext, _V], None], value: _V) -> None:
        """Run ``apply(ctx, value)`` in the pass's own process once this session has landed.

        For state an adapter keeps outside the session it lands (a table of its own in the
        root, what it :meth:`keep`-s) while its sessions may land in worker processes
        (``AdapterInfo.parallel_sessions``): a worker is a fork and must write only under the
        session it holds, so what it changes elsewhere goes back to the pass. ``apply`` runs
        when the pass merges the session's outcome (after its landed files are announced, in
        the order ``hand_back`` was called), wherever the session landed. So ``apply`` must be
        a module-level function and ``value`` must pickle; a worker that dies before reporting
        loses what it handed back, as a pass killed there would. An exception from ``apply`` is
        that session's error, and the session's later calls do not run. Outside a session's
        landing (discovery, claims), ``apply`` runs at once.
        """
        if self._outcome is None:
            apply(self, value)
        else:
            self._outcome.handed_back.append((apply, value))

    @contextmanager
    def landing(self, outcome: SessionOutcome) -> Iterator[AdapterContext]:
        """Send what is counted, warned and failed to ``outcome`` while one session lands (the
        host's :mod:`asz_core.land`; a pass lands one session at a time in a process)."""
        self._outcome = outcome
        try:
            yield self
        finally:
            self._outcome = None

    # ---- services --------------------------------------------------------------------------

    @property
    def settled(self) -> SettledSessions:
        """This adapter's table of settled sessions, for an adapter that notes outcomes the
        host's protocol does not describe (``SessionClaim.settled_by`` is the usual way).
        Loaded on first use; saved by the pass after the adapter's sessions have landed."""
        if self._settled is None:
            self._settled = SettledSessions.load(self.root.path, self.name, self.version)
        return self._settled

    def save_settled(self) -> None:
        """Write the settled table if this pass used and changed it (never in a dry run)."""
        if self._settled is not None and not self.dry_run:
            self._settled.save()

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
