"""One pass: every enabled adapter, in the order ``asz.yaml`` lists them, discover → claim → land.

The root is locked for the whole pass. An adapter that raises is reported with its name (and the
session, when it was landing one) and the pass goes on with the next session or adapter; the
pass then fails. A session another writer holds is counted busy and tried next pass.
"""

from __future__ import annotations

import errno
import time
from collections.abc import Iterable, Iterator, Sized
from contextlib import contextmanager
from itertools import chain, islice

from asz_core.config import Config
from asz_core.context import (
    AdapterContext,
    AdapterCounters,
    Clock,
    PassContext,
    PassSummary,
    QuietReporter,
    Reporter,
)
from asz_core.errors import NotStarted
from asz_core.host import PluginHost
from asz_core.plugin import AdapterInfo, Found, SessionClaim
from asz_core.quietpass import PassStamps
from asz_core.root.layout import RefusedId
from asz_core.root.locks import LockBusy
from asz_core.root.storage import StorageRoot
from asz_core.workers import (
    DEFAULT_FROM_SESSIONS,
    configured_workers,
    explicit_workers,
    land_in_workers,
    land_one,
)

__all__ = ["PassRefused", "describe_failure", "hold_root", "run_pass"]


class PassRefused(NotStarted):
    """The pass could not start: the root cannot be written, or another pass holds it."""


def describe_failure(exc: BaseException) -> str:
    """A message that says what went wrong and what to do about it."""
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return (f"no space left on the device ({exc.filename or 'while landing'}): nothing landed "
                f"before was changed; free some space and run the pass again")
    if isinstance(exc, PermissionError):
        return f"permission denied: {exc.filename or exc}; check the owner and mode of that path"
    if isinstance(exc, RefusedId):
        return f"refused: {exc}"
    return f"{type(exc).__name__}: {exc}"


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
             wait: bool = False, stamp: bool = False) -> PassSummary:
    """Run one pass and return its summary. ``PassRefused`` if it cannot start.

    With ``stamp``, a pass that changed nothing and that every plugin taking part calls
    repeatable leaves its stamps in ``summary.stamps``, for :func:`asz_core.quietpass.record`."""
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
    ctx = PassContext(root=root, host=host, clock=clock, dry_run=dry_run,
                      reporter=reporter or QuietReporter(), started_ns=started, config=config,
                      watched=set() if stamp and not dry_run else None)
    with hold_root(root, wait=wait, doing="run"):
        host.pass_start(ctx)
        for entry in config.adapters:
            if entry.enabled:
                _run_adapter(host, ctx, entry.name, entry.options)
        totals = AdapterCounters()
        for counters in ctx.counters.values():
            totals.add(counters)
        totals.sessions = len(ctx.sessions_claimed)  # a session two adapters land counts once
        summary = PassSummary(totals=totals, by_adapter=dict(ctx.counters), labels=ctx.labels,
                              errors=ctx.errors, started_ns=started,
                              elapsed_s=time.perf_counter() - perf, dry_run=dry_run)
        try:
            host.pass_end(ctx, summary)
        except Exception as exc:  # noqa: BLE001 - an observer must not lose the summary
            ctx.error("pass_end", describe_failure(exc))
            summary.totals.errors += 1
        if ctx.watched is not None and _changed_nothing(summary):
            enabled = [entry.name for entry in config.adapters if entry.enabled]
            if host.pass_repeatable(ctx, enabled):
                summary.stamps = PassStamps.take(ctx.watched, str(root.path), ctx.recheck_ns)
        return summary


def _changed_nothing(summary: PassSummary) -> bool:
    """Whether the pass landed nothing and left nothing for the next one to do or retry."""
    t = summary.totals
    return not (t.landed or t.pending or t.busy or t.errors or summary.errors)


