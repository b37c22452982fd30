"""What a pass found and did: one session's outcome, each adapter's counters, the pass's tally.

A session's landing returns a :class:`SessionOutcome`: what it counted, landed, warned and
failed, the settled-table entry it earned and what the adapter handed back to the pass. The
same object comes from the pass's own process and from a worker process, and the pass merges
outcomes in the order the adapter claimed the sessions. The :class:`PassTally` holds the
results as they merge (each adapter's counters, the errors, the sessions claimed); it is
finished into the :class:`PassSummary` once the observers' ``asz_pass_end`` has run, so an
error an observer records is in the summary the command prints.

Its classes are plain classes with ``__slots__``, not dataclasses: every ``run`` imports them,
the one that finds nothing new included, and a dataclass compiles its generated methods at
each import where these are written once, in the module's bytecode.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from asz_core.root.landing import LandedFile
    from asz_core.root.settled import SettledEntry

__all__ = ["UNSETTLING", "AdapterCounters", "HandBack", "PassError", "PassSummary", "PassTally",
           "SessionOutcome"]

#: what an adapter gives ``AdapterContext.hand_back``: a module-level function, called by the
#: pass as ``apply(adapter_context, value)``, and its value
HandBack = tuple[Callable[..., None], object]

#: a session whose landing counted any of these is not settled: it is landed next pass too
UNSETTLING = ("conflicts", "pending", "unreadable", "waiting", "busy", "errors")

#: the counters' names, in their order
_COUNTER_NAMES = ("found", "sessions", "sources", "landed", "records", "bytes", "gone", "conflicts", "busy",
                  "pending", "errors", "waiting", "unreadable", "excluded", "retired")


class AdapterCounters:
    """What one adapter (or one session's landing) found and did in one pass."""

    __slots__ = _COUNTER_NAMES

    found: int        #: units discovered (sessions, body files, ...)
    sessions: int     #: sessions claimed (set by the host from the claims)
    sources: int      #: source files seen
    landed: int       #: files landed (counted by the pass as it announces each)
    records: int      #: records landed (likewise)
    bytes: int        #: bytes landed, as written (likewise)
    gone: int         #: sources found deleted since they landed
    conflicts: int    #: sources whose landed bytes changed (fails the pass)
    busy: int         #: sessions another writer held
    pending: int      #: sources with more to land than one pass takes (fails the pass)
    errors: int       #: failures (fails the pass)
    waiting: int      #: units that cannot be placed yet; tried again every pass
    unreadable: int   #: units that cannot be read
    excluded: int     #: units the session filter leaves out (shown when the adapter labels it)
    retired: int      #: units a person gave up on, never changed (shown when the adapter labels it)

    def __init__(self, found: int = 0, sessions: int = 0, sources: int = 0, landed: int = 0, records: int = 0,
                 bytes: int = 0, gone: int = 0, conflicts: int = 0, busy: int = 0, pending: int = 0,
                 errors: int = 0, waiting: int = 0, unreadable: int = 0, excluded: int = 0,
                 retired: int = 0) -> None:
        self.found, self.sessions, self.sources = found, sessions, sources
        self.landed, self.records, self.bytes = landed, records, bytes
        self.gone, self.conflicts, self.busy, self.pending, self.errors = gone, conflicts, busy, pending, errors
        self.waiting, self.unreadable, self.excluded, self.retired = waiting, unreadable, excluded, retired

    def add(self, other: AdapterCounters) -> None:
        # only the counters that are set: the pass adds every session's outcome, most of whose
        # counters are 0
        for name in _COUNTER_NAMES:
            value = getattr(other, name)
            if value:
                setattr(self, name, getattr(self, name) + value)

    def as_dict(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in _COUNTER_NAMES}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AdapterCounters):
            return NotImplemented
        return self.as_dict() == other.as_dict()

    __hash__ = None  # type: ignore[assignment]  # mutable: compared by value, never hashed

    def __repr__(self) -> str:
        return f"AdapterCounters({', '.join(f'{k}={v}' for k, v in self.as_dict().items() if v)})"


class PassError:
    """A failure inside a pass, with whose it was."""

    __slots__ = ("adapter", "message", "session")

    def __init__(self, adapter: str, message: str, session: str | None = None) -> None:
        self.adapter = adapter
        self.message = message
        self.session = session

    def __str__(self) -> str:
        where = f"{self.adapter}" + (f" session {self.session}" if self.session else "")
        return f"{where}: {self.message}"

    def __repr__(self) -> str:
        return f"PassError({self.adapter!r}, {self.message!r}, {self.session!r})"


