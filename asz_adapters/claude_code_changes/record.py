"""A line the plugin wrote, read as a ``changes/1`` record the way upstream's typed decoder reads it.

A line is a change record when, in this order (upstream's ``changes.Decode``, then ``Validate``):

1. it is a JSON object whose ``schema`` is ``changes/1``;
2. every field the record defines holds the type the record gives it, at every depth (a string, an
   integer within 64 bits, a boolean, an object, a list of them); ``null`` is a field left out,
   a field the record does not define is passed over, and a key matches its field in any letter
   case, as Go's decoder matches it. One field of another type and the line does not decode;
3. it names an ``id``, a ``session``, a ``stream``, a ``time`` and a ``basis``, and a ``tool``
   unless its basis is ``unattributed``; each file under ``changes`` names a ``path``, an
   ``operation`` and what its ``diff`` is.

Otherwise :func:`read_change` says why, in upstream's words, and the line lands as an unknown
part that keeps its bytes, so a later version can read it.
"""

from __future__ import annotations

from typing import Any, Final, NamedTuple

__all__ = ["NOT_A_RECORD", "SCHEMA", "Change", "decoded", "read_change", "workspace_of"]

SCHEMA: Final = "changes/1"
#: why a line that does not decode as a change record is an unknown part
NOT_A_RECORD: Final = "the line is not a changes/1 record"
_UNATTRIBUTED: Final = "unattributed"

# A type is one of these names, a dict (an object's fields) or a one-item list (a list of it).
_STR, _INT, _BOOL = "string", "int", "bool"
#: an object's fields and the type of each
_Shape = dict[str, Any]
_INTERVAL: Final[_Shape] = {"from": _STR, "to": _STR}
_ENDPOINT: Final[_Shape] = {"present": _BOOL, "bytes": _INT, "sha256": _STR, "no_newline_at_end": _BOOL}
_HUNK: Final[_Shape] = {"old_start": _INT, "old_lines": _INT, "new_start": _INT, "new_lines": _INT,
                        "lines": [_STR]}
_FILE: Final[_Shape] = {"path": _STR, "operation": _STR, "before": _ENDPOINT, "after": _ENDPOINT, "diff": _STR,
                        "attribution": _STR, "windows": [_STR], "additions": _INT, "deletions": _INT,
                        "hunks": [_HUNK]}
_OVERLAP: Final[_Shape] = {"capture": _STR, "session": _STR, "stream": _STR, "tool": _STR, "tool_name": _STR,
                           "state": _STR}
_RECORD: Final[_Shape] = {
    "schema": _STR, "id": _STR, "captured_by": _STR, "session": _STR, "stream": _STR, "tool": _STR,
    "tool_name": _STR, "time": _STR, "basis": _STR, "root": {"path": _STR, "id": _STR},
    "policy": {"exclusions": _STR, "read_only": _STR, "expanded": [_STR]},
    "window": {"before": _INTERVAL, "after": _INTERVAL}, "outcome": {"state": _STR, "exit_code": _INT},
    "coverage": _STR, "gaps": [_STR], "overlaps": [_OVERLAP], "changed_files": _INT, "changes": [_FILE],
}
#: an integer field is 64 bits wide (Go's ``int`` and ``int64`` on the platforms asz runs on)
_INT_LIMIT: Final = 1 << 63


class Change(NamedTuple):
    """What the landed record lifts from a change record: its id, the call it joins, its time
    (a named tuple, not a dataclass: every pass imports it)."""

    id: str
    tool: str
    time: str


def decoded(value: Any) -> dict[str, Any] | None:
    """The record's fields by name (rules 1 and 2), or ``None`` when it is not one."""
    if not isinstance(value, dict):
        return None
    fields = _fields(value, _RECORD)
    return fields if fields is not None and fields.get("schema") == SCHEMA else None


def read_change(value: Any) -> Change | str:
    """The record's identity (rules 1 to 3), or why the line is not a change record."""
    fields = decoded(value)
    return NOT_A_RECORD if fields is None else _validated(fields)


def workspace_of(value: Any) -> str:
    """The workspace a decoded record names (``root.path``), empty when it names none."""
    fields = decoded(value)
    root = _fields(fields.get("root") or {}, _RECORD["root"]) if fields is not None else None
    return str((root or {}).get("path") or "")


def _fields(value: dict[str, Any], shape: _Shape) -> dict[str, Any] | None:
    """``value``'s fields by their names in ``shape`` (keys matched in any case, a later key
    over an earlier one); ``None`` when one holds another type."""
    by_fold = {name.lower(): name for name in shape}
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = by_fold.get(key.lower())
        if name is None:
            continue
        if item is not None and not _fits(item, shape[name]):
            return None
        out[name] = item
    return out


def _fits(value: Any, kind: Any) -> bool:
    if isinstance(kind, dict):
        return isinstance(value, dict) and _fields(value, kind) is not None
    if isinstance(kind, list):
        return isinstance(value, list) and all(item is None or _fits(item, kind[0]) for item in value)
    if kind == _STR:
        return isinstance(value, str)
    if kind == _BOOL:
        return isinstance(value, bool)
    return type(value) is int and -_INT_LIMIT <= value < _INT_LIMIT


def _validated(record: dict[str, Any]) -> Change | str:
    def text(fields: dict[str, Any], name: str) -> str:
        return str(fields.get(name) or "")

    for name in ("id", "session", "stream", "time", "basis"):
        if not text(record, name):
            return f"changes: record has no {name}"
    if text(record, "basis") != _UNATTRIBUTED and not text(record, "tool"):
        return "changes: an attributed record names its tool"
    for i, change in enumerate(record.get("changes") or []):
        fields = _fields(change or {}, _FILE) or {}
        if not text(fields, "path"):
            return f"changes: change {i} has no path"
        if not text(fields, "operation"):
            return f"changes: {fields['path']} has no operation"
        if not text(fields, "diff"):
            return f"changes: {fields['path']} says nothing about its diff"
    return Change(id=text(record, "id"), tool=text(record, "tool"), time=text(record, "time"))
