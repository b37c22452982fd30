"""The derivation as a pass runs it: after every adapter, before the observers (the push).

A derivation that fails is the pass's error, named ``metrics``, and never loses the summary:
what it did not derive is derived by the next pass.
"""

from __future__ import annotations

from asz_core.context import PassContext
from asz_core.metrics.derive import derive_root
from asz_core.metrics.lookback import parse_lookback
from asz_core.metrics.state import MetricsStateError

__all__ = ["derive_in_pass"]


def derive_in_pass(ctx: PassContext) -> None:
    section = ctx.config.section("metrics") if ctx.config is not None else {}
    try:
        stats = derive_root(ctx.root.path, lookback_s=parse_lookback(str(section.get("lookback", "72h"))),
                            clock=ctx.clock)
    except (MetricsStateError, OSError, ValueError) as exc:
        ctx.error("metrics", str(exc))
        return
    for error in stats.errors:
        ctx.error("metrics", error)
