"""Landing one claim: the session's lock, the adapter's ``asz_land``, the settled check, and
what it all did as one :class:`~asz_core.tally.SessionOutcome`.

The same function lands a claim in the pass's own process and in a worker process
(:mod:`asz_core.workers`), and either way nothing of it reaches the pass but the outcome it
returns, which the pass merges in claim order (:mod:`asz_core.pipeline`). The steps:

0. a session new to the root whose adapter names its one append-only source
   (``asz_new_session``) lands in one place, the same steps in the same order
   (:mod:`asz_core.collect.fresh`); whatever that landing does not take goes on to step 1;
1. lock the session (another writer holding it: ``busy``, tried next pass);
2. let the adapter land the claim, its counts, warnings and failures going to the outcome and
   its landed files listed there (an exception is the session's error, not the pass's end);
3. still under the lock, when the claim declared what settles it (``SessionClaim.settled_by``)
   and the landing counted nothing unsettling, stat each source and cursor into the session's
   settled entry: the stat and the check of each cursor are one, so a source that grows
   meanwhile is never recorded as landed.

:func:`land_claims` and :class:`GroupLanding` land claims this way in groups
(:mod:`asz_core.root.group`): each session's files and cursors wait, still under its lock, for
one commit of the whole group (in the pass's own process, a full group's is made behind the
next group's landing); step 3 runs once the group's steps are durable, so the settled entry
stats the cursors as they now are; and the outcomes go out, in claim order, only then (a file
an outcome names is in place).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from asz_core.context import AdapterContext
from asz_core.failures import describe_failure
from asz_core.host import PluginHost
from asz_core.plugin import SessionClaim
from asz_core.root.group import CommitGroup
from asz_core.root.layout import cursor_name
from asz_core.root.locks import LockBusy
from asz_core.root.settled import SettledEntry, settled_entry
from asz_core.root.storage import SessionHandle
from asz_core.tally import SessionOutcome

__all__ = ["GroupLanding", "land_claim", "land_claims"]


def land_claims(host: PluginHost, actx: AdapterContext, claims: Iterable[SessionClaim]) -> Iterator[SessionOutcome]:
    """Land each of ``claims`` (:func:`land_claim`) in groups committed together
    (:class:`GroupLanding`), and yield their outcomes in claim order as each group commits."""
    landing = GroupLanding(host, actx, behind=True)
    try:
        for claim in claims:
            yield from landing.land(claim)
    finally:  # the last group, or whatever is held when the pass stops taking outcomes
        done = landing.close()
    yield from done


class GroupLanding:
    """Claims landed one by one into a commit group (:mod:`asz_core.root.group`), which commits
    once it is full (:meth:`CommitGroup.full`), after a session that failed, or when asked: each
    call hands back the outcomes complete by then, in the order their claims came. Without a
    group (a dry run, no ``syncfs``) each outcome is complete at once.

    With ``behind``, a full group commits behind the next group's landing (rule 3 of
    :mod:`~asz_core.root.group`): for the pass's own process, whose CPU would sit idle while it
    waits for the disk. A worker's CPU goes to the other workers meanwhile, and there the
    overlap bought no wall time for more CPU (benchmarks/README.md, round 19), so a worker's
    full group commits at once."""

    def __init__(self, host: PluginHost, actx: AdapterContext, *, behind: bool) -> None:
        self.host = host
        self.actx = actx
        self.behind = behind
        self.group = CommitGroup.open(actx.root.path, dry_run=actx.dry_run)
        self._outcomes_behind: list[SessionOutcome] = []  #: of the group committing behind
        self._held: list[SessionOutcome] = []  #: of the group landing

    def __len__(self) -> int:
        """Outcomes waiting for their group's commit."""
        return len(self._outcomes_behind) + len(self._held)

    def land(self, claim: SessionClaim) -> list[SessionOutcome]:
        """Land ``claim``; the outcomes complete now (the group behind's, once it has finished)."""
        outcome = land_claim(self.host, self.actx, claim, self.group)
        if self.group is None:
            return [outcome]
        self._held.append(outcome)
        # a failure commits at once, so that it is reported as itself even if the process dies
        # before the group would have filled
        if outcome.errors:
            return self.commit()
        if not self.behind:
            return self.commit() if self.group.full() else []
        done = self._finished_behind(wait=False)
        if self.group.full():
            done += self._finished_behind(wait=True)
            self.group.commit_behind()
            self._outcomes_behind, self._held = self._held, []
        return done

    def _finished_behind(self, *, wait: bool) -> list[SessionOutcome]:
        """The outcomes of the group behind, if it has finished now (waiting for it, with
        ``wait``)."""
        assert self.group is not None
        if not (self._outcomes_behind and self.group.finish_behind(wait=wait)):
            return []
        done, self._outcomes_behind = self._outcomes_behind, []
        return done

    def commit(self) -> list[SessionOutcome]:
        """Commit the group (and the one behind it): every outcome held is complete."""
        if self.group is not None:
            self.group.commit()
        return self._all_done()

    def close(self) -> list[SessionOutcome]:
        """Commit what is held and let the group go."""
        if self.group is not None:
            self.group.close()
        return self._all_done()

    def _all_done(self) -> list[SessionOutcome]:
        done = self._outcomes_behind + self._held
        self._outcomes_behind, self._held = [], []
        return done


