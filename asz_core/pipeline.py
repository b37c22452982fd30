"""One pass: every enabled adapter, in the order ``asz.yaml`` lists them, discover → claim →
land → outcome → tally → observers.

The root is locked for the whole pass. For each adapter, what discovery finds goes, less what
``include``/``exclude`` leave out, to the adapter's claims; each claim is landed as it comes
(:func:`asz_core.land.land_claims`, here or in worker processes, in groups whose files and
cursors are made durable together), unless the settled table says
nothing of it changed; each landing's outcome is merged into the pass's tally in claim order.
Once every adapter has run, the observers see the summary (``asz_pass_end``), and the summary
is finished with what they recorded. An adapter that raises is reported with its name (and the
session, when it was landing one) and the pass goes on with the next session or adapter; the
pass then fails. A session another writer holds is counted busy and tried next pass.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sized
from contextlib import contextmanager
from itertools import chain, islice

from asz_core.config import Config
from asz_core.context import AdapterContext, Clock, PassContext, QuietReporter, Reporter
from asz_core.errors import NotStarted
from asz_core.failures import describe_failure
from asz_core.filters import SessionFilter
from asz_core.forking import explicit_workers
from asz_core.host import PluginHost
from asz_core.land import land_claims
from asz_core.plugin import AdapterInfo, Found, SessionClaim
from asz_core.removal.scenario_root import is_scenario_root
from asz_core.root.locks import LockBusy
from asz_core.root.owed import METRICS, PARSE, PassOwed, forget_log
from asz_core.root.storage import StorageRoot
from asz_core.tally import AdapterCounters, PassSummary, SessionOutcome
from asz_core.workers import DECIDED_BY, DEFAULT_FROM_SESSIONS, configured_workers, land_in_workers

__all__ = ["PassRefused", "describe_failure", "hold_root", "run_pass"]


class PassRefused(NotStarted):
    """The pass could not start: the root cannot be written, or another pass holds it."""


@contextmanager
def hold_root(root: StorageRoot, *, wait: bool, doing: str) -> Iterator[None]:
    """Hold the root lock while ``doing`` (``run``, ``push``); ``PassRefused`` naming the holder
    when another process has it and ``wait`` is false. A root not created yet needs no lock."""
    lock = root.lock(wait=wait) if root.path.is_dir() else None
    try:
        if lock is not None:
            lock.acquire()
    except LockBusy as exc:
        raise PassRefused(f"another process holds the storage root {root.path} "
                          f"({exc.holder or 'pid unknown'}); wait for it, or {doing} with --wait") from None
    except OSError as exc:  # a link above the lock file, a full disk: said, not a traceback
        raise PassRefused(f"the storage root {root.path} cannot be locked: {exc}") from None
    try:
        yield
    finally:
        if lock is not None:
            lock.release()


def run_pass(host: PluginHost, config: Config, *, clock: Clock = time.time_ns,
             reporter: Reporter | None = None, dry_run: bool = False,
             wait: bool = False) -> PassSummary:
    """Run one pass and return its summary. ``PassRefused`` if it cannot start."""
    started = clock()
    perf = time.perf_counter()
    root = StorageRoot(config.root, pass_started_ns=started, dry_run=dry_run)
    if not dry_run:
        try:
            root.ensure()
        except OSError as exc:
            raise PassRefused(f"the storage root {config.root} cannot be written: "
                              f"{exc.strerror or exc}; set storage.root (or $ASZ_ROOT) to a "
                              f"directory you own") from None
    ctx = PassContext(root=root, clock=clock, dry_run=dry_run, reporter=reporter or QuietReporter(),
                      started_ns=started, config=config, adapter_info=host.adapter_info,
                      hooks=host.pm.hook)
    with hold_root(root, wait=wait, doing="run"):
        host.pass_start(ctx)
        derives = not dry_run and bool(config.section("metrics").get("enabled", True))
        owed = PassOwed(root.path, dry_run=dry_run, logs=(PARSE, METRICS) if derives else (PARSE,))
        if not derives and not dry_run:  # a log no derivation settles would only grow; without
            forget_log(root.path, METRICS)  # it, the next derivation looks at every session
        for entry in config.adapters:
            if entry.enabled:
                _run_adapter(host, ctx, entry.name, entry.options, owed)
        try:  # the parse that ends ``run`` looks at the sessions that landed, and at no other
            owed.finish()
        except OSError as exc:  # its ``start`` stays open: the next parse looks at every session
            ctx.reporter.warn(f"cannot write {owed.path}: {exc.strerror or exc}; the next parse looks at "
                              f"every session")
        if derives:
            from asz_core.metrics.step import derive_in_pass  # loaded only by a pass that derives

            derive_in_pass(ctx)  # before the observers: the push among them sends what it spooled
        elapsed = time.perf_counter() - perf
        try:
            host.pass_end(ctx, ctx.tally.summary(started_ns=started, elapsed_s=elapsed, dry_run=dry_run))
        except Exception as exc:  # noqa: BLE001 - an observer must not lose the summary
            ctx.error("pass_end", describe_failure(exc))
        # after the push: a scenario root's sessions that are sent in full go (the step is loaded
        # only over such a root)
        if not dry_run and is_scenario_root(root.path):
            from asz_core.removal.pass_end import remove_sent

            try:
                remove_sent(ctx)
            except Exception as exc:  # noqa: BLE001 - as an observer's failure: the summary is kept
                ctx.error("scenario-removal", describe_failure(exc))
        # finished after the observers: a failure one of them recorded fails the pass too
        return ctx.tally.summary(started_ns=started, elapsed_s=elapsed, dry_run=dry_run)


def _run_adapter(host: PluginHost, ctx: PassContext, name: str, options: dict[str, object],
                 owed: PassOwed) -> None:
    """Discover, claim and land one adapter's sessions, one claim at a time: each claim is landed
    (or counted unchanged) as the adapter yields it, its outcome merged and then let go, so that
    an adapter whose hooks are generators holds one session at a time, not the whole corpus."""
    info = host.adapter(name).info
    assert info is not None
    ctx.tally.labels[name] = info.counter_labels
    counters = ctx.tally.adapter(name)
    actx = AdapterContext(name=name, options=dict(options), pass_ctx=ctx, version=info.version)
    try:
        found = _Admitted(host.discover(name, actx), counters, actx.session_filter)
        claims = host.claim(name, actx, found)
    except Exception as exc:  # noqa: BLE001 - one adapter failing does not stop the others
        ctx.error(name, describe_failure(exc))
        return
    # A list says how many sessions there are to land; a generator does not (progress shows 0).
    total = 0
    if isinstance(claims, Sized):
        for claim in claims:
            _judge_settled(actx, claim)
        total = sum(1 for claim in claims if claim.unchanged is None)
    claimed: set[str] = set()
    to_land, workers = _processes(info, actx, _owing(actx, owed, _to_land(actx, claims, claimed)), total)
    outcomes: Iterable[SessionOutcome]
    outcomes = land_in_workers(host, actx, to_land, workers) if workers > 1 else land_claims(host, actx, to_land)
    for done, outcome in enumerate(outcomes, start=1):
        _merge(host, actx, outcome)
        if outcome.landed or outcome.errors:  # errors too: a worker that died may have landed unreported files
            owed.landed(outcome.session)
        ctx.reporter.progress(name, done, total)
    try:
        found.drain()  # units the claim hook did not walk are found all the same
    except Exception as exc:  # noqa: BLE001
        ctx.error(name, describe_failure(exc))
    counters.sessions += len(claimed)  # an adapter listed twice (two directories) counts both
    actx.save_settled()


class _Admitted(Iterator[Found]):
    """What discovery yields, handed to the claim hook: counted (``found``) as it is walked,
    less the units whose ``directory`` the session filter does not admit."""

    def __init__(self, found: Iterable[Found], counters: AdapterCounters, admits: SessionFilter) -> None:
        self.source = iter(found)
        self.counters = counters
        self.admits = admits.admits_directory
        self.everything = admits.admits_every_slug

    def __next__(self) -> Found:
        while True:
            item = next(self.source)
            self.counters.found += 1
            if self.everything or item.directory is None or self.admits(item.directory):
                return item

    def drain(self) -> None:
        for _ in self:
            pass


def _to_land(actx: AdapterContext, claims: Iterable[SessionClaim], claimed: set[str]) -> Iterator[SessionClaim]:
    """The claims to land, as the adapter yields them. Those that the adapter judged unchanged,
    or that declare what settles them and the settled table says are as the last pass left them,
    are counted here and not landed. An exception from the adapter's discovery or claim ends its
    claims (what landed before stays landed) and is reported as the adapter's error."""
    sessions = actx.pass_ctx.tally.sessions
    # the adapter's own counters (``actx.counters`` between landings, and claims are taken
    # between landings), looked up once, not per unchanged session
    counters = actx.pass_ctx.tally.adapter(actx.name)
    try:
        for claim in claims:
            session = claim.session
            claimed.add(session)
            sessions.add(session)
            _judge_settled(actx, claim)
            if claim.unchanged is not None:
                _count_unchanged(counters, claim.unchanged)
            else:
                yield claim
    except Exception as exc:  # noqa: BLE001 - one adapter failing does not stop the others
        actx.pass_ctx.error(actx.name, describe_failure(exc))


