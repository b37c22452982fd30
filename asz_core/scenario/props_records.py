"""The properties of the landed records themselves, in either format and across the two.

* ``reproducible``: two builds of the scenario with the same ``--at`` write the same bytes: every
  source file, the configuration, and every landed file (collected with the same clock).
* ``records_well_formed``: every landed header names its kind, session, source, adapter,
  dialect and time, and its stream or run (a provider body belongs to the session only); every
  record carries ``ord``, ``off``, ``sha``, ``bytes`` and ``parts``, and only fields the format
  states a purpose for.
* ``provider_bodies_rebuild``: every landed provider body rebuilds, read the way a reader that
  loads bodies on demand reads them, to its manifest's digest.
* ``cross_format``: the two formats land the same evidence: the same streams and runs, each with
  the same records by id and time, in the same order.
* ``records_match``: and the same records field by field: identifiers, producer, time, trigger,
  flags, usage, model, the shape of every part and what was dropped. Provenance and a data part's
  bytes differ by construction and are not compared.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import orjson

from asz_core.scenario.properties import Property, register
from asz_core.scenario.workspace import LandedRecords, Workspace, remove_tree
from asz_core.sessiondata.model import Record

__all__ = ["record_view"]

_ALLOWED = frozenset(("ord", "off", "sha", "bytes", "from", "time", "trigger", "flags", "id", "parent", "call", "run",
                      "continues", "tool", "child", "batch", "label", "started_by", "parts", "usage", "model",
                      "dropped"))
_REQUIRED = ("ord", "off", "sha", "bytes", "parts")
_HEADER = ("kind", "session", "src", "adapter", "dialect", "at")


def _tree(root: Path) -> dict[str, str]:
    out = {}
    for directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "index"]  # derived and disposable: it names inodes and times
        for name in files:
            if name.endswith((".cursor", ".state", ".lock")) or name == "push.state":
                continue  # a cursor and a state note name inodes and wall-clock times
            path = Path(directory) / name
            data = path.read_bytes()
            if name == "asz.yaml":  # it names its directory by absolute path: the twin's own
                data = data.replace(str(root.resolve()).encode(), b"DIR")
            out[path.relative_to(root).as_posix()] = hashlib.sha256(data).hexdigest()
    return out


def reproducible(ws: Workspace) -> list[str]:
    trees = []
    for twin in ("twin-a", "twin-b"):
        target = ws.out.parent / f"{ws.out.name}-{twin}"
        if target.exists():
            remove_tree(target)
        other = Workspace(ws.scenario, ws.expect, ws.format, target, ws.at_ms, ws.scale, ws.interval_ms)
        other.host = ws.host
        try:
            other.build()
            other.collect()
            trees.append(_tree(target))
        finally:
            remove_tree(target)
    a, b = trees
    differ = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    if differ:
        return [f"reproducible: two builds with the same --at differ in {len(differ)} file(s): {', '.join(differ[:5])}"]
    return []


def records_well_formed(ws: Workspace) -> list[str]:
    problems = []
    for landed in ws.landed():
        h, name = landed.header, os.path.basename(landed.relpath)
        empty = [k for k in _HEADER if not h.get(k)]
        if empty:
            problems.append(f"records_well_formed: {name}: header field(s) {', '.join(empty)} empty")
        if h.get("session") != ws.session or (not h.get("stream") and not h.get("batch")
                                               and h.get("kind") != "provider_body"):
            problems.append(f"records_well_formed: {name}: header names session {h.get('session')} "
                            f"stream {h.get('stream')!r} batch {h.get('batch')!r}")
        for row, (line, _record) in enumerate(landed.records, start=1):
            fields = orjson.loads(line)
            extra = sorted(set(fields) - _ALLOWED)
            lacking = [k for k in _REQUIRED if k not in fields]
            if extra:
                problems.append(f"records_well_formed: {name} record {row} carries {', '.join(extra)}, "
                                f"with no stated purpose")
            if lacking:
                problems.append(f"records_well_formed: {name} record {row} lacks {', '.join(lacking)}")
    return problems


def provider_bodies_rebuild(ws: Workspace) -> list[str]:
    from asz_core.providerbody import ProviderBodies

    problems, bodies = [], 0
    for landed in ws.landed():
        if landed.header.get("kind") != "provider_body":
            continue
        for row in range(1, len(landed.records) + 1):
            bodies += 1
            try:  # a fresh reader each time: it reads only the files up to the one named
                ProviderBodies(ws.out / ws.session).body(landed.seq, row)
            except Exception as exc:  # noqa: BLE001 - any failure to rebuild is the finding
                problems.append(f"provider_bodies_rebuild: {landed.relpath} row {row}: {exc}")
    if not bodies:
        problems.append(f"provider_bodies_rebuild: the scenario writes provider bodies and the {ws.format} "
                        f"build landed none")
    return problems


def record_view(header: dict[str, Any], record: Record) -> tuple[Any, ...]:
    """What two formats must agree on in one record."""
    u = record.usage
    usage = "" if u is None else f"{u.in_ or 0}/{u.out or 0}/{u.cache_read or 0}/{u.cache_write or 0}"
    parts = tuple((p.k, p.id, p.of, p.name, p.state, p.failed, None if p.k in ("data", "unknown") else p.text)
                  for p in record.parts)
    return (("id", record.id), ("parent", record.parent), ("call", record.call), ("run", record.run),
            ("continues", record.continues), ("tool", record.tool), ("child", record.child),
            ("batch", record.batch), ("label", record.label), ("started_by", record.started_by),
            ("from", record.from_), ("time", record.time), ("trigger", record.trigger),
            ("flags", tuple(sorted(record.flags))), ("usage", usage), ("model", record.model),
            ("parts", parts), ("dropped", len(record.dropped)))


def _groups(files: list[LandedRecords]) -> dict[str, list[tuple[Any, ...]]]:
    out: dict[str, list[tuple[Any, ...]]] = {}
    for landed in files:
        h = landed.header
        key = f"{h.get('kind')}:{h.get('stream') or ''}:{h.get('batch') or ''}"
        out.setdefault(key, []).extend(record_view(h, r) for _line, r in landed.records)
    return out


def _both(a: Workspace, b: Workspace) -> tuple[dict[str, list[tuple[Any, ...]]], dict[str, list[tuple[Any, ...]]]]:
    return _groups(a.landed()), _groups(b.landed())


def cross_format(a: Workspace, b: Workspace) -> list[str]:
    ga, gb = _both(a, b)
    problems = []
    for key in sorted(set(ga) | set(gb)):
        ra, rb = ga.get(key, []), gb.get(key, [])
        ids_a = [(dict(v)["id"], dict(v)["time"]) for v in ra]
        ids_b = [(dict(v)["id"], dict(v)["time"]) for v in rb]
        if ids_a != ids_b:
            problems.append(f"cross_format: {key}: {a.format} lands {len(ra)} record(s) {ids_a[:3]}…, "
                            f"{b.format} {len(rb)} {ids_b[:3]}…")
    return problems


def records_match(a: Workspace, b: Workspace) -> list[str]:
    ga, gb = _both(a, b)
    problems = []
    for key in sorted(set(ga) | set(gb)):
        ra, rb = ga.get(key, []), gb.get(key, [])
        if len(ra) != len(rb):
            problems.append(f"records_match: {key} holds {len(ra)} record(s) against {len(rb)}")
            continue
        for n, (va, vb) in enumerate(zip(ra, rb, strict=True), start=1):
            if va != vb:
                da, db = dict(va), dict(vb)
                fields = [f"{k} {da[k]!r} against {db[k]!r}" for k in da if da[k] != db[k]]
                problems.append(f"records_match: {key} record {n} ({da['id']}): {a.format} and {b.format} "
                                f"differ in {'; '.join(fields)}")
    return problems


register(Property("reproducible", reproducible))
register(Property("records_well_formed", records_well_formed))
register(Property("provider_bodies_rebuild", provider_bodies_rebuild,
                  applies=lambda ws: ws.scenario.provider_bodies, why_not="the scenario writes no provider bodies"))
register(Property("cross_format", cross_format, scope="cross"))
register(Property("records_match", records_match, scope="cross"))
