"""Small sessions built with the core writer, for the view's rule tests.

A test describes each stream as a list of records (made with :func:`prompt`, :func:`reply`,
:func:`result`, :func:`note`) and the provider bodies as :class:`Body` values; :func:`land`
numbers the records as a collector would (``ord`` 1, 2, 3, each ``off`` after the one before)
and lands one transcript file per stream, then one ``provider_body`` file through the core
:class:`~asz_core.providerbody.BodyLander`, so every body rebuilds as a real one does.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asz_core.assembly.parse import parse_session
from asz_core.providerbody import BodyInfo, BodyLander, BodyStore, CutRules
from asz_core.root.storage import StorageRoot
from asz_core.sessiondata import (
    FROM_AGENT,
    FROM_EXTERNAL,
    FROM_RUNTIME,
    Header,
    Part,
    Record,
    Usage,
    raw_json_of,
)
from asz_core.sessiondata.writer import record_line
from asz_core.view.walk import walk

SESSION = "0f0f0f0f-1111-4222-8333-444444444444"
CLOCK_NS = 1_800_000_000 * 10**9
LINE = 40  #: every constructed record stands for a source line of this many bytes


def prompt(run: str | None, text: str = "do it", **fields: object) -> Record:
    fields.setdefault("flags", ["external_input"])
    return Record(from_=FROM_EXTERNAL, run=run, time="2026-09-01T10:00:00Z", parts=[Part.text_part(text)],
                  **fields)  # type: ignore[arg-type]


def reply(call: str, *, tools: tuple[str, ...] = (), text: str | None = "ok", model: str = "model-1",
          finished: bool = True, usage: Usage | None = None, time: str = "2026-09-01T10:00:01Z") -> Record:
    parts = [Part.text_part(text)] if text is not None else []
    parts += [Part.call(tool, "Run", raw_json_of({"n": i})) for i, tool in enumerate(tools)]
    flags = (["finished"] if finished else []) + (["synthetic"] if model == "<synthetic>" else [])
    return Record(from_=FROM_AGENT, call=call, model=model, time=time, usage=usage, flags=flags, parts=parts)


def result(of: str, run: str | None = None, *, child: str | None = None, text: str = "done") -> Record:
    return Record(from_=FROM_EXTERNAL, run=run, child=child, time="2026-09-01T10:00:02Z",
                  parts=[Part.result(of, text=text)])


def note(text: str, flags: list[str], *, label: str | None = None) -> Record:
    return Record(from_=FROM_RUNTIME, label=label, flags=flags, parts=[Part.text_part(text)])


@dataclass
class Body:
    """One provider body to land: ``role`` ``request`` (naming ``run`` and ``previous``) or
    ``response`` (naming ``call``, under the file name ``<request_id>.response.json``)."""

    role: str
    name: str                         #: the body file's name without ``.json``'s role suffix
    run: str | None = None
    previous: str | None = None
    call: str | None = None
    extra: dict[str, object] = field(default_factory=dict)

    def bytes(self) -> bytes:
        value: dict[str, object] = {"role": self.role, "name": self.name, **self.extra}
        if self.role == "request":
            value["system"] = f"prompt={self.run};prev={self.previous};"
            value["messages"] = [{"role": "user", "content": "x" * 1500}]
        else:
            value["id"] = self.call
        return json.dumps(value).encode()

    def info(self) -> BodyInfo:
        record_id = f"{self.name}.{self.role}"
        # a response's file is named after the provider's id for the request it answers
        return BodyInfo(record_id=record_id, role=self.role, src=f"{record_id}.json", session=SESSION,
                        run=self.run, previous_request=self.previous, call=self.call,
                        request=self.name if self.role == "response" else None)


def request(name: str, run: str | None, previous: str | None = None, *, call: str | None = None) -> Body:
    return Body("request", name, run=run, previous=previous, call=call)


def response(request_id: str, call: str) -> Body:
    return Body("response", request_id, call=call)


def _number(records: list[Record], ords: list[int] | None, stream: str) -> None:
    """Number the records as a collector would, and chain them as a transcript does: each names
    the one before it as its parent, so a reply sits in the run its prompt opened."""
    off = 0
    previous: str | None = None
    for n, record in enumerate(records):
        if record.id is None:
            record.id = f"{stream}-{n + 1}"
        if record.parent is None and previous is not None:
            record.parent = previous
        previous = record.id
        record.ord = ords[n] if ords is not None else n + 1
        record.off = off if ords is None else (record.ord - 1) * (LINE + 1)
        record.bytes = LINE
        record.sha = hashlib.sha256(f"{record.ord}".encode()).hexdigest()[:12]
        off += LINE + 1


def land(root: Path, streams: dict[str, list[Record]], bodies: Sequence[Body] = (),
         *, session: str = SESSION, ords: dict[str, list[int]] | None = None) -> Path:
    """Land ``streams`` (one transcript file each, in order) and ``bodies`` (one provider file)."""
    store = StorageRoot(root, pass_started_ns=CLOCK_NS)
    with store.open_session(session) as handle:
        for stream, records in streams.items():
            _number(records, (ords or {}).get(stream), stream)
            landing = handle.begin(f"streams/{stream}", Header(
                kind="transcript", session=session, src=f"proj/{session}/{stream}.jsonl",
                dialect="test/1", adapter="test/0", stream=stream))
            for record in records:
                landing.write(*record_line(record))
            handle.commit(landing)
        if bodies:
            def header() -> Header:
                return Header(kind="provider_body", session=session, src=".", dialect="test-provider/1",
                              adapter="test/0")
            lander = BodyLander(handle, BodyStore(), header, 2_000_000, CutRules())
            for body in bodies:
                lander.add(body.bytes(), body.info())
            lander.finish()
    return root / session


def view_of(root: Path, *, session: str = SESSION, hide: Iterable[str] = ()) -> dict[str, Any]:
    """The session's ``asz.view`` document, after a parse of what landed."""
    from asz_core.view import build_view

    parsed = parse_session(root, session)
    assert not parsed.outcome, parsed.message
    return build_view(root, session, hide=hide)


