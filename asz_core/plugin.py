"""What an adapter author needs besides the hooks: the marker and the objects hooks exchange.

A minimal adapter module::

    from asz_core import hookimpl
    from asz_core.plugin import AdapterInfo, Found, SessionClaim, SettledBy

    @hookimpl
    def asz_adapter_info():
        return AdapterInfo(version="0.1.0", runtime="My Agent")

    @hookimpl
    def asz_discover(ctx):
        for sid, path in ...:   # a generator: the pass holds one session at a time
            yield Found(kind="session", key=sid, session=sid, payload=path,
                        directory=str(path.parent))  # include/exclude: applied by the host

    @hookimpl
    def asz_claim(ctx, found):
        for f in found:          # walked once; each claim lands before the next is asked for
            yield SessionClaim(f.session, [f], settled_by=[
                SettledBy(str(f.payload), "streams/main", "transcript")])

    @hookimpl
    def asz_land(ctx, claim, session):
        collect_append(ctx, session, AppendSource(...))

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

__all__ = ["AdapterInfo", "Found", "SessionClaim", "SettledBy", "hookimpl"]

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
    #: the modules ``asz_land`` imports when it first runs (there, so that a pass with nothing
    #: to land never loads them): a pass that lands in worker processes imports them before it
    #: forks them, so that each worker does not import them again
    landing_modules: tuple[str, ...] = ()


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
    #: the source directory the unit's session belongs to, as ``include``/``exclude`` match it
    #: (``-home-me-project`` or ``/home/me/project``): a unit with one is claimed only when the
    #: filter admits it, and the host leaves the others out before ``asz_claim`` sees them
    #: (``sources`` lists them, marked ``excluded``). ``None``: the adapter filters itself.
    directory: str | None = None


@dataclass(slots=True)
class SettledBy:
    """One source of a claim, and the cursor that says how far it has landed.

    A claim that lists every one of its sources this way (``SessionClaim.settled_by``) takes
    part in the settled protocol, which the host runs: once a landing has taken each source to
    its end (an append cursor at the source's size and inode, a snapshot cursor on its size,
    mtime and inode) and counted nothing unsettling, the host notes the session settled, with
    an ``lstat`` of each source and cursor; a later pass that claims it with the same sources
    and finds every one stat the same counts it without locking or landing it.
    """

    source: str            #: the source's path, as discovery listed it
    subdir: str            #: the place it lands in, such as ``streams/main``
    kind: str              #: the landed file kind (``transcript``, ``agent_meta``): names its cursor
    append: bool = True    #: read by the append collector (else the snapshot collector)


@dataclass
class SessionClaim:
    """What one session gets this pass: landed under that session's lock."""

    session: str
    found: list[Found] = field(default_factory=list)
    #: Every source of the session, for the host's settled protocol (:class:`SettledBy`);
    #: ``None``: the session is landed every pass it is claimed.
    settled_by: list[SettledBy] | None = None
    #: Set by the host (or an adapter that keeps its own notes, ``AdapterContext.settled``) when
    #: a stat alone says landing this session would land nothing: the counters landing it would
    #: have added. The pass adds them and neither locks the session nor calls ``asz_land``.
    unchanged: dict[str, int] | None = None
