"""The ``claude-code/1`` dialect: one line of a Claude Code source → one Session Data record,
mapped as upstream maps it.

One dialect instance reads one source, made with what the source's path says
(:class:`~.source_facts.SourceFacts`); each line is converted by itself. The collector sets
``ord``, ``off``, ``sha`` and ``bytes``. The path a line takes:

1. a workflow script (a program, not data) → ``from: runtime`` and one unknown part holding its
   bytes, ``the source is a program, not data``; nothing else;
2. a workflow manifest → ``from: runtime``, ``label`` = ``workflowName`` and ``batch`` =
   ``runId`` (else the run) when its fields read, and one data part holding it whole;
3. a line whose fields do not read as upstream's record (:mod:`.shape`: not JSON, a JSON value
   that is not an object or ``null``, or a field of another type) → ``from: runtime``, one
   unknown part with its bytes, ``the record is not valid JSON``, and the flags its bytes may
   call for (:func:`~.flags.damaged_flags`);
4. every other line (a transcript's, a sidecar's, a journal's):

   * ``id`` = ``uuid``, ``parent`` = ``parentUuid``, ``call`` = ``message.id``, ``run`` =
     ``promptId``, ``model`` = ``message.model``, ``continues`` = ``logicalParentUuid``,
     ``time`` = ``timestamp`` (as written), ``started_by`` = ``parentAgentId``, ``label`` =
     the first non-empty of ``aiTitle``, ``description``, ``workflowName`` — on any line type;
   * ``trigger`` and ``flags`` by :mod:`.flags`; ``tool``, ``child``, ``batch`` by :mod:`.links`;
   * ``from``: ``runtime`` for every line of a sidecar or a journal; else by ``type``:
     ``assistant`` → ``agent``, ``user`` → ``external``, anything else → ``runtime``;
   * ``usage`` whenever ``message.usage`` is an object: ``input_tokens`` → ``in``,
     ``output_tokens`` → ``out``, ``cache_read_input_tokens`` → ``cache_read``,
     ``cache_creation_input_tokens`` → ``cache_write``, each zero left out;
   * parts and ``dropped`` by :mod:`.content`, then the ``changes/1`` part of an edit
     (:mod:`.changes`) when the ``toolUseResult`` read whole;
   * a record with no part still gets one: a data part holding the whole line (a system line,
     progress, a snapshot, a title, a sidecar, a journal line, an empty block list).

An empty string read from a field is no value: the record leaves that field out.

Most lines of a transcript (progress, snapshots, titles) hold none of the fields that rule 4's
rules past the ids read (``message``, ``toolUseResult``, ``attachment``, ``origin``,
``promptSource``, ``isMeta``, ``isCompactSummary``) and are no ``attachment``: such a line gets
its ids, ``from`` and ``batch``, a ``system`` line's flag and the whole-line part, with no other
rule asked, since none would find anything.

What a line's keys decide is worked out once for each order of keys met (:class:`_Plan`; a
transcript repeats a few dozen): how its fields are judged (:mod:`.shape`), whether it holds
anything past its ids, and where each string field the record takes lies among the string
values the typed check fetches. A line is then judged and its record's strings read by two
getters, whatever its order of keys.

A dialect instance also keeps, for the session's derived index, the ``message.id`` of each
``assistant`` line it converts, by line number; the lines of a large source converted in parts
(:mod:`asz_core.collect.split`) keep them in parts, joined in line order.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter
from typing import Any, Final

from asz_adapters.claude_code_local.about import DIALECT
from asz_adapters.claude_code_local.changes import LastAfter, changes_part
from asz_adapters.claude_code_local.content import attachment_part, content_parts
from asz_adapters.claude_code_local.flags import damaged_flags, flags_of, subtype_flags, trigger_of
from asz_adapters.claude_code_local.links import links_of
from asz_adapters.claude_code_local.shape import RECORD, TOOL_RESULT, Fields, Layout, read, remembered, strings_typed
from asz_adapters.claude_code_local.source_facts import AGENT_META, JOURNAL, MANIFEST, SCRIPT, SourceFacts
from asz_core.collect import NOT_JSON, SourceLine
from asz_core.sessiondata import (
    FROM_AGENT,
    FROM_EXTERNAL,
    FROM_RUNTIME,
    RawJSON,
    data_part,
    dropped_entry,
    record,
    token_usage,
)
from asz_core.sessiondata.fields import DroppedFields, PartFields, RecordFields

__all__ = ["DIALECT", "SCRIPT_REASON", "ClaudeCodeDialect"]

SCRIPT_REASON: Final = "the source is a program, not data"
_FROM: Final[dict[str | None, str]] = {"assistant": FROM_AGENT, "user": FROM_EXTERNAL}
#: the fields whose presence sends a line past the ids: its content, a tool result, what
#: started it, what the flags of a meta line or a summary read
_READ_FURTHER: Final = frozenset({"message", "toolUseResult", "attachment", "origin", "promptSource",
                                  "isMeta", "isCompactSummary"})
#: the string fields of a line the record takes, in the order :attr:`_Plan.taken` gives them
_TAKEN: Final = ("type", "uuid", "parentUuid", "promptId", "logicalParentUuid", "aiTitle", "description",
                 "workflowName", "parentAgentId", "timestamp", "subtype")
_Taken = tuple[str | None, str | None, str | None, str | None, str | None, str | None, str | None, str | None,
               str | None, str | None, str | None]
#: the string fields most lines leave out (progress, assistant and user lines alike), which a
#: record needs asked only when its line's keys name one (:attr:`_Plan.bare`): each field passed
#: to :func:`~asz_core.sessiondata.fields.record` costs its call a keyword
_BARE_ABSENT: Final = frozenset({"promptId", "logicalParentUuid", "aiTitle", "description", "workflowName",
                                 "parentAgentId", "subtype"})
#: what stands for a string field no key names, after the fetched strings
_NONE: Final = (None,)


class _Plan:
    """What one order of a line's keys decides, worked out once (see the module's notes). A
    plain class, only built and read by name (docs/architecture.md, "Classes a pass imports"):
    compiled, its fields are read natively, where a named tuple's are looked up by name."""

    __slots__ = ("bare", "ids_only", "layout", "taken")

    def __init__(self, layout: Layout, taken: itemgetter[Any], ids_only: bool, bare: bool) -> None:
        #: how the line's fields are judged (:meth:`~.shape.Shape.layout`)
        self.layout = layout
        #: the :data:`_TAKEN` fields' values out of the string values ``layout.strings`` fetched
        #: with :data:`_NONE` after them (a field no key names takes that ``None``)
        self.taken = taken
        #: no key names a field past the ids (:data:`_READ_FURTHER`)
        self.ids_only = ids_only
        #: no key names a field of :data:`_BARE_ABSENT`: the record's ids are ``uuid``,
        #: ``parentUuid`` and ``timestamp`` alone, and it is made with only the fields that can fill
        self.bare = bare


