"""The ``claude-code-provider`` adapter: the request and response bodies Claude Code writes
with ``OTEL_LOG_RAW_API_BODIES=file:<dir>``, claimed to their sessions, landed without their
repeats and rebuilt byte for byte (``spec/provider-bodies.txt``).

It runs after ``claude-code-local`` in a pass, so that a response only a transcript names
finds its session in the same pass. It never deletes or changes a source file.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from asz_adapters.claude_code_provider.about import DIALECT
from asz_adapters.claude_code_provider.claims import claim
from asz_adapters.claude_code_provider.discover import discover, pass_state
from asz_adapters.claude_code_provider.seen import SeenTable
from asz_core import hookimpl
from asz_core.plugin import AdapterInfo, Found, SessionClaim

if TYPE_CHECKING:
    from asz_core.context import AdapterContext, ConfigSections
    from asz_core.root.storage import SessionHandle
    from asz_core.session_report import Problem

__all__ = ["VERSION"]

VERSION = "0.1.0"
#: A session lands a chain of bodies, tens of milliseconds, where the core's default threshold
#: is sized for sessions of a few: with no number of workers configured, eight sessions to land
#: are enough to start them (benchmarks/README.md, "Figures behind the code's constants").
PARALLEL_FROM: Final = 8
_NAME: Final = "claude-code-provider"


@hookimpl
def asz_adapter_info() -> AdapterInfo:
    # A session's landing writes only under it; what it changes in the seen table goes back to
    # the pass (``land.record_landed``, ``_session_landed``), which alone writes the table.
    return AdapterInfo(version=VERSION, runtime="Claude Code", dialects=(DIALECT,),
                       counter_labels={"waiting": "bodies_waiting", "unreadable": "bodies_unreadable",
                                       "excluded": "bodies_excluded", "retired": "bodies_retired"},
                       parallel_sessions=True, parallel_from=PARALLEL_FROM,
                       landing_modules=("asz_adapters.claude_code_provider.land",))


@hookimpl
def asz_add_commands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from asz_adapters.claude_code_provider.command import add_bodies_command  # the CLI only when asked

    add_bodies_command(subparsers)


@hookimpl
def asz_options_schema() -> dict[str, Any]:
    return {}


@hookimpl
def asz_discover(ctx: AdapterContext) -> Iterable[Found]:
    table = SeenTable.load(ctx.root)
    if table.problem is not None:
        ctx.warn(table.problem)
    state, found = discover(ctx, table)
    ctx.keep(state)
    return found


@hookimpl
def asz_claim(ctx: AdapterContext, found: Iterable[Found]) -> Iterable[SessionClaim]:
    state = pass_state(ctx)
    if state is None or not state.directory.is_dir():
        return []
    claims = claim(ctx, state)
    state.to_land = len(claims)
    return claims


@hookimpl
def asz_land(ctx: AdapterContext, claim: SessionClaim, session: SessionHandle) -> None:
    # the provider-body encoder and the writer load when a body lands, not on a pass with nothing new
    from asz_adapters.claude_code_provider.land import land_session

    if pass_state(ctx) is None:
        raise RuntimeError("asz_land was called without asz_discover in the same pass")
    try:
        land_session(ctx, claim, session)
    finally:
        ctx.hand_back(_session_landed, None)


def _source_root(config: ConfigSections) -> Path | None:
    for entry in config.adapters:
        if entry.name == _NAME and entry.enabled and entry.options.get("source_root"):
            return Path(str(entry.options["source_root"]))
    return None


@hookimpl
def asz_session_sources(config: ConfigSections, root: Path, session: str) -> dict[str, tuple[str, int]] | None:
    """The body files the seen table attributes to ``session``, for a scenario removal."""
    source = _source_root(config)
    if source is None:
        return None
    table = SeenTable.read_only(root)
    return {str(source / e.name): (e.state, e.size) for e in table.entries.values() if e.session == session}


@hookimpl
def asz_sessions_removed(config: ConfigSections, root: Path, sessions: list[str]) -> None:
    """A scenario removal took these sessions and their body files away: their lines go."""
    if _source_root(config) is None or not (root / "_provider").is_dir():
        return
    from asz_core.root.storage import StorageRoot

    table = SeenTable.load(StorageRoot(root))
    gone = [name for name, e in table.entries.items() if e.session in sessions]
    for name in gone:
        table.drop(name)
    if gone:
        table.save()


@hookimpl
def asz_verify(root: Path, sessions: frozenset[str] | None) -> Iterable[Problem]:
    from asz_adapters.claude_code_provider.check import check_root  # by verify only

    return check_root(root, sessions)


def _session_landed(ctx: AdapterContext, _: None) -> None:
    """In the pass's process, once per session landed (or failed): after the last one, the
    pass's log is taken into ``seen.state``."""
    state = pass_state(ctx)
    if state is None:
        return
    state.to_land -= 1
    if state.to_land == 0 and not ctx.dry_run:
        state.table.save()
