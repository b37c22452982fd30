"""The ``claude-code-provider`` adapter: the request and response bodies Claude Code writes
with ``OTEL_LOG_RAW_API_BODIES=file:<dir>``, claimed to their sessions, landed without their
repeats and rebuilt byte for byte (``spec/provider-bodies.txt``).

It runs after ``claude-code-local`` in a pass, so that a response only a transcript names
finds its session in the same pass. It never deletes or changes a source file.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from asz_adapters.claude_code_provider.about import DIALECT
from asz_adapters.claude_code_provider.claims import claim
from asz_adapters.claude_code_provider.discover import PASS_NOTE, ProviderPass, discover
from asz_adapters.claude_code_provider.seen import SeenTable
from asz_core import hookimpl
from asz_core.plugin import AdapterInfo, Found, SessionClaim

if TYPE_CHECKING:
    from asz_core.context import AdapterContext
    from asz_core.root.storage import SessionHandle

__all__ = ["VERSION"]

VERSION = "0.1.0"


def _pass_state(ctx: AdapterContext) -> ProviderPass | None:
    state = ctx.pass_ctx.notes.get(PASS_NOTE)
    return state if isinstance(state, ProviderPass) else None


@hookimpl
def asz_adapter_info() -> AdapterInfo:
    return AdapterInfo(version=VERSION, runtime="Claude Code", dialects=(DIALECT,),
                       counter_labels={"waiting": "bodies_waiting", "unreadable": "bodies_unreadable"})


@hookimpl
def asz_options_schema() -> dict[str, Any]:
    return {}


@hookimpl
def asz_pass_repeatable() -> bool:
    # Decided by the body files in the watched directory and by the root (the seen table, the
    # landed transcripts); a body too young to judge asks for a recheck (``claims``).
    return True


@hookimpl
def asz_discover(ctx: AdapterContext) -> Iterable[Found]:
    state, found = discover(ctx, SeenTable.load(ctx.root))
    ctx.pass_ctx.notes[PASS_NOTE] = state
    return found


@hookimpl
def asz_claim(ctx: AdapterContext, found: Iterable[Found]) -> Iterable[SessionClaim]:
    state = _pass_state(ctx)
    if state is None or not state.directory.is_dir():
        return []
    claims = claim(ctx, state)
    state.to_land = len(claims)
    return claims


@hookimpl
def asz_land(ctx: AdapterContext, claim: SessionClaim, session: SessionHandle) -> None:
    # the provider-body encoder and the writer load when a body lands, not on a pass with nothing new
    from asz_adapters.claude_code_provider.land import land_session

    state = _pass_state(ctx)
    if state is None:
        raise RuntimeError("asz_land was called without asz_discover in the same pass")
    try:
        land_session(ctx, state, claim, session)
    finally:
        state.to_land -= 1
    if state.to_land == 0 and not ctx.dry_run:
        state.table.save()  # the pass's log taken into seen.state, once every session has landed