class SessionOutcome:
    """What landing one claim did, to be merged by the pass (it must pickle: a worker sends it).

    ``counters`` are this session's own counts; the files it landed are counted (``landed``,
    ``records``, ``bytes``) when the pass announces them, not here.
    """

    __slots__ = ("counters", "errors", "handed_back", "landed", "session", "settled", "settles", "undecided",
                 "warnings")

    def __init__(self, session: str, counters: AdapterCounters | None = None, landed: list[LandedFile] | None = None,
                 warnings: list[str] | None = None, errors: list[str] | None = None, settles: bool = False,
                 settled: SettledEntry | None = None, undecided: bool = False,
                 handed_back: list[HandBack] | None = None) -> None:
        self.session = session
        self.counters = AdapterCounters() if counters is None else counters
        self.landed: list[LandedFile] = [] if landed is None else landed
        self.warnings: list[str] = [] if warnings is None else warnings
        self.errors: list[str] = [] if errors is None else errors
        #: the claim declared what settles it (``SessionClaim.settled_by``): the pass records
        #: ``settled`` as the session's entry, or forgets the entry when ``settled`` is ``None``
        self.settles = settles
        self.settled = settled
        #: the adapter said this landing decided less than everything (``AdapterContext.unsettled``)
        self.undecided = undecided
        #: ``AdapterContext.hand_back``'s calls, run by the pass in its own process, in order
        self.handed_back: list[HandBack] = [] if handed_back is None else handed_back

    def warn(self, message: str) -> None:
        self.warnings.append(message)

    def error(self, message: str) -> None:
        self.errors.append(message)

    @property
    def settled_now(self) -> bool:
        """Whether nothing in this landing keeps the session from being settled."""
        c = self.counters
        return not (self.undecided or self.errors or any(getattr(c, key) for key in UNSETTLING))


class PassTally:
    """A pass's results as they come: each adapter's counters, the errors, the sessions."""

    def __init__(self) -> None:
        self.counters: dict[str, AdapterCounters] = {}
        self.labels: dict[str, Mapping[str, str]] = {}
        self.errors: list[PassError] = []
        #: every session some adapter claimed (the pass line's ``sessions``: a session two
        #: adapters land counts once)
        self.sessions: set[str] = set()

    def adapter(self, name: str) -> AdapterCounters:
        counters = self.counters.get(name)
        if counters is None:
            counters = self.counters[name] = AdapterCounters()
        return counters

    def error(self, adapter: str, message: str, session: str | None = None) -> None:
        self.errors.append(PassError(adapter, message, session))
        self.adapter(adapter).errors += 1

    def file_landed(self, adapter: str, landed: LandedFile) -> None:
        counters = self.adapter(adapter)
        counters.landed += 1
        counters.records += landed.summary.records
        counters.bytes += landed.summary.bytes

    def add_outcome(self, adapter: str, outcome: SessionOutcome) -> None:
        """Count ``outcome``'s counters and errors (its landed files are counted as announced)."""
        self.adapter(adapter).add(outcome.counters)
        for message in outcome.errors:
            self.error(adapter, message, outcome.session)

    def summary(self, *, started_ns: int, elapsed_s: float, dry_run: bool) -> PassSummary:
        totals = AdapterCounters()
        for counters in self.counters.values():
            totals.add(counters)
        totals.sessions = len(self.sessions)
        return PassSummary(totals=totals, by_adapter=dict(self.counters), labels=dict(self.labels),
                           errors=list(self.errors), started_ns=started_ns, elapsed_s=elapsed_s,
                           dry_run=dry_run)


class PassSummary:
    """The counts of one pass: the pass line, and its exit status."""

    __slots__ = ("by_adapter", "dry_run", "elapsed_s", "errors", "labels", "started_ns", "totals")

    def __init__(self, totals: AdapterCounters, by_adapter: dict[str, AdapterCounters],
                 labels: dict[str, Mapping[str, str]], errors: list[PassError], started_ns: int, elapsed_s: float,
                 dry_run: bool = False) -> None:
        self.totals = totals
        self.by_adapter = by_adapter
        self.labels = labels
        self.errors = errors
        self.started_ns = started_ns
        self.elapsed_s = elapsed_s
        self.dry_run = dry_run

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
            for key in ("waiting", "unreadable", *(k for k in labels if k in ("excluded", "retired"))):
                label = labels.get(key, key)
                out[label] = out.get(label, 0) + getattr(counters, key)
        return out

    def as_dict(self) -> dict[str, Any]:
        return {**self.fields(), "elapsed_s": round(self.elapsed_s, 3), "dry_run": self.dry_run,
                "failed": self.failed,
                "adapters": {n: c.as_dict() for n, c in self.by_adapter.items()},
                "errors_list": [str(e) for e in self.errors]}
