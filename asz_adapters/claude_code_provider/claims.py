"""Which session each body file goes to, and which wait.

* A request goes to the session it names (``session_id`` in Claude Code's form, else refused).
* A response goes to the session of a request that names its request id as the previous
  request of its chain, else to the one session whose landed transcripts hold its message id,
  searched among the sessions with a request written within 24 hours of the response.
* A session is judged by the session filter on the directory its transcripts sit under (when
  its landed transcripts name several, every one must be admitted). A session nothing landed
  names a directory for is judged by where its transcripts sit in ``claude-code-local``'s source
  (:mod:`~asz_adapters.claude_code_provider.unlanded`): excluded when the filter leaves that out
  (counted as ``bodies_excluded``, no warning), else it waits.
* A request naming a session id that is not in Claude Code's form is refused and counted as
  unreadable: no pass will ever place it.

A file that is not one JSON value waits while it was written less than two minutes ago (Claude
Code writes a body with no temporary file) and is unreadable after that. A landed file whose
bytes changed is a conflict, every pass, until the landed bytes are back. Waiting and unreadable
files never fail the pass; each pass warns once per reason with how many files it holds. A file
its owner retired (:mod:`~asz_adapters.claude_code_provider.retired`) that would wait or be
unreadable is counted ``retired`` instead, with no warning; one that can be placed lands.
"""

from __future__ import annotations

import bisect
from collections import Counter, defaultdict
from typing import Final

from asz_adapters.claude_code_provider import names
from asz_adapters.claude_code_provider.discover import BodyFile, ProviderPass
from asz_adapters.claude_code_provider.retired import RetiredBodies
from asz_adapters.claude_code_provider.seen import (
    CONFLICT,
    EXCLUDED,
    LANDED,
    UNREADABLE,
    WAITING,
    Seen,
)
from asz_adapters.claude_code_provider.transcripts import Transcripts
from asz_adapters.claude_code_provider.unlanded import SourceProjects, local_projects
from asz_core.context import AdapterContext
from asz_core.plugin import Found, SessionClaim

__all__ = ["WHY", "claim"]

#: A file not one JSON value this long after it was last written is unreadable.
WRITE_GRACE_NS: Final = 120 * 10**9
#: A response is searched for in sessions with a request written this close to it.
CLAIM_WINDOW_NS: Final = 24 * 3600 * 10**9

#: What each ``why`` means, for the pass's warnings.
WHY: Final = {
    "partial": "still being written (not one JSON value, written less than 2 minutes ago)",
    "no-session": "requests that name no session (metadata.user_id holds no session_id)",
    "no-directory": "their session has no landed transcript naming its directory yet",
    "unclaimed": ("responses no request names and no session's landed transcripts hold "
                  "(among sessions with a request written within 24 hours)"),
    "ambiguous": "responses more than one session could hold",
    "changed": "changed while the pass read them; read again next pass",
    "not-json": "not one JSON value 2 minutes after they were last written",
    "refused": "requests naming a session id not in Claude Code's form",
    "name": "file names Claude Code does not write",
    "not-a-file": "not regular files (a symlink is never followed)",
    "cannot-read": "files this process cannot read (see the warnings above); tried again every pass",
    "too-large": "larger than a provider body may be (256 MiB), which no reader takes",
}
#: Unreadable files whose bytes were not read at all.
_NOT_READ: Final = frozenset({"name", "not-a-file", "cannot-read", "too-large"})


def _request_index(files: list[BodyFile]) -> tuple[dict[str, set[str]], dict[str, list[int]]]:
    """Sessions by the previous request id their requests name, and each session's request times."""
    by_prev: dict[str, set[str]] = defaultdict(set)
    times: dict[str, list[int]] = defaultdict(list)
    for bf in files:
        e = bf.seen
        if e.role != names.REQUEST or not e.session or e.state in (UNREADABLE, CONFLICT):
            continue
        times[e.session].append(e.mtime)
        if e.prev:
            by_prev[e.prev].add(e.session)
    for values in times.values():
        values.sort()
    return by_prev, times


class _RequestTimes:
    """Every request's time with its session, in time order, to find the sessions with a request
    near a response without looking at every session for each response."""

    def __init__(self, times: dict[str, list[int]]) -> None:
        self.order = {session: n for n, session in enumerate(times)}
        self.stamps = sorted((stamp, session) for session, stamps in times.items() for stamp in stamps)

    def near(self, mtime: int) -> list[str]:
        """The sessions with a request within :data:`CLAIM_WINDOW_NS` of ``mtime``, in the
        order of ``times``."""
        found: set[str] = set()
        for stamp, session in self.stamps[bisect.bisect_left(self.stamps, (mtime - CLAIM_WINDOW_NS, "")):]:
            if stamp > mtime + CLAIM_WINDOW_NS:
                break
            found.add(session)
        return sorted(found, key=self.order.__getitem__)