def calls_of(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each model call of the document by its call id (its node id less ``call/``)."""
    return {n["id"].removeprefix("call/"): n for n in walk(doc) if n["kind"] == "llm.call"}


def change_record(tool: str, captured_by: str, time: str, path: str = "a.txt") -> dict[str, Any]:
    """A ``changes/1`` record naming the tool call ``tool``, with one file changed."""
    return {"schema": "changes/1", "id": tool, "captured_by": captured_by, "session": SESSION, "stream": "main",
            "tool": tool, "time": time, "basis": "tool_window" if captured_by == "asz-plugin" else "runtime_reported",
            "changed_files": 1, "changes": [{"path": path, "operation": "modify", "diff": "available"}]}


def land_changes(root: Path, records: Sequence[dict[str, Any]], *, session: str = SESSION,
                 kind: str = "changes") -> None:
    """Land one ``changes`` (or ``execution``) file on the main stream, one record per line, as the
    plugin's adapter does."""
    store = StorageRoot(root, pass_started_ns=CLOCK_NS)
    with store.open_session(session) as handle:
        landing = handle.begin("streams/main", Header(kind=kind, session=session, src=f"{kind}/{session}.jsonl",
                                                      dialect="test/1", adapter="test/0", stream="main"))
        for n, value in enumerate(records, start=1):
            data = raw_json_of(value)
            landing.write(*record_line(Record(ord=n, off=(n - 1) * (LINE + 1), bytes=LINE, sha=f"{n:012d}",
                                              from_=FROM_RUNTIME, time=value["time"], parts=[Part.data_part(data)])))
        handle.commit(landing)