def _owing(actx: AdapterContext, owed: PassOwed, claims: Iterator[SessionClaim]) -> Iterator[SessionClaim]:
    """``claims``, once the log of owed parses says durably that a pass lands (before the first
    of them goes to a landing, here or in a worker). A log that cannot be written lands nothing:
    the parse that ends ``run`` would not know what landed."""
    for claim in claims:
        try:
            owed.before_landing()
        except OSError as exc:
            actx.pass_ctx.error(actx.name, f"cannot write {owed.path}: {exc.strerror or exc}; nothing "
                                           f"lands until it can (remove whatever is at that name)")
            return
        yield claim


def _judge_settled(actx: AdapterContext, claim: SessionClaim) -> None:
    """Mark ``claim`` unchanged when it declares what settles it and the settled table says
    every source and cursor stats as the pass that settled it left them (never in a dry run)."""
    if claim.unchanged is None and claim.settled_by is not None and not actx.dry_run:
        claim.unchanged = actx.settled.unchanged(claim.session, [s.source for s in claim.settled_by])


def _merge(host: PluginHost, actx: AdapterContext, outcome: SessionOutcome) -> None:
    """Take one session's outcome into the pass, as if it had landed here and now: its counts
    and errors into the tally, its warnings to the reporter, its landed files announced to the
    observers, its settled entry into the table, and what the adapter handed back applied."""
    ctx, name = actx.pass_ctx, actx.name
    ctx.tally.add_outcome(name, outcome)
    for message in outcome.warnings:
        ctx.reporter.warn(message)
    for landed in outcome.landed:
        ctx.tally.file_landed(name, landed)
        if landed.dry_run:
            ctx.root.note_dry_landed(landed)
        else:
            try:
                host.file_landed(ctx, name, landed)
            except Exception as exc:  # noqa: BLE001 - an observer's failure is the session's
                ctx.error(name, describe_failure(exc), outcome.session)
    if outcome.settled is not None:
        actx.settled.put(outcome.session, outcome.settled)
    elif outcome.settles:
        actx.settled.forget(outcome.session)
    for apply, value in outcome.handed_back:
        try:
            apply(actx, value)
        except Exception as exc:  # noqa: BLE001 - as the session's own failure would be
            ctx.error(name, describe_failure(exc), outcome.session)
            break  # the session's later calls depended on this one