def land_claim(host: PluginHost, actx: AdapterContext, claim: SessionClaim,
               group: CommitGroup | None = None) -> SessionOutcome:
    """Land ``claim`` under its session's lock and return what that did. In a ``group``, the
    outcome is complete once the group has committed."""
    if group is not None:
        # the collectors and the writer load once a session lands, not on a pass with nothing new
        from asz_core.collect.fresh import new_to_root

        if new_to_root(actx, claim.session):
            landed = _land_new(host, actx, claim, group)
            if landed is not None:
                return landed
    outcome = SessionOutcome(claim.session, settles=claim.settled_by is not None and not actx.dry_run)
    try:
        with actx.root.open_session(claim.session, outcome.landed.append, group) as session, \
                actx.landing(outcome):
            if session.group is not None:
                session.on_failure = lambda exc: outcome.error(describe_failure(exc))
                session.after_commit = lambda: _settle(session, claim, outcome)
            host.land(actx.name, actx, claim, session)
            if session.group is None:
                _settle(session, claim, outcome)
    except LockBusy:
        outcome.counters.busy += 1
    except Exception as exc:  # noqa: BLE001 - isolate each session's failure
        outcome.error(describe_failure(exc))
    return outcome


def _land_new(host: PluginHost, actx: AdapterContext, claim: SessionClaim,
              group: CommitGroup) -> SessionOutcome | None:
    """Step 0: a session new to the root whose adapter names its one source, landed in one
    place (:mod:`asz_core.collect.fresh`); ``None``: nothing was made, ``asz_land`` lands it."""
    from asz_core.collect.fresh import land_new_session

    try:
        source = host.new_session(actx.name, actx, claim)
        return None if source is None else land_new_session(actx, claim, source, group)
    except Exception as exc:  # noqa: BLE001 - isolate each session's failure, as below
        outcome = SessionOutcome(claim.session)
        outcome.error(describe_failure(exc))
        return outcome


def _settle(session: SessionHandle, claim: SessionClaim, outcome: SessionOutcome) -> None:
    """Step 3: the session's settled entry, when its landing left it settled."""
    if not (outcome.settles and outcome.settled_now):
        return
    try:
        outcome.settled = _entry(session, claim, outcome)
    except Exception as exc:  # noqa: BLE001 - as the landing's own failure would be
        outcome.error(describe_failure(exc))


def _entry(session: SessionHandle, claim: SessionClaim, outcome: SessionOutcome) -> SettledEntry | None:
    assert claim.settled_by is not None
    # each cursor's path as the session joined it for its collector (``SessionHandle.path``)
    sources = [(s.source, session.path(s.subdir, cursor_name(s.kind)), s.append) for s in claim.settled_by]
    return settled_entry(session.dir, sources, {"sources": outcome.counters.sources, "gone": outcome.counters.gone},
                         session.states_saved if session.fresh else None)
