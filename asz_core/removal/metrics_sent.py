"""Whether the metrics of a session are all derived and all sent: :mod:`~asz_core.removal.decide`'s
rule 10.

A session goes only once the receiver holds everything the pipeline makes of it, and with
metrics on that includes the metrics derived from its landed files; a session removed before
would take calls nobody counted with it. The conditions, in order:

1. With ``metrics.enabled`` on, every landed file of the session is derived: ``metrics.state``
   names it with the digest it has now, or its receipt (``<session>/metrics/<seq>.json``) does,
   as after a pass that stopped before saving the state. The derivation names a file whose header
   holds no call the metric counts with no digest, and writes no ``metrics.state`` at all while no
   call of the root was counted: there a file counts as derived when it holds no call that would
   count. A skeleton is never derived. Anything else waits, and the next pass derives it.
2. Every spool file of the session (``_metrics/metrics-<session>-<seq>-local.pb``) is recorded as
   sent in ``push.state`` with the digest it has now, and none has a ``rejected`` line. This holds
   with metrics off too, for what an earlier configuration spooled; with metrics off and nothing
   spooled, the session is judged on its landed files and rounds alone, as upstream judges it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from asz_core.metrics.calls import read_calls
from asz_core.metrics.spool import SPOOL_DIR, read_receipt, receipt_path, spool_files_of
from asz_core.metrics.state import MetricsState
from asz_core.removal.verdict import GO, Verdict, kept, waiting
from asz_core.retention.receipts import ACCEPTED, REJECTED, Receipts
from asz_core.root.durable import sha256_of
from asz_core.sessiondata import SessionDataError

__all__ = ["LandedFile", "metrics_sent"]

NOT_DERIVED = "metrics not derived yet"
NOT_SENT = "metrics not sent yet"


@dataclass(frozen=True)
class LandedFile:
    """What rule 1 needs of one landed file, read once by the caller."""

    relpath: str
    seq: int
    digest: str
    counted: bool      #: its header holds calls the metric counts (a coding agent's transcript)
    skeleton: bool


def metrics_sent(root: Path, session: str, files: list[LandedFile], receipts: Receipts, *,
                 derives: bool, state: MetricsState | None) -> Verdict:
    """Rules 1 and 2 for one session. ``state`` is ``metrics.state`` as the pass loaded it once
    (``None``: there is none)."""
    if derives:                                                                 # rule 1
        for f in files:
            verdict = _derived(root, session, f, state)
            if not verdict.go:
                return verdict
    wait = GO                                                                   # rule 2
    for path in spool_files_of(root, session):
        rel = f"{SPOOL_DIR}/{path.name}"
        try:
            digest = sha256_of(path)
        except OSError as exc:
            return kept(f"the spool file {rel} cannot be read ({exc.strerror or exc}); make it readable or "
                        f"move the session's files aside yourself")
        receipt = receipts.receipt(rel, digest)
        if receipt == REJECTED:
            return kept(f"the receiver rejected records of {rel}")
        if receipt != ACCEPTED and wait.go:
            wait = waiting(NOT_SENT)
    return wait


def _derived(root: Path, session: str, f: LandedFile, state: MetricsState | None) -> Verdict:
    if f.skeleton:
        return GO
    if state is not None:
        recorded = state.derived.get(f.relpath)
        if recorded == f.digest or (recorded == "" and not f.counted):
            return GO
    try:
        receipt = read_receipt(receipt_path(root, session, f.seq), f.digest)
    except ValueError as exc:
        return kept(str(exc))
    except OSError as exc:
        return kept(f"the metrics receipt of {f.relpath} cannot be read ({exc.strerror or exc})")
    if receipt is not None:
        return GO
    if state is None and (not f.counted or not _would_count(root / f.relpath)):
        return GO
    return waiting(NOT_DERIVED)


def _would_count(path: Path) -> bool:
    """Whether the derivation would count a call of this file (a finished one with usage and a
    time); one that does not read is said by the derivation, and waits here."""
    try:
        calls = read_calls(path).calls
    except (SessionDataError, OSError, ValueError):
        return True
    return any(c.finished and c.usage is not None and c.at_ns is not None for c in calls)