def _run_adapter(host: PluginHost, ctx: PassContext, name: str, options: dict[str, object]) -> None:
    """Discover, claim and land one adapter's sessions, one claim at a time: each claim is landed
    (or counted unchanged) as the adapter yields it and then let go, so that an adapter whose
    hooks are generators holds one session at a time, not the whole corpus."""
    record = host.adapter(name)
    assert record.info is not None
    ctx.counters[name] = AdapterCounters()
    ctx.labels[name] = record.info.counter_labels
    actx = AdapterContext(name=name, options=dict(options), pass_ctx=ctx,
                          version=record.info.version)
    try:
        found = _Counted(host.discover(name, actx), actx.counters)
        claims = host.claim(name, actx, found)
    except Exception as exc:  # noqa: BLE001 - one adapter failing does not stop the others
        ctx.error(name, describe_failure(exc))
        return
    # A list says how many sessions there are to land; a generator does not (progress shows 0).
    total = sum(1 for c in claims if c.unchanged is None) if isinstance(claims, Sized) else 0
    claimed: set[str] = set()
    to_land, workers = _processes(record.info, actx, _to_land(ctx, actx, name, claims, claimed), total)
    if workers > 1:
        land_in_workers(host, actx, name, to_land, total, workers, describe_failure)
    else:
        for done, claim in enumerate(to_land, start=1):
            ctx.reporter.progress(name, done, total)
            land_one(host, actx, name, claim, describe_failure)
    try:
        found.drain()  # units the claim hook did not walk are found all the same
    except Exception as exc:  # noqa: BLE001
        ctx.error(name, describe_failure(exc))
    actx.counters.sessions = len(claimed)
    actx.save_settled()


class _Counted(Iterator[Found]):
    """What discovery yields, handed to the claim hook and counted (``found``) as it is walked."""

    def __init__(self, found: Iterable[Found], counters: AdapterCounters) -> None:
        self.source = iter(found)
        self.counters = counters

    def __next__(self) -> Found:
        item = next(self.source)
        self.counters.found += 1
        return item

    def drain(self) -> None:
        for _ in self:
            pass


def _to_land(ctx: PassContext, actx: AdapterContext, name: str, claims: Iterable[SessionClaim],
             claimed: set[str]) -> Iterator[SessionClaim]:
    """The claims to land, as the adapter yields them; those it judged unchanged are counted
    here and not landed. An exception from the adapter's discovery or claim ends its claims
    (what landed before stays landed) and is reported as the adapter's error."""
    try:
        for claim in claims:
            claimed.add(claim.session)
            ctx.sessions_claimed.add(claim.session)
            if claim.unchanged is not None:
                _count_unchanged(actx.counters, claim.unchanged)
            else:
                yield claim
    except Exception as exc:  # noqa: BLE001 - one adapter failing does not stop the others
        ctx.error(name, describe_failure(exc))


def _processes(info: AdapterInfo, actx: AdapterContext, to_land: Iterator[SessionClaim],
               total: int) -> tuple[Iterator[SessionClaim], int]:
    """How many processes land ``to_land`` (``total`` of them, 0 if not known), and the claims to
    land: one process unless the adapter allows more and the pass lands for real."""
    if not info.parallel_sessions or actx.pass_ctx.dry_run:
        return to_land, 1
    known = total
    from_sessions = info.parallel_from or DEFAULT_FROM_SESSIONS
    if not known and explicit_workers(actx.options) is None:
        to_land, known = _look_ahead(to_land, from_sessions)
    return to_land, configured_workers(actx.options, known, from_sessions)


def _look_ahead(claims: Iterator[SessionClaim], most: int) -> tuple[Iterator[SessionClaim], int]:
    """``claims`` unchanged, and how many there are up to ``most``: the default number of
    worker processes depends on whether a pass has that many sessions to land, and a stream of
    claims only says so once that many have been taken from it (and are held meanwhile)."""
    head = list(islice(claims, most))
    return chain(head, claims), len(head)


def _count_unchanged(counters: AdapterCounters, unchanged: dict[str, int]) -> None:
    """Add what landing a session the adapter judged unchanged would have counted."""
    for key in ("sources", "gone"):
        value = unchanged.get(key, 0)
        if isinstance(value, int) and value > 0:
            setattr(counters, key, getattr(counters, key) + value)
