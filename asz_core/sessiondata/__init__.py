"""Session Data (``sd/1``): the public library adapters write with and readers trust.

* :class:`SessionDataWriter` writes a header, records and the closing line with its digest;
* :func:`open_file` / :func:`read_records` read a landed ``.sd`` or ``.sk`` strictly, one record
  at a time, raising only :class:`SessionDataError`; :func:`encode_record` raises
  :class:`NotEncodable` for a record no writer can land;
* :class:`Record`, :class:`Part`, :class:`Dropped`, :class:`Usage`, :class:`Header` are the
  shapes (``spec/tables.md``); :data:`RawJSON` is one JSON value's exact bytes
  (:func:`raw_json_of`, :func:`raw_json_marshal`, :func:`raw_json_value`);
* :func:`reduce_to_fit` is "Too large to land";
* :func:`parse_instant` compares RFC 3339 times as instants.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from asz_core.sessiondata.errors import NotEncodable, SessionDataError
    from asz_core.sessiondata.model import (
        FROM_AGENT,
        FROM_EXTERNAL,
        FROM_RUNTIME,
        PART_KINDS,
        STATES,
        Dropped,
        Header,
        Part,
        RawJSON,
        Record,
        Usage,
        raw_json_marshal,
        raw_json_of,
        raw_json_value,
        split_mcp_name,
    )
    from asz_core.sessiondata.reader import SessionDataFile, check_file, decode_record, open_file, read_records
    from asz_core.sessiondata.reduce import reduce_to_fit
    from asz_core.sessiondata.times import format_instant, parse_instant
    from asz_core.sessiondata.writer import FileSummary, SessionDataWriter, encode_record

__all__ = [
    "FROM_AGENT",
    "FROM_EXTERNAL",
    "FROM_RUNTIME",
    "PART_KINDS",
    "STATES",
    "Dropped",
    "FileSummary",
    "Header",
    "NotEncodable",
    "Part",
    "RawJSON",
    "Record",
    "SessionDataError",
    "SessionDataFile",
    "SessionDataWriter",
    "Usage",
    "check_file",
    "decode_record",
    "encode_record",
    "format_instant",
    "open_file",
    "parse_instant",
    "raw_json_marshal",
    "raw_json_of",
    "raw_json_value",
    "read_records",
    "reduce_to_fit",
    "split_mcp_name",
]

#: where each name lives: a name loads its module when first asked for, so that a module of
#: this package (``jsonbytes``, ``times``) is imported without the writer, reader and reduction
#: (a pass with nothing new needs none of them, and their dataclasses cost its start-up)
_MODULES = {
    "SessionDataError": "errors",
    "NotEncodable": "errors",
    **dict.fromkeys(("FROM_AGENT", "FROM_EXTERNAL", "FROM_RUNTIME", "PART_KINDS", "STATES", "Dropped", "Header",
                     "Part", "RawJSON", "Record", "Usage", "raw_json_marshal", "raw_json_of",
                     "raw_json_value", "split_mcp_name"), "model"),
    **dict.fromkeys(("SessionDataFile", "check_file", "decode_record", "open_file", "read_records"), "reader"),
    "reduce_to_fit": "reduce",
    "format_instant": "times",
    "parse_instant": "times",
    **dict.fromkeys(("FileSummary", "SessionDataWriter", "encode_record"), "writer"),
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
