"""A plan landed directly as Session Data under the ``mock/1`` dialect.

It lands the way an adapter lands, so ``asz-pipeline verify`` and any reader take the result
like any other root:

1. One file per stream per build (main first, then each child), then each child's sidecar,
   then each workflow run's journal, manifest and script.
2. An append cursor beside each, counting records: a build through a later checkpoint lands
   only the records past it, so every checkpoint adds files and never rewrites one.
3. Sequences come from the session (the same :class:`~asz_core.root.storage.SessionHandle` the
   adapters land through), and every file is write-once.
4. The landing clock is the plan's last record, so a fixed ``--at`` lands the same bytes.

5. The plugin's change records and the provider bodies last, by the installed
   ``changes`` and ``claude-code-provider`` adapters (:mod:`.sd_sources`): each is
   landed by the one code that lands it, in the order a ``claude-code`` build's collect lands them.
"""

from __future__ import annotations

from pathlib import Path

from asz_core.root.cursors import ACTIVE, AppendCursor
from asz_core.root.layout import cursor_name
from asz_core.root.storage import SessionHandle, StorageRoot
from asz_core.scenario.model import ScenarioError
from asz_core.scenario.plan import Plan
from asz_core.scenario.records import (
    event_record,
    finish,
    journal_record,
    manifest_record,
    meta_record,
    script_record,
)
from asz_core.scenario.sd_sources import land_sources
from asz_core.sessiondata.model import Header, Record

__all__ = ["MOCK_ADAPTER", "MOCK_DIALECT", "write_sd"]

MOCK_ADAPTER = "mock/1"
MOCK_DIALECT = "mock/1"


def write_sd(p: Plan, root: Path) -> list[Path]:
    """Land what the plan holds that the root does not; returns the files landed."""
    clock_ns = (p.at + p.span_ms()) * 1_000_000
    storage = StorageRoot(root, pass_started_ns=clock_ns)
    storage.ensure()
    landed: list[Path] = []
    by_stream: dict[str, list[Record]] = {}
    for event in p.written():
        by_stream.setdefault(event.stream, []).append(event_record(p, event))
    with storage.open_session(p.session) as session:
        def land(subdir: str, prefix: str, header: Header, records: list[Record]) -> None:
            if _land(session, subdir, prefix, header, records, storage.at):
                landed.append(session.landed[-1].path)

        src = f"{p.project}/{p.session}"
        land("streams/main", "transcript", _header("transcript", f"{src}/streams/main", stream="main"),
             by_stream.get("main", []))
        live = [s for s in p.streams if not s.lost]
        for s in live:
            land(f"streams/{s.id}", "transcript",
                 # a workflow's child is filed under no run, as upstream files it
                 _header("transcript", f"{src}/streams/{s.id}", stream=s.id),
                 by_stream.get(s.id, []))
        for s in live:
            if not s.batch:
                land(f"streams/{s.id}", "meta", _header("agent_meta", f"{src}/streams/{s.id}.meta", stream=s.id),
                     [meta_record(s)])
        for r in p.runs:
            run_src = f"{src}/runs/{r.id}"
            land(f"runs/{r.id}", "journal", _header("journal", f"{run_src}/journal", batch=r.id),
                 [journal_record(r, kind, child) for kind, child, _at in r.journal])
            land(f"runs/{r.id}", "manifest", _header("workflow_manifest", f"{run_src}/manifest", batch=r.id),
                 [manifest_record(r)])
            land(f"runs/{r.id}", "script", _header("workflow_script", f"{run_src}/script", batch=r.id),
                 [script_record(r)])
    problems = land_sources(p, root, clock_ns)
    if problems:
        raise ScenarioError(f"the change records or provider bodies did not land: {'; '.join(problems)}")
    return landed


def _header(kind: str, src: str, *, stream: str | None = None, batch: str | None = None) -> Header:
    return Header(kind=kind, session="", src=src, dialect=MOCK_DIALECT, adapter=MOCK_ADAPTER,
                  stream=stream, batch=batch)


def _land(session: SessionHandle, subdir: str, prefix: str, header: Header, records: list[Record],
          at: str) -> bool:
    """Land the records past the cursor in one file and move the cursor; ``False`` if none."""
    cursor_path = session.path(subdir, cursor_name(prefix))
    cursor = AppendCursor.load(cursor_path) or AppendCursor(source=header.src)
    fresh = records[cursor.ord:]
    if not fresh:
        return False
    off = cursor.offset
    for number, record in enumerate(fresh, start=cursor.ord + 1):
        off = finish(record, number, off)
    landing = session.begin(subdir, header)
    try:
        for record in fresh:
            landing.write(record)
        landed = session.commit(landing)
    except BaseException:
        landing.abort()
        raise
    session.sync()
    cursor.ord, cursor.offset, cursor.last_seq = len(records), off, landed.seq
    cursor.state, cursor.updated_at = ACTIVE, at
    cursor.save(cursor_path)
    return True
