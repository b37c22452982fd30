"""``tool``, ``child`` and ``batch``: the links of a ``claude-code/1`` record outside its content.

By the kind of source the line is from:

* a sidecar: ``child`` = its ``agentId``, else the stream it describes; ``tool`` = the tool
  result's ``toolUseId``;
* a journal: ``child`` = its ``agentId``;
* a transcript (main or child): ``tool`` = the tool result's ``toolUseId``, ``child`` = the tool
  result's ``agentId`` (the agent a call started or returned).

Then, when either is still empty, a completion notification fills it: a line whose
``message.content`` is one string holding ``<task-notification>``. ``tool`` = the text between
its first ``<tool-use-id>`` and the next ``</tool-use-id>``, white space trimmed; ``child`` =
the first of its ``<task-id>`` values, taken one after another the same way, that has an agent
id's shape (``a`` and 16 lowercase hex digits): a task id is a generic handle, most often not an
agent's. Nothing else names them: not a progress line's ``parentToolUseID``, not
``sourceToolUseID``, not ``agent_progress``'s ``data.agentId``.

``batch`` = the tool result's ``runId`` (the workflow run a call launched), else the run the
source was filed under.

The tool result here is the ``toolUseResult`` object as far as it reads: a result one of whose
fields has another type still gives the fields that did read (upstream fills them the same way).
"""

from __future__ import annotations

import re
from typing import Final

from asz_adapters.claude_code_local.shape import NO_FIELDS, Fields
from asz_adapters.claude_code_local.source_facts import AGENT_META, JOURNAL, SourceFacts

__all__ = ["AGENT_ID", "go_trim_space", "links_of"]

AGENT_ID: Final = re.compile(r"a[0-9a-f]{16}")
_NOTIFICATION: Final = "<task-notification>"
#: the characters Go's ``strings.TrimSpace`` removes (Unicode's White_Space)
_WHITE_SPACE: Final = ("\t\n\v\f\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B)))
                       + "\u2028\u2029\u202f\u205f\u3000")


def go_trim_space(text: str) -> str:
    return text.strip(_WHITE_SPACE)


def links_of(line: Fields, result: Fields | None, content: object,
             source: SourceFacts) -> tuple[str, str, str]:
    """``(tool, child, batch)``, each ``""`` when nothing names it. ``content`` is the parsed
    ``message.content``."""
    if result is None and source.kind not in (AGENT_META, JOURNAL) and not isinstance(content, str):
        return "", "", source.run  # most lines: no tool result, no notification
    named = (result if result is not None else NO_FIELDS).values
    if source.kind == AGENT_META:
        tool, child = named.get("toolUseId") or "", line.values.get("agentId") or source.stream
    elif source.kind == JOURNAL:
        tool, child = "", line.values.get("agentId") or ""
    else:
        tool, child = named.get("toolUseId") or "", named.get("agentId") or ""
    if (not tool or not child) and isinstance(content, str) and _NOTIFICATION in content:
        tool = tool or _between(content, "<tool-use-id>", "</tool-use-id>")
        child = child or _agent_task(content)
    return tool, child, named.get("runId") or source.run


def _between(text: str, opening: str, closing: str) -> str:
    start = text.find(opening)
    if start < 0:
        return ""
    rest = text[start + len(opening):]
    end = rest.find(closing)
    return go_trim_space(rest[:end]) if end >= 0 else ""


def _agent_task(text: str) -> str:
    """The first ``<task-id>`` with an agent id's shape; the search stops at an empty one."""
    rest = text
    while True:
        task = _between(rest, "<task-id>", "</task-id>")
        if not task:
            return ""
        if AGENT_ID.fullmatch(task):
            return task
        end = rest.find("</task-id>")
        if end < 0:
            return ""
        rest = rest[end + len("</task-id>"):]
