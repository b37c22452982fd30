"""``kiro-cli-meta/1`` and ``kiro-ide-meta/1``: a session's metadata document as one record.

The CLI's ``<uuid>.json`` and the IDE's ``session.json`` are rewritten in place; each version
lands whole (kind ``agent_meta``, by the snapshot collector) as one record: ``from: runtime``,
``label`` = the document's ``title`` when it has one, ``child`` = the stream's id when the
session is a child stream, and the document as one data part.
"""

from __future__ import annotations

from asz_core.collect import SourceLine
from asz_core.sessiondata import FROM_RUNTIME, data_part, record
from asz_core.sessiondata.fields import RecordFields

__all__ = ["CliMetaDialect", "IdeMetaDialect"]


class _MetaDialect:
    name = ""
    reads_non_json = False  #: a line that is not JSON lands as an unknown part

    def __init__(self, child: str | None = None) -> None:
        self.child = child  #: the child stream this document describes; None for ``main``

    def convert(self, line: SourceLine) -> RecordFields:
        value = line.value
        title = value.get("title") if isinstance(value, dict) else None
        return record(child=self.child, label=title if isinstance(title, str) else None, from_=FROM_RUNTIME,
                      parts=[data_part(line.data_at())])


class CliMetaDialect(_MetaDialect):
    """A Kiro CLI session's ``<uuid>.json``."""

    name = "kiro-cli-meta/1"


class IdeMetaDialect(_MetaDialect):
    """A Kiro IDE session's ``session.json``."""

    name = "kiro-ide-meta/1"