def _response_session(e: Seen, by_prev: dict[str, set[str]], times: _RequestTimes,
                      transcripts: Transcripts) -> tuple[str | None, str]:
    request_id = names.request_id_of(e.name.removesuffix(".response.json"))
    if request_id is not None and request_id in by_prev:
        sessions = by_prev[request_id]
        return (next(iter(sessions)), "") if len(sessions) == 1 else (None, "ambiguous")
    if not e.call:
        return None, "unclaimed"
    hits = [session for session in times.near(e.mtime) if e.call in transcripts.calls(session)]
    if len(hits) == 1:
        return hits[0], ""
    return None, "ambiguous" if hits else "unclaimed"


def claim(ctx: AdapterContext, state: ProviderPass) -> list[SessionClaim]:
    """Place every file of the pass; return one claim per session with bodies to land now."""
    counters = ctx.counters
    table = state.table
    files = sorted(state.files.values(), key=lambda bf: bf.seen.name)
    counters.sources = len(files)
    for name in [n for n in table.entries if n not in state.files]:
        if table.entries[name].state == LANDED:
            counters.gone += 1  # deleted after it landed, as the spec suggests doing
        table.drop(name)
    transcripts = Transcripts(ctx.root.path, ctx.pass_ctx.would_index, keep=not ctx.dry_run)
    sources = SourceProjects(local_projects(ctx))
    by_prev, times = _request_index(files)
    near = _RequestTimes(times)
    now = ctx.now_ns()
    session_filter = ctx.session_filter
    waiting: Counter[str] = Counter()
    unreadable: Counter[str] = Counter()
    placed: dict[str, list[BodyFile]] = defaultdict(list)
    retired = RetiredBodies.load(ctx.root.path)

    def stuck(e: Seen, counts: Counter[str], why: str) -> None:
        """Count a file that waits or is unreadable under ``why``, or as retired."""
        if retired.holds(e.name, e.size, e.mtime):
            counters.retired += 1
        else:
            counts[why] += 1

    for bf in files:
        e = bf.seen
        if e.state == CONFLICT:
            if retired.holds(e.name, e.size, e.mtime):  # its changed bytes given up; what landed stays
                counters.retired += 1
                continue
            counters.conflicts += 1
            ctx.warn(f"conflict: {bf.path} changed after it landed (landed sha256 {e.sha}…); nothing more "
                     f"lands from it and every pass fails until its landed bytes are put back, or "
                     f"`asz-pipeline bodies --retire FILE` gives up its changed bytes (what landed stays)")
            continue
        if e.state == LANDED:
            continue
        if e.state == UNREADABLE and e.why in _NOT_READ:
            stuck(e, unreadable, e.why)
            continue
        if not e.json:
            young = now - e.mtime < WRITE_GRACE_NS
            e.state, e.why = (WAITING, "partial") if young else (UNREADABLE, "not-json")
            stuck(e, waiting if young else unreadable, e.why)
            continue
        if e.role == names.REQUEST:
            if not e.session:
                if bf.problem:
                    ctx.warn(f"{bf.path}: {bf.problem}")
                e.state = UNREADABLE if e.why == "refused" else WAITING
                stuck(e, unreadable if e.why == "refused" else waiting, e.why or "no-session")
                continue
            session = e.session
        else:
            found_session, why = _response_session(e, by_prev, near, transcripts)
            if found_session is None:
                e.state, e.why, e.session = WAITING, why, ""
                stuck(e, waiting, why)
                continue
            session = e.session = found_session
        directories = transcripts.directories(session)
        unlanded = sources.directories(session) if not directories else []
        if not all(session_filter.admits_slug(d) for d in directories or unlanded):
            e.state, e.why = EXCLUDED, "filter"
            counters.excluded += 1
        elif not directories:
            e.state, e.why = WAITING, "no-directory"
            stuck(e, waiting, e.why)
        else:
            placed[session].append(bf)
    counters.waiting += sum(waiting.values())
    counters.unreadable += sum(unreadable.values())
    for label, counts in (("waiting", waiting), ("unreadable", unreadable)):
        for why, n in sorted(counts.items()):
            ctx.warn(f"{n} body file(s) {label}: {WHY.get(why, why)}")
    if not ctx.dry_run and state.directory.is_dir():
        table.save()
    claims = []
    for session in sorted(placed):
        bodies = sorted(placed[session], key=lambda bf: (bf.seen.mtime, bf.seen.name))
        claims.append(SessionClaim(session, [Found(kind=bf.seen.role, key=bf.seen.name, session=session,
                                                   path=bf.location, payload=bf) for bf in bodies]))
    return claims
