"""What an adapter author needs besides the hooks: the marker and the objects hooks exchange.

A minimal adapter module::

    from asz_core import hookimpl
    from asz_core.plugin import AdapterInfo, Found, SessionClaim

    @hookimpl
    def asz_adapter_info():
        return AdapterInfo(version="0.1.0", runtime="My Agent")

    @hookimpl
    def asz_discover(ctx):
        ctx.watch(str(home))     # every path read outside the root (see asz_pass_repeatable)
        for sid, path in ...:   # a generator: the pass holds one session at a time
            yield Found(kind="session", key=sid, session=sid, payload=path)

    @hookimpl
    def asz_claim(ctx, found):
        for f in found:          # walked once; each claim lands before the next is asked for
            if ctx.session_filter.admits(...):
                yield SessionClaim(f.session, [f])

    @hookimpl
    def asz_land(ctx, claim, session):
        collect_append(ctx, session, AppendSource(...))

    @hookimpl
    def asz_pass_repeatable():  # optional: what lands is decided by the watched files alone,
        return True             # so a run finding them unchanged may repeat the last report

and an entry point in its ``pyproject.toml``::

    [project.entry-points."asz.adapters"]
    my-agent = "my_package.adapter"

``examples/asz-adapter-jsonl`` is a complete one to copy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pluggy

__all__ = ["AdapterInfo", "Found", "SessionClaim", "hookimpl"]

#: Marks a function as the implementation of an asz hook (see :mod:`asz_core.hookspecs`).
hookimpl = pluggy.HookimplMarker("asz")


@dataclass(frozen=True)
class AdapterInfo:
    """What an adapter says about itself."""

    version: str  #: the adapter's contract version, written into every header it lands
    runtime: str  #: the runtime's display name, e.g. "Claude Code"
    dialects: tuple[str, ...] = ()  #: the dialects it writes, e.g. ("claude-code/1",)
    #: how the pass line names this adapter's ``waiting``/``unreadable`` counts, and ``excluded``,
    #: which the pass line shows only for an adapter that names it
    counter_labels: Mapping[str, str] = field(default_factory=dict)
    #: ``asz_land`` keeps nothing in memory from one session to the next and writes only under
    #: the session it holds, so sessions may land in several processes (``collector.workers``);
    #: each claim is then pickled to the process that lands it, so its payload must pickle.
    #: What it must change outside the session (its own state), it gives the pass with
    #: ``AdapterContext.hand_back``.
    parallel_sessions: bool = False
    #: with no number of processes configured, a pass lands this adapter's sessions in several
    #: once it has this many to land (``None``: ``asz_core.workers.DEFAULT_FROM_SESSIONS``, for
    #: sessions of a few milliseconds); an adapter whose sessions take far longer lowers it
    parallel_from: int | None = None


@dataclass
class Found:
    """One unit an adapter found: a session, a body file, a store it does not read yet.

    ``kind`` and ``detail`` are shown by ``asz-pipeline sources``; ``payload`` is the adapter's
    own and is handed back to it in :class:`SessionClaim`.
    """

    kind: str
    key: str
    session: str | None = None
    sources: int = 1
    path: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    payload: Any = None


@dataclass
class SessionClaim:
    """What one session gets this pass: landed under that session's lock."""

    session: str
    found: list[Found] = field(default_factory=list)
    #: Set by an adapter that knows from a stat alone that landing this session would land
    #: nothing (:class:`~asz_core.root.settled.SettledSessions`): the counters landing it would
    #: have added. The pass adds them and neither locks the session nor calls ``asz_land``.
    unchanged: dict[str, int] | None = None