def _plan(keys: tuple[str, ...]) -> _Plan:
    """The plan of a line with ``keys``, remembered for the next line with them."""
    layout = RECORD.layout(keys)
    names = layout.names
    plan = _Plan(layout, itemgetter(*(names.index(name) if name in names else len(names) for name in _TAKEN)),
                 _READ_FURTHER.isdisjoint(keys), _BARE_ABSENT.isdisjoint(keys))
    if remembered(keys, len(_PLANS)):
        _PLANS[keys] = plan
    return plan


#: each order of a line's keys met so far, and its plan
_PLANS: Final[dict[tuple[str, ...], _Plan]] = {}


class ClaudeCodeDialect:
    """``claude-code/1`` for one source of a session (see the module's rules)."""

    name = DIALECT
    #: a line that is not JSON is still named for what its bytes may carry (rule 3)
    reads_non_json = True

    def __init__(self, source: SourceFacts) -> None:
        self.source = source
        self._runtime = source.written_by_runtime
        #: a sidecar's or a journal's lines name their agent whatever they hold (:mod:`.links`)
        self._linked = source.kind in (AGENT_META, JOURNAL)
        #: ``(line number, message.id)`` of each assistant line converted
        self.calls: list[tuple[int, str]] = []
        #: by ``from``, the record of a bare line with an id, a parent and a time
        #: (:meth:`_bare_record`)
        self._bare_records: dict[str, RecordFields] = {}
        #: by ``from``, the record of a model's call (:meth:`_call_record`)
        self._call_records: dict[str, RecordFields] = {}
        #: the after side of this source's last edit (:mod:`.changes`)
        self._last_after = LastAfter()

    def split(self) -> ClaudeCodeDialect:
        """A dialect for some of this source's lines, converted in another process
        (:class:`~asz_core.collect.split.SplitDialect`): the same source, no lines yet."""
        return ClaudeCodeDialect(self.source)

    def join(self, part: ClaudeCodeDialect) -> None:
        """Keep the calls of ``part``'s lines, which follow this one's."""
        self.calls += part.calls

    def __reduce__(self) -> tuple[Callable[..., ClaudeCodeDialect], tuple[SourceFacts, list[tuple[int, str]]]]:
        # A part is pickled to be sent back and joined, which reads its calls alone.
        # Compiled by mypyc, the class keeps no __dict__ for pickle to restore, and is made only
        # through __init__; so it pickles as what joining it needs.
        return _part_sent_back, (self.source, self.calls)

    def convert(self, line: SourceLine) -> RecordFields:
        source_kind = self.source.kind
        if source_kind == SCRIPT:
            return record(from_=FROM_RUNTIME, parts=[line.unknown_part(SCRIPT_REASON)])
        if source_kind == MANIFEST:
            return self._manifest(line)
        value = line.value
        if type(value) is dict:  # most lines: judged by their plan
            keys = tuple(value)
            plan = _PLANS.get(keys) or _plan(keys)
            layout = plan.layout
            getter = layout.strings
            strings: tuple[Any, ...] = getter(value) if getter is not None else ()
            if strings_typed(strings) and (layout.only_strings or RECORD.plain_past_strings(layout, value)):
                taken: _Taken = plan.taken(strings + _NONE)
                if plan.ids_only and not self._linked and taken[0] != "attachment":
                    return self._ids_only(line, taken, plan.bare)
                return self._record(line, Fields(value, None, True), taken, plan.bare)
        fields = read(value, RECORD) if line.is_json else None
        if fields is None or not fields.typed:
            return record(from_=FROM_RUNTIME, flags=damaged_flags(line.raw),
                          parts=[line.unknown_part(NOT_JSON)])
        get = fields.values.get
        return self._record(line, fields, (
            get("type"), get("uuid"), get("parentUuid"), get("promptId"), get("logicalParentUuid"), get("aiTitle"),
            get("description"), get("workflowName"), get("parentAgentId"), get("timestamp"), get("subtype")), False)

    def _manifest(self, line: SourceLine) -> RecordFields:
        if not line.is_json:  # upstream's writer refuses it; here its bytes are kept
            return record(from_=FROM_RUNTIME, parts=[line.unknown_part(NOT_JSON)])
        fields = read(line.value, RECORD)
        if fields is None or not fields.typed:
            return record(from_=FROM_RUNTIME, parts=[_whole(line)])
        return record(batch=fields.text("runId") or self.source.run, label=fields.text("workflowName"),
                      from_=FROM_RUNTIME, parts=[_whole(line)])

    def _ids_only(self, line: SourceLine, taken: _Taken, bare: bool) -> RecordFields:
        """A plain transcript line holding none of the fields past the ids (:data:`_READ_FURTHER`),
        not an attachment: what every rule gives it, without asking the rules that find nothing
        (over half the lines: progress, snapshots, titles). ``bare``: see :attr:`_Plan.bare`."""
        kind, uuid, parent, run, continues, title, description, workflow, agent, time, subtype = taken
        from_ = FROM_RUNTIME if self._runtime else _FROM.get(kind, FROM_RUNTIME)
        if bare and kind != "system":  # its ids, its time and the whole line: most lines
            if uuid and parent and time:
                out = (self._bare_records.get(from_) or self._bare_record(from_)).copy()
                out["id"], out["parent"], out["time"], out["parts"] = uuid, parent, time, [_whole(line)]
                return out
            return record(id=uuid, parent=parent, batch=self.source.run, from_=from_, time=time, parts=[_whole(line)])
        return record(
            id=uuid, parent=parent, run=run, continues=continues, batch=self.source.run,
            label=title or description or workflow, started_by=agent, from_=from_, time=time,
            flags=subtype_flags(kind, subtype), parts=[_whole(line)])

    def _bare_record(self, from_: str) -> RecordFields:
        """The record of a bare line (:attr:`_Plan.bare`, not a ``system`` line) from ``from_``
        whose id, parent and time are all given, made once by :func:`record` with stand-ins
        for them and its part: each such line's record is a copy with its own put in place,
        which keeps the keys in :func:`record`'s order, since each is there already."""
        made = self._bare_records[from_] = record(id="-", parent="-", batch=self.source.run, from_=from_, time="-",
                                          parts=[data_part(None)])
        return made

    def _record(self, line: SourceLine, fields: Fields, taken: _Taken, bare: bool) -> RecordFields:
        """A line past its ids, read typed; ``taken`` its :data:`_TAKEN` fields' values, ``bare``
        whether its keys name none of :data:`_BARE_ABSENT`."""
        kind, uuid, parent, run, continues, title, description, workflow, agent, time, _ = taken
        # a typed string field holds a str or None: "" is no value; each field is asked by
        # values.get, a call in C when compiled (a bound get is a generic call)
        values = fields.values
        source = self.source
        # a nested shape's values are read in place; the line read typed, so each of its
        # fields holds its type or None (an integer field an int, never a bool)
        message = fields.inner("message")
        said = message.get
        raw_result = values.get("toolUseResult")  # a raw field holds the value as written
        result = read(raw_result, TOOL_RESULT) if isinstance(raw_result, dict) else None
        result_whole = result is not None and result.typed
        content = said("content")
        if result is not None or self._linked or isinstance(content, str):
            tool, child, batch = links_of(fields, result, content, source)
        else:  # most lines: nothing but the source's run links them
            tool = child = ""
            batch = source.run
        reported = said("usage")  # an object (as read) or None
        usage = None
        if reported is not None:
            counts: dict[str, Any] = reported if type(reported) is dict else reported.values
            usage = token_usage(counts.get("input_tokens"), counts.get("output_tokens"),
                                counts.get("cache_read_input_tokens"), counts.get("cache_creation_input_tokens"))
        dropped: list[DroppedFields] = []
        attachment = None
        if kind == "attachment":
            # the attachment as written, every key of it, for the flags of what was sent
            attachment = line.value[fields.key("attachment")] if "attachment" in values else None
            parts: list[PartFields] = [attachment_part(line, fields, attachment)]
        elif "content" in message:  # no content, no part from it
            result_data = line.data_at(fields.key("toolUseResult")) if result_whole else None
            parts, dropped = content_parts(line, fields, content, result_data)
        else:
            parts = []
        if result is not None and result_whole:
            edit = changes_part(fields, result, parts, source, self._last_after)
            if edit is not None:
                parts.append(edit)
        if not parts:
            parts.append(_whole(line))
        call = said("id") or None
        if kind == "assistant" and call is not None:
            self.calls.append((line.ord, call))
        # a trigger is read from these fields only (:func:`~.flags.trigger_of`)
        trigger = (trigger_of(fields) if "origin" in values or "attachment" in values or "promptSource" in values
                   else None)
        flags = flags_of(fields, message, result, result_whole, source, attachment)
        from_ = FROM_RUNTIME if self._runtime else _FROM.get(kind, FROM_RUNTIME)
        model = said("model")
        if bare and not tool and not child and trigger is None:  # most lines: fewer fields to pass
            if uuid and parent and call and time and model and usage is not None and batch == source.run:
                # a model's call (most assistant lines): see :meth:`_call_record`
                out = (self._call_records.get(from_) or self._call_record(from_)).copy()
                out["id"], out["parent"], out["call"], out["time"] = uuid, parent, call, time
                out["usage"], out["model"], out["parts"] = usage, model, parts
                if flags:
                    out["flags"] = flags
                else:
                    del out["flags"]
                if dropped:
                    out["dropped"] = dropped
                else:
                    del out["dropped"]
                return out
            return record(id=uuid, parent=parent, call=call, batch=batch, from_=from_, time=time, flags=flags,
                          usage=usage, model=model, parts=parts, dropped=dropped)
        return record(
            id=uuid, parent=parent, call=call, run=run, continues=continues, tool=tool, child=child, batch=batch,
            label=title or description or workflow, started_by=agent, from_=from_, time=time, trigger=trigger,
            flags=flags, usage=usage, model=model, parts=parts, dropped=dropped)

    def _call_record(self, from_: str) -> RecordFields:
        """The record of a model's call from ``from_`` (a bare line past its ids with an id, a
        parent, a call, a time, a model and its usage, no tool, child or trigger, and the source's
        run as its batch), made once by :func:`record` with stand-ins for those, its flags, parts
        and ``dropped``: each such line's record is a copy with its own put in place and an empty
        ``flags`` or ``dropped`` taken out, which keeps the keys in :func:`record`'s order."""
        made = self._call_records[from_] = record(
            id="-", parent="-", call="-", batch=self.source.run, from_=from_, time="-", flags=["-"], usage={},
            model="-", parts=[data_part(None)], dropped=[dropped_entry("-", 0)])
        return made


#: a data part as :func:`~asz_core.sessiondata.fields.data_part` makes one with data and a size,
#: stand-ins for both: the whole line's part is a copy with its own put in place (a JSON line is
#: never empty, so neither is left out)
_WHOLE: Final = data_part(RawJSON(b"-"), 1)


def _whole(line: SourceLine) -> PartFields:
    """The whole line as one data part; ``bytes`` is the line's own size."""
    part = _WHOLE.copy()
    part["data"], part["bytes"] = line.data_at(), len(line.raw)
    return part


def _part_sent_back(source: SourceFacts, calls: list[tuple[int, str]]) -> ClaudeCodeDialect:
    """A part of a split source as :meth:`ClaudeCodeDialect.join` reads it, unpickled."""
    part = ClaudeCodeDialect(source)
    part.calls = calls
    return part
