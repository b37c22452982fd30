"""The ``asz.view`` document of one session, built from its landed files only.

::

    {"format": "asz.view", "version": "1.0",
     "session": {"id", "label", "first_time", "last_time", "hide"},
     "files":   [{"path", "kind", "seq", "stream", "batch", "lines", "bytes", "digest",
                  "from_time", "through_time", "skeleton", "problem"}],
     "streams": [{"id", "role", "label", "parent", "parent_call", "batch", "records", "repeats",
                  "gap", "calls": [...], "steps": [...]}],
     "summary": {"files", "records", "streams", "calls", "synthetic_calls", "tool_calls",
                 "tool_results", "provider_bodies", "requests", "responses",
                 "captured_prompts", "captured_responses", "problems"}}

Keys are snake_case; a key with nothing to say is left out, never ``null``. Paths are relative
to the storage root, so a root copied elsewhere gives the same document, and nothing outside the
root is read. Each file is read once, one record at a time (:mod:`asz_core.view.files`); the
document holds the structure and clipped text, never a whole file and never a provider body
(calls name their bodies by ``{seq, row}``; :class:`~asz_core.view.session.Session` loads one).

A stream is ``main`` or a child (the root files each child flat under ``streams/<id>``). Its
``label`` is the one its latest labelled record carries; its ``parent`` is the stream whose call
started it (a tool call a record names the child for), else the stream of any record naming it
as ``child``, else the ``started_by`` its own records name. ``calls`` are described in
:mod:`asz_core.view.calls`, their ``provider_bodies`` in :mod:`asz_core.view.joins`, ``steps``
(one per record, repeats left out) in :mod:`asz_core.view.steps`, and what ``hide`` withholds
in :mod:`asz_core.view.hide`. A file that does not read to a good closing line says why in
``problem``, and its stream joins no provider body, as a stream with a gap does.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from asz_core.sessiondata.model import Part, Record
from asz_core.view.bodies import BodyList
from asz_core.view.calls import Call, StreamCalls
from asz_core.view.chains import LineChain
from asz_core.view.files import PROVIDER_BODY, LandedFile, session_files
from asz_core.view.hide import check_hide, withhold
from asz_core.view.joins import REQUEST, RESPONSE, CallSlot, join_bodies
from asz_core.view.steps import display, step_of

__all__ = ["FORMAT", "MAIN", "VERSION", "build_document"]

FORMAT: Final = "asz.view"
VERSION: Final = "1.0"
MAIN: Final = "main"


@dataclass
class _Stream:
    id: str
    order: int
    calls: StreamCalls
    chains: dict[str, LineChain] = field(default_factory=dict)
    steps: list[dict[str, Any]] = field(default_factory=list)
    records: int = 0
    label: str | None = None
    started_by: str | None = None
    damaged: bool = False

    @property
    def repeats(self) -> int:
        return sum(c.repeats for c in self.chains.values())

    @property
    def gap(self) -> bool:
        return self.damaged or any(c.gap for c in self.chains.values())


class _Builder:
    def __init__(self, session_dir: Path, hide: tuple[str, ...], steps: bool) -> None:
        self.session_dir = session_dir
        self.hide = hide
        self.with_steps = steps
        self.files = session_files(session_dir)
        self.streams: dict[str, _Stream] = {}
        self.bodies = BodyList()
        self.named_in: dict[str, str] = {}  # child stream -> first stream naming it
        self.run_of: dict[str, str] = {}    # child stream -> the run (batch) whose records name it
        self.first: tuple[int, str] | None = None
        self.last: tuple[int, str] | None = None

    # ---- reading -------------------------------------------------------------------------

    def read(self) -> None:
        for landed in self.files:
            if landed.group == PROVIDER_BODY:
                self._read_body_file(landed)
            elif landed.group == "streams" and landed.owner is not None:
                self._read_stream_file(landed, landed.owner)
            else:
                self._read_run_file(landed)
            self._span(landed)

    def _stream(self, stream_id: str) -> _Stream:
        stream = self.streams.get(stream_id)
        if stream is None:
            stream = self.streams[stream_id] = _Stream(stream_id, len(self.streams), StreamCalls(stream_id))
        return stream

    def _read_stream_file(self, landed: LandedFile, stream_id: str) -> None:
        stream = self._stream(stream_id)
        chain = stream.chains.setdefault(landed.kind, LineChain())
        for row, record in landed.records():
            if not chain.feed(row, record):
                continue
            stream.records += 1
            if record.label is not None:
                stream.label = record.label
            if record.started_by is not None and record.child in (None, stream_id):
                stream.started_by = record.started_by
            if record.child is not None and record.child != stream_id:
                self.named_in.setdefault(record.child, stream_id)
            hidden = any(flag in self.hide for flag in record.flags)
            stream.calls.add(landed.seq, row, _without_content(record) if hidden else record)
            if self.with_steps:
                stream.steps.append(withhold(step_of(landed.seq, row, record), self.hide))
        if landed.problem is not None:
            stream.damaged = True

    def _read_body_file(self, landed: LandedFile) -> None:
        # A body is listed only from a file that reads to a good closing line: a reader
        # rebuilding it takes in the whole file first, and refuses one that does not.
        held = BodyList()
        for row, record in landed.records():
            held.add(landed.seq, row, record)
        if landed.problem is None:
            self.bodies.take(held)
        else:
            self.bodies.unreadable += landed.lines

    def _read_run_file(self, landed: LandedFile) -> None:
        for _, record in landed.records():
            run = record.batch or landed.batch or landed.owner
            if record.child is not None and run is not None:
                self.run_of.setdefault(record.child, run)

    def _span(self, landed: LandedFile) -> None:
        if landed.group == PROVIDER_BODY:
            return  # a body's time is when its file was written, not when the session ran
        first, last = landed.first_time, landed.last_time
        if first is not None and (self.first is None or first[0] < self.first[0]):
            self.first = first
        if last is not None and (self.last is None or last[0] > self.last[0]):
            self.last = last

    # ---- joining -------------------------------------------------------------------------

    def ordered_streams(self) -> list[_Stream]:
        return sorted(self.streams.values(), key=lambda s: (s.id != MAIN, s.order))

    def join(self) -> None:
        if self.hide:
            return
        slots: list[CallSlot] = []
        calls: dict[Hashable, Call] = {}
        for stream in self.ordered_streams():
            for call in stream.calls.calls.values():
                slot_key: Hashable = (stream.id, call.id)
                calls[slot_key] = call
                slots.append(CallSlot(key=slot_key, stream=stream.id, message=call.id, prompt=call.run,
                                      synthetic=call.synthetic, gap=stream.gap))
        for key, joined in join_bodies(slots, self.bodies.bodies).items():
            calls[key].provider_bodies = [b.to_json() for b in joined]

    # ---- the document --------------------------------------------------------------------

    def document(self) -> dict[str, Any]:
        self.read()
        self.join()
        streams = self.ordered_streams()
        session: dict[str, Any] = {"id": self.session_dir.name}
        main = self.streams.get(MAIN)
        if main is not None and main.label is not None:
            session["label"] = display(main.label)
        if self.first is not None and self.last is not None:
            session["first_time"], session["last_time"] = self.first[1], self.last[1]
        if self.hide:
            session["hide"] = list(self.hide)
        return {"format": FORMAT, "version": VERSION, "session": session,
                "files": [f.to_json() for f in self.files],
                "streams": [self._stream_json(s) for s in streams],
                "summary": self._summary(streams)}

    def _parent(self, stream: _Stream) -> tuple[str | None, str | None]:
        for other in self.ordered_streams():
            if other is stream:
                continue
            for call in other.calls.calls.values():
                if stream.id in call.children:
                    return other.id, call.id
        return self.named_in.get(stream.id) or stream.started_by, None

    def _stream_json(self, stream: _Stream) -> dict[str, Any]:
        out: dict[str, Any] = {"id": stream.id, "role": MAIN if stream.id == MAIN else "child"}
        if stream.label is not None:
            out["label"] = display(stream.label)
        if stream.id != MAIN:
            parent, parent_call = self._parent(stream)
            if parent is not None:
                out["parent"] = parent
            if parent_call is not None:
                out["parent_call"] = parent_call
            batch = self.run_of.get(stream.id)
            if batch is not None:
                out["batch"] = batch
        out["records"] = stream.records
        if stream.repeats:
            out["repeats"] = stream.repeats
        if stream.gap:
            out["gap"] = True
        out["calls"] = [c.to_json() for c in stream.calls.calls.values()]
        if self.with_steps:
            out["steps"] = stream.steps
        return out

    def _summary(self, streams: list[_Stream]) -> dict[str, Any]:
        calls = [c for s in streams for c in s.calls.calls.values()]

        def listing(role: str) -> int:
            return sum(1 for c in calls if any(b["role"] == role for b in c.provider_bodies))

        return {
            "files": len(self.files),
            "records": sum(f.lines for f in self.files),
            "streams": len(streams),
            "calls": len(calls),
            "synthetic_calls": sum(1 for c in calls if c.synthetic),
            "tool_calls": sum(len(c.tool_calls) for c in calls),
            "tool_results": sum(s.calls.results for s in streams),
            "provider_bodies": self.bodies.count(),
            "requests": self.bodies.requests,
            "responses": self.bodies.responses,
            "captured_prompts": listing(REQUEST),
            "captured_responses": listing(RESPONSE),
            "problems": sum(1 for f in self.files if f.problem is not None),
        }


def _without_content(record: Record) -> Record:
    """A withheld record as the calls see it: its parts' kinds and sizes, nothing they hold."""
    parts = [Part(k=p.k, state="omitted", bytes=p.bytes) for p in record.parts]
    return Record(ord=record.ord, off=record.off, sha=record.sha, bytes=record.bytes, id=record.id,
                  parent=record.parent, call=record.call, run=record.run, child=record.child,
                  tool=record.tool, from_=record.from_, time=record.time, flags=record.flags,
                  usage=record.usage, model=record.model, parts=parts)


def build_document(session_dir: Path, *, hide: Iterable[str] = (), steps: bool = True) -> dict[str, Any]:
    """The ``asz.view`` document of the session stored in ``session_dir``.

    ``hide`` names the flags whose steps are withheld (``view.hide``); ``steps=False`` leaves the
    steps out (the listing of sessions needs only the counts). ``ValueError`` for a flag that
    cannot be hidden.
    """
    return _Builder(session_dir, check_hide(hide), steps).document()
