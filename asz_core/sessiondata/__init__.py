"""Session Data (``sd/1``): the public library adapters write with and readers trust.

* :class:`SessionDataWriter` writes a header, records and the closing line with its digest;
* :func:`open_file` / :func:`read_records` read a landed ``.sd`` or ``.sk`` strictly, one record
  at a time, raising only :class:`SessionDataError`; :func:`encode_record` raises
  :class:`NotEncodable` for a record no writer can land;
* a dialect makes each record as the mapping it lands as: :func:`record` and the part functions
  (:func:`text_part`, :func:`call_part`, :func:`data_part`, ...; :mod:`.fields`), encoded by
  :func:`encode_fields`;
* :class:`Record`, :class:`Part`, :class:`Dropped`, :class:`Usage`, :class:`Header` are the
  shapes a reader hands out (``spec/tables.md``); :data:`RawJSON` is one JSON value's exact bytes
  (:func:`raw_json_of`, :func:`raw_json_marshal`, :func:`raw_json_value`);
* :func:`reduce_to_fit` is "Too large to land";
* :func:`parse_instant` compares RFC 3339 times as instants.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from asz_core.sessiondata.errors import NotEncodable, SessionDataError
    from asz_core.sessiondata.fields import (
        DroppedFields,
        PartFields,
        RecordFields,
        UsageFields,
        call_part,
        data_part,
        dropped_entry,
        media_part,
        reasoning_part,
        record,
        result_part,
        split_mcp_name,
        text_part,
        token_usage,
        too_large_part,
        unknown_part,
        utf8_len,
    )
    from asz_core.sessiondata.model import (
        FROM_AGENT,
        FROM_EXTERNAL,
        FROM_RUNTIME,
        PART_KINDS,
        STATES,
        Dropped,
        Header,
        Part,
        Record,
        Usage,
    )
    from asz_core.sessiondata.rawjson import RawJSON, raw_json_marshal, raw_json_of, raw_json_value
    from asz_core.sessiondata.reader import SessionDataFile, check_file, decode_record, open_file, read_records
    from asz_core.sessiondata.reduce import reduce_to_fit
    from asz_core.sessiondata.times import format_instant, parse_instant
    from asz_core.sessiondata.writer import FileSummary, SessionDataWriter, encode_fields, encode_record, record_line

__all__ = [
    "FROM_AGENT",
    "FROM_EXTERNAL",
    "FROM_RUNTIME",
    "PART_KINDS",
    "STATES",
    "Dropped",
    "DroppedFields",
    "FileSummary",
    "Header",
    "NotEncodable",
    "Part",
    "PartFields",
    "RawJSON",
    "Record",
    "RecordFields",
    "SessionDataError",
    "SessionDataFile",
    "SessionDataWriter",
    "Usage",
    "UsageFields",
    "call_part",
    "check_file",
    "data_part",
    "decode_record",
    "dropped_entry",
    "encode_fields",
    "encode_record",
    "format_instant",
    "media_part",
    "open_file",
    "parse_instant",
    "raw_json_marshal",
    "raw_json_of",
    "raw_json_value",
    "read_records",
    "reasoning_part",
    "record",
    "record_line",
    "reduce_to_fit",
    "result_part",
    "split_mcp_name",
    "text_part",
    "too_large_part",
    "unknown_part",
    "token_usage",
    "utf8_len",
]

#: where each name lives: a name loads its module when first asked for, so that a module of
#: this package (``jsonbytes``, ``times``) is imported without the writer, reader and reduction
#: (a pass with nothing new needs none of them, and their dataclasses cost its start-up)
_MODULES = {
    "SessionDataError": "errors",
    "NotEncodable": "errors",
    **dict.fromkeys(("FROM_AGENT", "FROM_EXTERNAL", "FROM_RUNTIME", "PART_KINDS", "STATES", "Dropped", "Header",
                     "Part", "Record", "Usage"), "model"),
    **dict.fromkeys(("RawJSON", "raw_json_marshal", "raw_json_of", "raw_json_value"), "rawjson"),
    **dict.fromkeys(("DroppedFields", "PartFields", "RecordFields", "UsageFields", "call_part", "data_part",
                     "dropped_entry", "media_part", "reasoning_part", "record", "result_part", "split_mcp_name",
                     "text_part", "token_usage", "too_large_part", "unknown_part", "utf8_len"), "fields"),
    **dict.fromkeys(("SessionDataFile", "check_file", "decode_record", "open_file", "read_records"), "reader"),
    "reduce_to_fit": "reduce",
    "format_instant": "times",
    "parse_instant": "times",
    **dict.fromkeys(("FileSummary", "SessionDataWriter", "encode_fields", "encode_record", "record_line"), "writer"),
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
