"""The ``jsonl`` adapter: every ``*.jsonl`` under ``source_root`` is one session's transcript.

This is the template for third-party adapters. It shows the whole contract:

* ``asz_adapter_info`` and ``asz_options_schema`` describe the adapter and its options;
* ``asz_discover`` lists sources (cheaply: names and stats only), giving each unit the
  ``directory`` its session belongs to: the host applies ``include``/``exclude`` to it;
* ``asz_claim`` decides which session each belongs to, and lists each claim's sources in
  ``settled_by``: the host then counts a session whose source and cursor stat as the pass that
  settled it left them, without locking or landing it (a pass with nothing new costs a stat
  per file);
* both are generators: the pass lands each claim as it is yielded, so it holds one session at a
  time however many there are (returning lists works too, and holds them all);
* ``asz_land`` hands each source to the host's collector with a dialect, which converts one
  line into one record. Cursors, file cutting, conflicts and crash safety are the host's, and
  what ``ctx`` counts and warns while a session lands is that session's outcome;
* ``asz_new_session`` (optional) names the one source a claim holds when landing it alone is all
  ``asz_land`` would do for a session new to the root: the host then lands such a session in one
  place, the same bytes for less of the Python a small session costs;
* the dialect says whether it reads lines that are not JSON (``reads_non_json``); one that
  does not say is refused on its first line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from asz_core import hookimpl
from asz_core.collect import AppendSource, SourceLine, collect_append
from asz_core.context import AdapterContext
from asz_core.plugin import AdapterInfo, Found, SessionClaim, SettledBy
from asz_core.root.storage import SessionHandle
from asz_core.sessiondata import FROM_RUNTIME, RecordFields, data_part, record

VERSION = "0.1.0"
_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
#: where each file lands in its session, and as what kind (which also names its cursor)
_PLACE = "streams/main"
_KIND = "transcript"


class JsonlDialect:
    """``jsonl/1``: each line's JSON as one data part; the host lands non-JSON lines as unknown.

    A record is made with :func:`~asz_core.sessiondata.record` (the fields it names, empty ones
    left out) and its parts with the part functions (:func:`~asz_core.sessiondata.data_part`,
    ``text_part``, ``call_part``, ``result_part``, ...); the host fills in its place and digest.
    """

    name = "jsonl/1"
    #: a line that is not JSON lands as an unknown part, kept whole, without reaching ``convert``
    #: (a dialect for sources that are not JSON says ``True`` and describes the bytes itself)
    reads_non_json = False

    def convert(self, line: SourceLine) -> RecordFields:
        value = line.value
        time = value.get("time") if isinstance(value, dict) else None
        return record(from_=FROM_RUNTIME, time=time if isinstance(time, str) else None,
                      parts=[data_part(line.data_at())])


@hookimpl
def asz_adapter_info() -> AdapterInfo:
    return AdapterInfo(version=VERSION, runtime="JSONL files", dialects=(JsonlDialect.name,))


@hookimpl
def asz_options_schema() -> dict[str, Any]:
    return {"pattern": {"type": "string", "default": "**/*.jsonl",
                        "description": "glob of the files to land, under source_root"}}


@hookimpl
def asz_discover(ctx: AdapterContext) -> Iterable[Found]:
    if not ctx.source_root:
        ctx.warn("source_root is not set; this adapter has no default directory")
        return []
    root = Path(ctx.source_root)
    ctx.source_dirs.append(str(root))
    return _found(root, ctx.options["pattern"])


def _found(root: Path, pattern: str) -> Iterator[Found]:
    for path in sorted(root.glob(pattern)):
        if path.is_file():
            yield Found(kind="session", key=path.stem, session=path.stem, path=str(path), payload=path,
                        directory=str(path.parent))


@hookimpl
def asz_claim(ctx: AdapterContext, found: Iterable[Found]) -> Iterable[SessionClaim]:
    for item in found:
        if item.session is None or not _SESSION_ID.match(item.session):
            ctx.counters.unreadable += 1
            ctx.warn(f"{item.path}: {item.session!r} cannot be a session id; file not landed")
            continue
        yield SessionClaim(item.session, [item], settled_by=[SettledBy(str(item.payload), _PLACE, _KIND)])


@hookimpl
def asz_new_session(ctx: AdapterContext, claim: SessionClaim) -> AppendSource | None:
    (item,) = claim.found  # one file a session: what asz_land would land into a new one
    return _source(ctx, item.payload)


@hookimpl
def asz_land(ctx: AdapterContext, claim: SessionClaim, session: SessionHandle) -> None:
    for item in claim.found:
        collect_append(ctx, session, _source(ctx, item.payload))


def _source(ctx: AdapterContext, path: Path) -> AppendSource:
    return AppendSource(path=path, src=path.relative_to(ctx.source_root).as_posix(), subdir=_PLACE,
                        kind=_KIND, stream="main", dialect=JsonlDialect())
