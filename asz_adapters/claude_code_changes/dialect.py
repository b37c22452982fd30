"""A line the plugin wrote → the Session Data record landed for it (dialect ``asz-changes/1``).

The plugin writes in the model's own words, so the record is a frame around the line:

1. a change record (:func:`~.record.read_change`): its ``id``, ``tool`` and ``time`` lifted onto
   the record, and the line whole as its one ``data`` part, byte for byte. No ``from`` and no
   flags: assembly makes no step of it, and the view joins it to its step by ``tool``;
2. anything else, a line that is not JSON included: one ``unknown`` part that keeps every byte,
   with the reason, so nothing the plugin wrote is lost to a version that cannot read it. Each
   is noted (:attr:`ChangesDialect.unknown`) for the adapter to name and count once it lands.
"""

from __future__ import annotations

from asz_adapters.claude_code_changes.about import DIALECT
from asz_adapters.claude_code_changes.record import NOT_A_RECORD, read_change
from asz_core.collect import SourceLine
from asz_core.sessiondata import data_part, record
from asz_core.sessiondata.fields import RecordFields

__all__ = ["ChangesDialect"]


class ChangesDialect:
    """One source's dialect: converts its lines, and notes those that are not change records."""

    name = DIALECT
    #: every line reaches :meth:`convert`: one that is not JSON is not a change record either,
    #: and says so in upstream's words
    reads_non_json = True

    def __init__(self) -> None:
        #: ``(ordinal, reason)`` of each line converted to an unknown part, in source order
        self.unknown: list[tuple[int, str]] = []

    def convert(self, line: SourceLine) -> RecordFields:
        change = read_change(line.value) if line.is_json else NOT_A_RECORD
        if isinstance(change, str):
            self.unknown.append((line.ord, change))
            return record(parts=[line.unknown_part(change)])
        return record(id=change.id, tool=change.tool, time=change.time,
                      parts=[data_part(line.data_at(), len(line.raw))])
