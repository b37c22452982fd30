"""One JSON value's exact bytes, as a part's ``data`` holds them (:data:`RawJSON`), and the three
ways asz makes or reads them: a value it built encoded by the writer's rules
(:func:`raw_json_of`), by upstream's ``json.Marshal`` (:func:`raw_json_marshal`), and the bytes
parsed back (:func:`raw_json_value`). The part rules (:mod:`.fields`) and the record shapes
(:mod:`.model`) both hold them, so they live below both.
"""

from __future__ import annotations

from typing import Any, NewType

from asz_core.sessiondata.jsonbytes import encode_value, loads_strict, marshal_value

__all__ = ["RawJSON", "raw_json_marshal", "raw_json_of", "raw_json_value"]

#: The bytes of exactly one JSON value, landed as they are. A type for the checker only, not a
#: ``bytes`` subclass: building a subclass always copies what it is made from, and a part's data
#: can be a screenshot of tens of MB held beside its line and its parse.
RawJSON = NewType("RawJSON", bytes)


def raw_json_of(value: Any) -> RawJSON:
    """Encode a value the adapter built, by the writer's rules (``<``, ``>``, ``&`` literal), as
    upstream encodes the fields it owns and a provider body's manifest."""
    return RawJSON(encode_value(value))


def raw_json_marshal(value: Any) -> RawJSON:
    """Encode a value as upstream's ``json.Marshal`` does (``<``, ``>``, ``&`` escaped): an
    unknown part's string, a media part's base64, a derived ``changes/1`` record."""
    return RawJSON(marshal_value(value))


def raw_json_value(data: RawJSON) -> Any:
    """The parsed value of one JSON value's bytes."""
    return loads_strict(data)
