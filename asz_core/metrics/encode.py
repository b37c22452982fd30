"""The spool's bytes: an OTLP ``ExportMetricsServiceRequest``, encoded here without protobuf.

The core writes the spool whether or not the OTLP packages (``asz[otlp]``) are installed, so it
encodes the few messages a token request needs by the protobuf wire rules itself: fields in
number order, strings and messages length-delimited, times as ``fixed64``, values as ``double``.
The push decodes the bytes with ``opentelemetry-proto``'s own classes, and the tests hold the two
to each other.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["Point", "encode_request"]

#: ``AGGREGATION_TEMPORALITY_DELTA``
DELTA = 1


@dataclass(frozen=True, slots=True)
class Point:
    """One data point of a monotonic delta sum: a window, a value, its attributes in order."""

    metric: str
    attributes: tuple[tuple[str, str], ...]
    start_ns: int
    end_ns: int
    value: int


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _bytes(field: int, data: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(data)) + data


def _text(field: int, text: str) -> bytes:
    return _bytes(field, text.encode("utf-8"))


def _key_value(key: str, value: str) -> bytes:
    # KeyValue{1: key, 2: AnyValue{1: string_value}}
    return _text(1, key) + _bytes(2, _text(1, value))


def _data_point(p: Point) -> bytes:
    # NumberDataPoint{2: start fixed64, 3: time fixed64, 4: as_double, 7: attributes}
    out = _varint(2 << 3 | 1) + struct.pack("<Q", p.start_ns)
    out += _varint(3 << 3 | 1) + struct.pack("<Q", p.end_ns)
    out += _varint(4 << 3 | 1) + struct.pack("<d", float(p.value))
    return out + b"".join(_bytes(7, _key_value(k, v)) for k, v in p.attributes)


def _metric(name: str, description: str, unit: str, points: Iterable[Point]) -> bytes:
    # Sum{1: data_points, 2: temporality, 3: is_monotonic}
    total = b"".join(_bytes(1, _data_point(p)) for p in points)
    total += _varint(2 << 3) + _varint(DELTA) + _varint(3 << 3) + _varint(1)
    # Metric{1: name, 2: description, 3: unit, 7: sum}
    return _text(1, name) + _text(2, description) + _text(3, unit) + _bytes(7, total)


def encode_request(points: Sequence[Point], *, service: str, scope: str, version: str,
                   describe: dict[str, tuple[str, str]]) -> bytes:
    """One request: one resource naming ``service``, one scope, one metric per name (sorted),
    its points in the order given. ``describe``: metric name → (description, unit)."""
    names = sorted({p.metric for p in points})
    metrics = b"".join(
        _bytes(2, _metric(name, *describe[name], (p for p in points if p.metric == name)))
        for name in names)
    scope_metrics = _bytes(1, _text(1, scope) + _text(2, version)) + metrics
    resource = _bytes(1, _key_value("service.name", service))
    resource_metrics = _bytes(1, resource) + _bytes(2, scope_metrics)
    return _bytes(1, resource_metrics)
