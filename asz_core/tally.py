"""What a pass found and did: one session's outcome, each adapter's counters, the pass's tally.

A session's landing returns a :class:`SessionOutcome`: what it counted, landed, warned and
failed, the settled-table entry it earned and what the adapter handed back to the pass. The
same object comes from the pass's own process and from a worker process, and the pass merges
outcomes in the order the adapter claimed the sessions. The :class:`PassTally` holds the
results as they merge (each adapter's counters, the errors, the sessions claimed); it is
finished into the :class:`PassSummary` once the observers' ``asz_pass_end`` has run, so an
error an observer records is in the summary the command prints.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
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


@dataclass
class AdapterCounters:
    """What one adapter (or one session's landing) found and did in one pass."""

    found: int = 0        #: units discovered (sessions, body files, ...)
    sessions: int = 0     #: sessions claimed (set by the host from the claims)
    sources: int = 0      #: source files seen
    landed: int = 0       #: files landed (counted by the pass as it announces each)
    records: int = 0      #: records landed (likewise)
    bytes: int = 0        #: bytes landed, as written (likewise)
    gone: int = 0         #: sources found deleted since they landed
    conflicts: int = 0    #: sources whose landed bytes changed (fails the pass)
    busy: int = 0         #: sessions another writer held
    pending: int = 0      #: sources with more to land than one pass takes (fails the pass)
    errors: int = 0       #: failures (fails the pass)
    waiting: int = 0      #: units that cannot be placed yet; tried again every pass
    unreadable: int = 0   #: units that cannot be read
    excluded: int = 0     #: units the session filter leaves out (shown when the adapter labels it)
    retired: int = 0      #: units a person gave up on, never changed (shown when the adapter labels it)

    def add(self, other: AdapterCounters) -> None:
        # the names listed once (``_COUNTER_NAMES``), and only those counted: the pass adds every
        # session's outcome, most of whose counters are 0
        for name in _COUNTER_NAMES:
            value = getattr(other, name)
            if value:
                setattr(self, name, getattr(self, name) + value)

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


#: the counters' names, in their order
_COUNTER_NAMES = tuple(f.name for f in fields(AdapterCounters))


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
class SessionOutcome:
    """What landing one claim did, to be merged by the pass (it must pickle: a worker sends it).

    ``counters`` are this session's own counts; the files it landed are counted (``landed``,
    ``records``, ``bytes``) when the pass announces them, not here.
    """

    session: str
    counters: AdapterCounters = field(default_factory=AdapterCounters)
    landed: list[LandedFile] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    #: the claim declared what settles it (``SessionClaim.settled_by``): the pass records
    #: ``settled`` as the session's entry, or forgets the entry when ``settled`` is ``None``
    settles: bool = False
    settled: SettledEntry | None = None
    #: the adapter said this landing decided less than everything (``AdapterContext.unsettled``)
    undecided: bool = False
    #: ``AdapterContext.hand_back``'s calls, run by the pass in its own process, in order
    handed_back: list[HandBack] = field(default_factory=list)

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
