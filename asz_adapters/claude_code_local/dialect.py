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

A dialect instance also keeps, for the session's derived index, the ``message.id`` and
``requestId`` of each ``assistant`` line it converts, by line number; the lines of a large source
converted in parts (:mod:`asz_core.collect.split`) keep them in parts, joined in line order.
"""

from __future__ import annotations

from typing import Any, Final

from asz_adapters.claude_code_local.about import DIALECT
from asz_adapters.claude_code_local.changes import changes_part
from asz_adapters.claude_code_local.content import attachment_part, content_parts
from asz_adapters.claude_code_local.flags import damaged_flags, flags_of, subtype_flags, trigger_of
from asz_adapters.claude_code_local.links import links_of
from asz_adapters.claude_code_local.shape import RECORD, TOOL_RESULT, Fields, read
from asz_adapters.claude_code_local.source_facts import AGENT_META, JOURNAL, MANIFEST, SCRIPT, SourceFacts
from asz_core.collect import NOT_JSON, SourceLine
from asz_core.sessiondata import FROM_AGENT, FROM_EXTERNAL, FROM_RUNTIME, data_part, record, token_usage
from asz_core.sessiondata.fields import DroppedFields, PartFields, RecordFields

__all__ = ["DIALECT", "SCRIPT_REASON", "ClaudeCodeDialect"]

SCRIPT_REASON: Final = "the source is a program, not data"
_FROM: Final[dict[str | None, str]] = {"assistant": FROM_AGENT, "user": FROM_EXTERNAL}
#: the fields whose presence sends a line past the ids: its content, a tool result, what
#: started it, what the flags of a meta line or a summary read
_READ_FURTHER: Final = frozenset({"message", "toolUseResult", "attachment", "origin", "promptSource",
                                  "isMeta", "isCompactSummary"})


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
        #: ``(line number, requestId)`` of each assistant line that carries one
        self.requests: list[tuple[int, str]] = []

    def split(self) -> ClaudeCodeDialect:
        """A dialect for some of this source's lines, converted in another process
        (:class:`~asz_core.collect.split.SplitDialect`): the same source, no lines yet."""
        return ClaudeCodeDialect(self.source)

    def join(self, part: ClaudeCodeDialect) -> None:
        """Keep the calls and requests of ``part``'s lines, which follow this one's."""
        self.calls += part.calls
        self.requests += part.requests

    def convert(self, line: SourceLine) -> RecordFields:
        kind = self.source.kind
        if kind == SCRIPT:
            return record(from_=FROM_RUNTIME, parts=[line.unknown_part(SCRIPT_REASON)])
        if kind == MANIFEST:
            return self._manifest(line)
        value = line.value
        if type(value) is dict and RECORD.plain(value):  # most lines (:mod:`.shape`)
            if value.keys().isdisjoint(_READ_FURTHER) and not self._linked and value.get("type") != "attachment":
                return self._ids_only(line, value)
            fields: Fields | None = Fields(value, None, True)
        else:
            fields = read(value, RECORD) if line.is_json else None
        if fields is None or not fields.typed:
            return record(from_=FROM_RUNTIME, flags=damaged_flags(line.raw),
                          parts=[line.unknown_part(NOT_JSON)])
        return self._record(line, fields)

    def _manifest(self, line: SourceLine) -> RecordFields:
        if not line.is_json:  # upstream's writer refuses it; here its bytes are kept
            return record(from_=FROM_RUNTIME, parts=[line.unknown_part(NOT_JSON)])
        fields = read(line.value, RECORD)
        if fields is None or not fields.typed:
            return record(from_=FROM_RUNTIME, parts=[_whole(line)])
        return record(batch=fields.text("runId") or self.source.run, label=fields.text("workflowName"),
                      from_=FROM_RUNTIME, parts=[_whole(line)])

    def _ids_only(self, line: SourceLine, values: dict[str, Any]) -> RecordFields:
        """A plain transcript line holding none of the fields past the ids (:data:`_READ_FURTHER`),
        not an attachment: what every rule gives it, without asking the rules that find nothing
        (over half the lines: progress, snapshots, titles)."""
        get = values.get
        kind = get("type")
        return record(
            id=get("uuid"), parent=get("parentUuid"), run=get("promptId"), continues=get("logicalParentUuid"),
            batch=self.source.run, label=get("aiTitle") or get("description") or get("workflowName"),
            started_by=get("parentAgentId"),
            from_=FROM_RUNTIME if self._runtime else _FROM.get(kind, FROM_RUNTIME),
            time=get("timestamp"), flags=subtype_flags(kind, get("subtype")), parts=[_whole(line)])

    def _record(self, line: SourceLine, fields: Fields) -> RecordFields:
        values = fields.values
        get = values.get  # a typed string field holds a str or None: "" is no value
        source = self.source
        kind = get("type")
        # a nested shape's values are read in place; the line read typed, so each of its
        # fields holds its type or None (an integer field an int, never a bool)
        message = fields.inner("message")
        said = message.get
        raw_result = get("toolUseResult")  # a raw field holds the value as written
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
            counts = (reported if type(reported) is dict else reported.values).get
            usage = token_usage(counts("input_tokens"), counts("output_tokens"), counts("cache_read_input_tokens"),
                                counts("cache_creation_input_tokens"))
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
            edit = changes_part(fields, result, parts, source)
            if edit is not None:
                parts.append(edit)
        if not parts:
            parts.append(_whole(line))
        call = said("id") or None
        if kind == "assistant" and call is not None:
            self.calls.append((line.ord, call))
            request = line.value.get("requestId")
            if isinstance(request, str):
                self.requests.append((line.ord, request))
        return record(
            id=get("uuid"), parent=get("parentUuid"), call=call, run=get("promptId"),
            continues=get("logicalParentUuid"), tool=tool, child=child, batch=batch,
            label=get("aiTitle") or get("description") or get("workflowName"), started_by=get("parentAgentId"),
            from_=FROM_RUNTIME if self._runtime else _FROM.get(kind, FROM_RUNTIME), time=get("timestamp"),
            # a trigger is read from these fields only (:func:`~.flags.trigger_of`)
            trigger=(trigger_of(fields) if "origin" in values or "attachment" in values
                     or "promptSource" in values else None),
            flags=flags_of(fields, message, result, result_whole, source, attachment),
            usage=usage, model=said("model"), parts=parts, dropped=dropped,
        )


def _whole(line: SourceLine) -> PartFields:
    """The whole line as one data part; ``bytes`` is the line's own size."""
    return data_part(line.data_at(), len(line.raw))
