"""The ``retention`` plugin: one retention step at the end of every pass, after the push.

It runs last among the pass's observers (``trylast``), so a file the push has just had accepted
can go in the same pass. A pass whose step removed nothing may be repeated while nothing but the
clock changes: it says from when the clock alone would make a file old enough.
"""

from __future__ import annotations

import sys

from asz_core import hookimpl
from asz_core.context import PassContext, PassSummary
from asz_core.retention.retain import RetainResult

__all__ = ["NAME", "asz_pass_end", "asz_pass_repeatable"]

NAME = "retention"


@hookimpl(trylast=True)
def asz_pass_end(ctx: PassContext, summary: PassSummary) -> None:
    if ctx.dry_run or ctx.config is None:
        return
    from asz_core.retention.step import policy_of, retain_configured

    if not policy_of(ctx.config).on:
        return
    result = retain_configured(ctx.host, ctx.config, ctx.clock())
    ctx.notes[NAME] = result
    if result.removed or result.errors:
        print(result.line(), file=sys.stderr)
    for error in result.errors:
        ctx.error(NAME, error)
        summary.totals.errors += 1


@hookimpl
def asz_pass_repeatable(ctx: PassContext) -> bool:
    result: RetainResult | None = ctx.notes.get(NAME)
    if result is None:
        return True  # retention is off: nothing here changes with the root or the clock
    if result.removed or result.errors:
        return False
    if result.plan.next_ns is not None:
        ctx.recheck_at(result.plan.next_ns)
    return True
