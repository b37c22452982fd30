"""The ``retention`` plugin: one retention step at the end of every pass, after the push.

It runs last among the pass's observers (``trylast``), so a file the push has just had accepted
can go in the same pass.
"""

from __future__ import annotations

import sys

from asz_core import hookimpl
from asz_core.context import PassContext, PassSummary

__all__ = ["NAME", "asz_pass_end"]

NAME = "retention"


@hookimpl(trylast=True)
def asz_pass_end(ctx: PassContext, summary: PassSummary) -> None:
    from asz_core.config import Config

    if ctx.dry_run or not isinstance(ctx.config, Config):
        return
    from asz_core.retention.schema import SECTION, is_on  # the policy itself only when it is on

    if not is_on(ctx.config.section(SECTION)) or ctx.hooks is None:
        return
    from asz_core.retention.step import retain_configured  # the retention library: only when it is on

    result = retain_configured(ctx.hooks, ctx.config, ctx.clock())
    if result.removed or result.errors:
        print(result.line(), file=sys.stderr)
    for error in result.errors:
        ctx.error(NAME, error)  # in the summary the pass finishes after this hook
