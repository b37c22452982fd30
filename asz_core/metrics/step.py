"""The derivation as a pass runs it: after every adapter, before the observers (the push).

A derivation that fails is the pass's error, named ``metrics``, and never loses the summary:
what it did not derive is derived by the next pass.
"""

from __future__ import annotations

from asz_core.context import PassContext
from asz_core.metrics.lookback import parse_lookback
from asz_core.root.owed import METRICS, read_owed, settle_owed

__all__ = ["derive_in_pass"]


def derive_in_pass(ctx: PassContext) -> None:
    """Derive the sessions the root's ``.metrics-owed`` log owes (those landed since the last
    derivation; every session when the log is missing or a pass was killed), then settle the
    log, keeping the sessions not derived in full."""
    section = ctx.config.section("metrics") if ctx.config is not None else {}
    root = ctx.root.path
    owed = read_owed(root, METRICS)
    if owed.sessions is not None and not owed.sessions:
        return  # nothing landed since: a no-op pass reads no session
    # here, not at the top: the derivation's modules are loaded by a pass that has work for them
    from asz_core.metrics.derive import derive_root
    from asz_core.metrics.state import MetricsStateError

    try:
        stats = derive_root(root, lookback_s=parse_lookback(str(section.get("lookback", "72h"))),
                            clock=ctx.clock, sessions=None if owed.sessions is None else sorted(owed.sessions))
    except (MetricsStateError, OSError, ValueError) as exc:
        ctx.error("metrics", str(exc))
        return
    for error in stats.errors:
        ctx.error("metrics", error)
    settle_owed(root, owed, stats.undone, METRICS, holding_root=True)