def _processes(info: AdapterInfo, actx: AdapterContext, to_land: Iterator[SessionClaim],
               total: int) -> tuple[Iterator[SessionClaim], int]:
    """How many processes land ``to_land`` (``total`` of them, 0 if not known), and the claims to
    land: one process unless the adapter allows more and the pass lands for real."""
    if not info.parallel_sessions or actx.dry_run:
        return to_land, 1
    known = total
    from_sessions = info.parallel_from or DEFAULT_FROM_SESSIONS
    if not known and explicit_workers(actx.options) is None:
        to_land, known = _look_ahead(to_land, max(from_sessions, DECIDED_BY))
    return to_land, configured_workers(actx.options, known, from_sessions)


def _look_ahead(claims: Iterator[SessionClaim], most: int) -> tuple[Iterator[SessionClaim], int]:
    """``claims`` unchanged, and how many there are up to ``most``: the default number of
    worker processes depends on how many sessions a pass has to land, up to so many
    (:data:`~asz_core.workers.DECIDED_BY`), and a stream of claims only says so once that many
    have been taken from it (and are held meanwhile)."""
    head = list(islice(claims, most))
    return chain(head, claims), len(head)


def _count_unchanged(counters: AdapterCounters, unchanged: dict[str, int]) -> None:
    """Add what landing a session judged unchanged would have counted (each counter by name,
    not by ``getattr``: a no-op pass adds them for every session)."""
    sources = unchanged.get("sources", 0)
    if isinstance(sources, int) and sources > 0:
        counters.sources += sources
    gone = unchanged.get("gone", 0)
    if isinstance(gone, int) and gone > 0:
        counters.gone += gone
