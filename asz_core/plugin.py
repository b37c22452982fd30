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

The objects are plain classes with ``__slots__`` (``AdapterInfo`` a named tuple), not
dataclasses: every ``run`` imports this module, and a dataclass compiles its generated methods
at each import.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

import pluggy

__all__ = ["AdapterInfo", "Found", "SessionClaim", "SettledBy", "hookimpl"]

#: Marks a function as the implementation of an asz hook (see :mod:`asz_core.hookspecs`).
hookimpl = pluggy.HookimplMarker("asz")

#: no labels of its own: the pass line's names (shared, and read-only so that it can be)
_NO_LABELS: Mapping[str, str] = MappingProxyType({})


class AdapterInfo(NamedTuple):
    """What an adapter says about itself."""

    version: str  #: the adapter's contract version, written into every header it lands
    runtime: str  #: the runtime's display name, e.g. "Claude Code"
    dialects: tuple[str, ...] = ()  #: the dialects it writes, e.g. ("claude-code/1",)
    #: how the pass line names this adapter's ``waiting``/``unreadable`` counts, and ``excluded``,
    #: which the pass line shows only for an adapter that names it
    counter_labels: Mapping[str, str] = _NO_LABELS
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


class Found:
    """One unit an adapter found: a session, a body file, a store it does not read yet.

    ``kind`` and ``detail`` are shown by ``asz-pipeline sources``; ``payload`` is the adapter's
    own and is handed back to it in :class:`SessionClaim`.
    """

    __slots__ = ("detail", "directory", "key", "kind", "path", "payload", "session", "sources")

    def __init__(self, kind: str, key: str, session: str | None = None, sources: int = 1, path: str | None = None,
                 detail: dict[str, Any] | None = None, payload: Any = None, directory: str | None = None) -> None:
        self.kind = kind
        self.key = key
        self.session = session
        self.sources = sources
        self.path = path
        self.detail: dict[str, Any] = {} if detail is None else detail
        self.payload = payload
        #: the source directory the unit's session belongs to, as ``include``/``exclude`` match
        #: it (``-home-me-project`` or ``/home/me/project``): a unit with one is claimed only
        #: when the filter admits it, and the host leaves the others out before ``asz_claim``
        #: sees them (``sources`` lists them, marked ``excluded``). ``None``: the adapter
        #: filters itself.
        self.directory = directory

    def __repr__(self) -> str:
        return f"Found({self.kind!r}, {self.key!r}, session={self.session!r})"


class SettledBy:
    """One source of a claim, and the cursor that says how far it has landed.

    A claim that lists every one of its sources this way (``SessionClaim.settled_by``) takes
    part in the settled protocol, which the host runs: once a landing has taken each source to
    its end (an append cursor at the source's size and inode, a snapshot cursor on its size,
    mtime and inode) and counted nothing unsettling, the host notes the session settled, with
    an ``lstat`` of each source and cursor; a later pass that claims it with the same sources
    and finds every one stat the same counts it without locking or landing it.
    """

    __slots__ = ("append", "kind", "source", "subdir")

    def __init__(self, source: str, subdir: str, kind: str, append: bool = True) -> None:
        self.source = source  #: the source's path, as discovery listed it
        self.subdir = subdir  #: the place it lands in, such as ``streams/main``
        self.kind = kind      #: the landed file kind (``transcript``, ``agent_meta``): names its cursor
        self.append = append  #: read by the append collector (else the snapshot collector)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SettledBy):
            return NotImplemented
        return (self.source, self.subdir, self.kind, self.append) == (other.source, other.subdir, other.kind,
                                                                      other.append)

    __hash__ = None  # type: ignore[assignment]  # compared by value, never hashed

    def __repr__(self) -> str:
        return f"SettledBy({self.source!r}, {self.subdir!r}, {self.kind!r}, append={self.append!r})"


class SessionClaim:
    """What one session gets this pass: landed under that session's lock."""

    __slots__ = ("found", "session", "settled_by", "unchanged")

    def __init__(self, session: str, found: list[Found] | None = None, settled_by: list[SettledBy] | None = None,
                 unchanged: dict[str, int] | None = None) -> None:
        self.session = session
        self.found: list[Found] = [] if found is None else found
        #: Every source of the session, for the host's settled protocol (:class:`SettledBy`);
        #: ``None``: the session is landed every pass it is claimed.
        self.settled_by = settled_by
        #: Set by the host (or an adapter that keeps its own notes, ``AdapterContext.settled``)
        #: when a stat alone says landing this session would land nothing: the counters landing
        #: it would have added. The pass adds them and neither locks the session nor calls
        #: ``asz_land``.
        self.unchanged = unchanged

    def __repr__(self) -> str:
        return f"SessionClaim({self.session!r}, {len(self.found)} found, unchanged={self.unchanged!r})"
