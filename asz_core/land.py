"""Landing one claim: the session's lock, the adapter's ``asz_land``, the settled check, and
what it all did as one :class:`~asz_core.tally.SessionOutcome`.

The same function lands a claim in the pass's own process and in a worker process
(:mod:`asz_core.workers`), and either way nothing of it reaches the pass but the outcome it
returns, which the pass merges in claim order (:mod:`asz_core.pipeline`). The steps:

1. lock the session (another writer holding it: ``busy``, tried next pass);
2. let the adapter land the claim, its counts, warnings and failures going to the outcome and
   its landed files listed there (an exception is the session's error, not the pass's end);
3. still under the lock, when the claim declared what settles it (``SessionClaim.settled_by``)
   and the landing counted nothing unsettling, stat each source and cursor into the session's
   settled entry: the stat and the check of each cursor are one, so a source that grows
   meanwhile is never recorded as landed.
"""

from __future__ import annotations

import time
from pathlib import Path

from asz_core.context import AdapterContext
from asz_core.failures import describe_failure
from asz_core.host import PluginHost
from asz_core.plugin import SessionClaim
from asz_core.root.layout import cursor_file
from asz_core.root.locks import LockBusy
from asz_core.root.settled import SettledEntry, settled_entry
from asz_core.tally import SessionOutcome

__all__ = ["land_claim"]


def land_claim(host: PluginHost, actx: AdapterContext, claim: SessionClaim) -> SessionOutcome:
    """Land ``claim`` under its session's lock and return what that did."""
    outcome = SessionOutcome(claim.session, settles=claim.settled_by is not None and not actx.dry_run)
    started = time.perf_counter()
    try:
        with actx.root.open_session(claim.session, outcome.landed.append) as session, \
                actx.landing(outcome):
            host.land(actx.name, actx, claim, session)
            if outcome.settles and outcome.settled_now:
                outcome.settled = _entry(session.dir, claim, outcome)
    except LockBusy:
        outcome.counters.busy += 1
    except Exception as exc:  # noqa: BLE001 - isolate each session's failure
        outcome.error(describe_failure(exc))
    outcome.seconds = time.perf_counter() - started
    return outcome


def _entry(session_dir: Path, claim: SessionClaim, outcome: SessionOutcome) -> SettledEntry | None:
    assert claim.settled_by is not None
    sources = [(Path(s.source), cursor_file(session_dir, s.subdir, s.kind), s.append)
               for s in claim.settled_by]
    return settled_entry(session_dir, sources,
                         {"sources": outcome.counters.sources, "gone": outcome.counters.gone})
