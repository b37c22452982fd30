"""The ``changes`` adapter's hooks: the change records the asz Claude Code plugin
writes, landed as Session Data files of kind ``changes`` beside the session's transcripts.

* ``asz_discover`` lists the plugin's data directory (:mod:`.discover`) and yields one unit per
  session, with the workspace its first record names as the unit's ``directory``, so the host
  applies ``include``/``exclude`` to it; what could not be placed in a session is a unit of kind
  ``unreadable``.
* ``asz_claim`` counts what was refused, for the sessions admitted (``unreadable``, or a
  ``conflict`` for two files behind one cursor), and claims each session with a file to land.
* ``asz_land`` hands each file to the host's append collector under the stream it names, with
  the session's own lock and sequence, so a file cut short or rewritten is a conflict, an
  unfinished last line waits, and the cursor moves only after its file has landed. A line that
  is not a change record lands whole as an unknown part, and is named and counted
  ``unreadable`` once it has landed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from asz_adapters.claude_code_changes.about import DIALECT, KIND, VERSION
from asz_adapters.claude_code_changes.discover import (
    Listing,
    PluginSession,
    Refused,
    default_plugin_data,
    list_plugin_data,
    workspace,
)
from asz_core import hookimpl
from asz_core.plugin import AdapterInfo, Found, SessionClaim, SettledBy

if TYPE_CHECKING:
    from asz_core.context import AdapterContext
    from asz_core.glossary import Glossary
    from asz_core.root.storage import SessionHandle

__all__ = ["VERSION"]


@hookimpl
def asz_adapter_info() -> AdapterInfo:
    # land_session keeps nothing between sessions and writes only under the session it holds
    return AdapterInfo(version=VERSION, runtime="Claude Code", dialects=(DIALECT,), parallel_sessions=True,
                       counter_labels={"waiting": "changes_waiting", "unreadable": "changes_unreadable"},
                       landing_modules=("asz_adapters.claude_code_changes.land",))


@hookimpl
def asz_options_schema() -> dict[str, Any]:
    return {}


@hookimpl
def asz_discover(ctx: AdapterContext) -> Iterable[Found]:
    configured = Path(ctx.source_root).expanduser() if ctx.source_root else default_plugin_data()
    root = configured.resolve()
    ctx.source_dirs.append(str(root))
    if not root.is_dir():
        if ctx.source_root:
            ctx.warn(f"source_root {configured} is not a directory; nothing to collect from it")
        return []  # the plugin is not installed: nothing to do
    return _discovered(list_plugin_data(root))


def _discovered(listing: Listing) -> Iterator[Found]:
    for refused in listing.refused:
        yield Found(kind="unreadable", key=refused.path, sources=0, path=refused.path, payload=refused)
    for session in sorted(listing.sessions):
        found = listing.sessions[session]
        where = workspace(found)
        detail: dict[str, Any] = {"streams": len(found.files), "workspace": where or None}
        if found.refused:
            detail["refused"] = len(found.refused)
        yield Found(kind="session", key=session, session=session, sources=len(found.files),
                    path=found.files[0].location if found.files else None, detail=detail, payload=found,
                    directory=where or None)


def _count(ctx: AdapterContext, refused: Refused) -> None:
    if refused.conflict:
        ctx.counters.conflicts += 1
        ctx.warn(f"{refused.path}: {refused.reason}; neither is read until one of them is moved")
    else:
        ctx.counters.unreadable += 1
        ctx.warn(f"{refused.path}: {refused.reason}; not collected")


@hookimpl
def asz_claim(ctx: AdapterContext, found: Iterable[Found]) -> Iterable[SessionClaim]:
    for item in found:
        if isinstance(item.payload, Refused):
            _count(ctx, item.payload)
            continue
        session: PluginSession = item.payload
        for refused in session.refused:
            _count(ctx, refused)
        if session.files:
            yield SessionClaim(session.session, [item], settled_by=[
                SettledBy(f.location, f.subdir, KIND, append=True) for f in session.files])


@hookimpl
def asz_land(ctx: AdapterContext, claim: SessionClaim, session: SessionHandle) -> None:
    # the collector and the record reader load when a session lands, not on a pass with nothing new
    from asz_adapters.claude_code_changes.land import land_session

    for item in claim.found:
        land_session(ctx, item.payload, session)


@hookimpl
def asz_glossary() -> list[Glossary]:
    from asz_adapters.claude_code_changes.glossary import GLOSSARY  # only the glossary command reads it

    return [GLOSSARY]
