"""``claude-code/1`` for the files beside the transcripts: sidecars, journals, manifests, scripts.

Each of these is written by Claude Code itself, so every record is ``from: runtime`` and holds
its source whole, as one data part (the source's own JSON, compacted) — or, for a script, one
unknown part with its bytes. A dialect instance is made per source and knows what the source's
path says: the agent a sidecar describes, the run a file belongs to.

* ``agent-<agent>.meta.json`` (kind ``agent_meta``): ``child`` = the agent, ``label`` =
  ``description``, ``started_by`` = ``parentAgentId`` (the agent that started a nested child).
* ``journal.jsonl`` (kind ``journal``), one record per line: ``batch`` = the run, ``child`` =
  ``agentId``, ``time`` = ``timestamp``; ``child_result`` on a line of ``type`` ``"result"``,
  the record that returns a child's value.
* ``wf_<run>.json`` (kind ``workflow_manifest``): ``batch`` = the run, ``label`` =
  ``workflowName``.
* ``<name>-wf_<run>.js`` (kind ``workflow_script``): a program, not records; one unknown part.

A JSON value that is not an object has no fields to read and lands as one unknown part.
"""

from __future__ import annotations

from typing import Any, Final

from asz_adapters.claude_code_local.dialect import DIALECT, NOT_AN_OBJECT
from asz_core.collect import SourceLine
from asz_core.sessiondata import FROM_RUNTIME, Part, Record

__all__ = ["SCRIPT_REASON", "JournalDialect", "ManifestDialect", "MetaDialect", "ScriptDialect"]

SCRIPT_REASON: Final = "a workflow script is a program, not records this dialect describes"


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _whole(line: SourceLine, **fields: Any) -> tuple[Record, dict[str, Any] | None]:
    """The record of a source that lands whole, and its fields when it has any."""
    value = line.value
    if not isinstance(value, dict):
        return Record(from_=FROM_RUNTIME, parts=[Part.unknown(line.raw, NOT_AN_OBJECT)], **fields), None
    return Record(from_=FROM_RUNTIME, parts=[Part.data_part(line.data_at())], **fields), value


class MetaDialect:
    """A child's sidecar ``agent-<agent>.meta.json``."""

    name = DIALECT
    reads_non_json = False  #: a line that is not JSON lands as an unknown part

    def __init__(self, agent: str) -> None:
        self.agent = agent

    def convert(self, line: SourceLine) -> Record:
        record, value = _whole(line, child=self.agent)
        if value is not None:
            record.label = _str(value.get("description"))
            record.started_by = _str(value.get("parentAgentId"))
        return record


class _RunDocument:
    """A file of one workflow run, which each of its records names as its ``batch``."""

    name = DIALECT
    reads_non_json = False  #: a line that is not JSON lands as an unknown part

    def __init__(self, run: str) -> None:
        self.run = run


class JournalDialect(_RunDocument):
    """A workflow run's ``journal.jsonl``: one record per line."""

    def convert(self, line: SourceLine) -> Record:
        record, value = _whole(line, batch=self.run)
        if value is not None:
            record.child = _str(value.get("agentId"))
            record.time = _str(value.get("timestamp"))
            if value.get("type") == "result":
                record.flags.append("child_result")
        return record


class ManifestDialect(_RunDocument):
    """A workflow run's manifest ``wf_<run>.json``."""

    def convert(self, line: SourceLine) -> Record:
        record, value = _whole(line, batch=self.run)
        if value is not None:
            record.label = _str(value.get("workflowName"))
        return record


class ScriptDialect(_RunDocument):
    """A workflow run's script: its bytes kept whole in one unknown part."""

    #: a script is not JSON: the collector hands its bytes here rather than calling them a bad line
    reads_non_json = True

    def convert(self, line: SourceLine) -> Record:
        return Record(from_=FROM_RUNTIME, batch=self.run, parts=[Part.unknown(line.raw, SCRIPT_REASON)])
