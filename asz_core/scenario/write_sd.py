"""A plan landed directly as Session Data under the ``mock/1`` dialect.

It lands the way an adapter lands, so ``asz-pipeline verify`` and any reader take the result
like any other root, and as upstream's ``sd`` writer lands it, so a build lands upstream's bytes
(its complete example of the format pages is such a build):

1. Each stream in turn, main first, then each child: its transcript, then the change records the
   asz plugin would have written for the stream's tools (:func:`~.changes.plugin_lines`, each
   line whole as the one ``data`` part of a record with its ``id``, ``tool`` and ``time``, under
   ``src`` ``<project>/<session>/streams/<stream>.changes``). Then each child's sidecar, then
   each workflow run's journal, manifest and script. So the plugin's file of the main stream is
   the session's second file whenever the main stream has one.
2. An append cursor beside each, counting records: a build through a later checkpoint lands
   only the records past it, so every checkpoint adds files and never rewrites one.
3. Sequences come from the session (the same :class:`~asz_core.root.storage.SessionHandle` the
   adapters land through), and every file is write-once. Every header names the ``mock``
   adapter (:data:`MOCK_ADAPTER`) and dialect; every record's provenance is the mock's
   (:func:`~.records.finish`).
4. The landing clock is the build's base time (``--at``), at every checkpoint: a fixed ``--at``
   lands the same bytes.

5. The provider bodies last, by the installed ``claude-code-provider`` adapter
   (:mod:`.sd_sources`), in the order a ``claude-code`` build's collect lands them.

A ``claude-code`` build's change records are the ``changes`` adapter's instead: one pass lands
every adapter in turn (``claude-code-local``'s files of every stream first), so there the
plugin's file lands after the transcripts and sidecars, as upstream's collect lands it.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from asz_core.root.cursors import ACTIVE, AppendCursor
from asz_core.root.layout import cursor_name
from asz_core.root.storage import SessionHandle, StorageRoot
from asz_core.scenario.changes import plugin_lines
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
from asz_core.sessiondata.model import Header, Part, Record
from asz_core.sessiondata.rawjson import RawJSON
from asz_core.sessiondata.writer import record_line

__all__ = ["MOCK_ADAPTER", "MOCK_DIALECT", "land_records", "mock_header", "write_sd"]

#: upstream's mock adapter, name and version, as its headers name it
MOCK_ADAPTER = "mock/0.2.0"
MOCK_DIALECT = "mock/1"


def write_sd(p: Plan, root: Path) -> list[Path]:
    """Land what the plan holds that the root does not; returns the files landed."""
    clock_ns = p.at * 1_000_000
    storage = StorageRoot(root, pass_started_ns=clock_ns)
    storage.ensure()
    landed: list[Path] = []
    by_stream: dict[str, list[Record]] = {}
    for event in p.written():
        by_stream.setdefault(event.stream, []).append(event_record(p, event))
    with storage.open_session(p.session) as session:
        def land(subdir: str, prefix: str, header: Header, records: list[Record]) -> None:
            if land_records(session, subdir, prefix, header, records, storage.at):
                landed.append(session.landed[-1].path)

        src = f"{p.project}/{p.session}"
        changes = plugin_lines(p)
        live = [s for s in p.streams if not s.lost]
        # a workflow's child is filed under no run, as upstream files it
        for stream in ["main", *(s.id for s in live)]:
            land(f"streams/{stream}", "transcript", mock_header("transcript", f"{src}/streams/{stream}", stream=stream),
                 by_stream.get(stream, []))
            land(f"streams/{stream}", "changes",
                 mock_header("changes", f"{src}/streams/{stream}.changes", stream=stream),
                 [_change_record(line) for line in changes.get(stream, [])])
        for s in live:
            if not s.batch:
                land(f"streams/{s.id}", "meta", mock_header("agent_meta", f"{src}/streams/{s.id}.meta", stream=s.id),
                     [meta_record(s)])
        for r in p.runs:
            run_src = f"{src}/runs/{r.id}"
            land(f"runs/{r.id}", "journal", mock_header("journal", f"{run_src}/journal", batch=r.id),
                 [journal_record(r, kind, child) for kind, child, _at in r.journal])
            land(f"runs/{r.id}", "manifest", mock_header("workflow_manifest", f"{run_src}/manifest", batch=r.id),
                 [manifest_record(r)])
            land(f"runs/{r.id}", "script", mock_header("workflow_script", f"{run_src}/script", batch=r.id),
                 [script_record(r)])
    # the provider adapter's pass keeps the plan's last record as its clock: it judges a body by
    # when it was written, and a body written after the pass began would wait
    problems = land_sources(p, root, (p.at + p.span_ms()) * 1_000_000)
    if problems:
        raise ScenarioError(f"the provider bodies did not land: {'; '.join(problems)}")
    return landed


def _change_record(line: bytes) -> Record:
    """One plugin line as the mock lands it: the line whole as a ``data`` part, its ``id``,
    ``tool`` and ``time`` on the record."""
    fields = orjson.loads(line)
    return Record(id=fields["id"], tool=fields.get("tool"), time=fields["time"],
                  parts=[Part.data_part(RawJSON(line))])


def mock_header(kind: str, src: str, *, stream: str | None = None, batch: str | None = None) -> Header:
    """The header the mock adapter lands a file under (upstream's sd build's)."""
    return Header(kind=kind, session="", src=src, dialect=MOCK_DIALECT, adapter=MOCK_ADAPTER,
                  stream=stream, batch=batch)


def land_records(session: SessionHandle, subdir: str, prefix: str, header: Header, records: list[Record],
          at: str) -> bool:
    """Land the records past the cursor (``<prefix>`` in ``subdir``) in one file and move the
    cursor, as an adapter lands; ``False`` if none."""
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
            landing.write(*record_line(record))
        landed = session.commit(landing)
    except BaseException:
        landing.abort()
        raise
    session.sync()
    cursor.ord, cursor.offset, cursor.last_seq = len(records), off, landed.seq
    cursor.state, cursor.updated_at = ACTIVE, at
    cursor.save(cursor_path)
    return True
