"""The properties of a runtime format: what the adapters did with the files the build wrote.

* ``recollect_idempotent``: a second collect lands nothing.
* ``every_line_a_record``: every line of every source file of the session (the plugin's change
  files too) is one landed record, in order, at its offset and size; a one-document source
  (sidecar, manifest, script) is one.
* ``parts_keep_source_bytes``: a record's ``sha`` is the digest of the source bytes its ``off``
  and ``bytes`` name; a call, result or data part's ``data`` is found unchanged in them, an
  unknown part's raw bytes too (media is the adapter's own encoding, and skipped); every landed
  provider body rebuilds to the bytes of a body file the build wrote, and every file landed.
* ``discovery_ignores_noise``: the adapter discovers the scenario's sessions and nothing else,
  and no session's source is the noise the build planted.
* ``pruned_sources_gone``: on a copy, deleting the main transcript, then every other file of the
  session, then putting them back: after each, one pass; a deleted file's cursor says
  ``source_gone``, every other cursor what it said before; nothing lands, no conflict or error,
  every landed file keeps its digest, ``verify`` counts what it counted.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections import Counter
from pathlib import Path

from asz_core.root.cursors import SOURCE_GONE, parse_pairs
from asz_core.scenario.changes import PLUGIN_DATA, PLUGIN_DIR
from asz_core.scenario.properties import Property, register
from asz_core.scenario.workspace import Workspace, remove_tree
from asz_core.scenario.write_claude_code import BODIES_DIR, NOISE
from asz_core.sessiondata.model import Part, Record
from asz_core.verify import verify_root

__all__: list[str] = []


def _session_sources(ws: Workspace, source: Path | None = None) -> list[Path]:
    """The files of the session the local adapter reads, as the build wrote them."""
    assert ws.plan is not None
    base = (source or ws.source) / ws.plan.project
    out = [base / f"{ws.session}.jsonl"]
    session_dir = base / ws.session
    if session_dir.is_dir():
        out.extend(sorted(p for p in session_dir.rglob("*") if p.is_file()))
    return [p for p in out if p.exists()]


def recollect_idempotent(ws: Workspace) -> list[str]:
    summary = ws.collect()
    assert summary is not None
    t = summary.totals
    if t.landed or t.records or t.errors or t.conflicts:
        return [f"recollect_idempotent: a second collect landed {t.landed} file(s), {t.records} record(s), "
                f"with {t.conflicts} conflict(s) and {t.errors} error(s)"]
    return []


def _plugin_sources(ws: Workspace) -> list[Path]:
    """The change files the build wrote for the session, as the plugin writes them."""
    output = ws.source / PLUGIN_DATA / PLUGIN_DIR / "output" / ws.session
    return sorted(output.glob("*.jsonl")) if output.is_dir() else []


#: the changes adapter, by its name and by its name before upstream's 0.5.0 (a header keeps it)
_CHANGES_ADAPTER = ("changes", "claude-code-changes")


def _source_rel(header: dict[str, object]) -> str:
    """A landed file's source, relative to the build's source directory: a header's ``src`` is
    relative to its adapter's own source root, and the changes adapter reads the plugin's."""
    src = str(header.get("src"))
    adapter = str(header.get("adapter", "")).rpartition("/")[0]
    return f"{PLUGIN_DATA}/{src}" if adapter in _CHANGES_ADAPTER else src


def _landed_by_src(ws: Workspace) -> dict[str, list[tuple[bytes, Record]]]:
    out: dict[str, list[tuple[bytes, Record]]] = {}
    for landed in ws.landed():
        if landed.header.get("kind") == "provider_body":
            continue
        out.setdefault(_source_rel(landed.header), []).extend(landed.records)
    return out


def every_line_a_record(ws: Workspace) -> list[str]:
    by_src = _landed_by_src(ws)
    problems = []
    for path in [*_session_sources(ws), *_plugin_sources(ws)]:
        rel = path.relative_to(ws.source).as_posix()
        data = path.read_bytes()
        records = by_src.pop(rel, [])
        if path.suffix == ".jsonl":
            spans, start = [], 0
            for line in data.split(b"\n")[:-1]:
                spans.append((start, len(line)))
                start += len(line) + 1
        else:
            spans = [(0, len(data.rstrip(b"\r\n")))]
        if len(records) != len(spans):
            problems.append(f"every_line_a_record: {rel} has {len(spans)} line(s) and "
                            f"{len(records)} landed record(s)")
            continue
        for number, ((off, size), (_line, record)) in enumerate(zip(spans, records, strict=True), start=1):
            got = (record.ord, record.off, record.bytes)
            if got != (number if path.suffix == ".jsonl" else 1, off, size):
                problems.append(f"every_line_a_record: {rel} line {number} at {off}+{size} landed as "
                                f"ord {got[0]} at {got[1]}+{got[2]}")
                break
    for src in by_src:
        problems.append(f"every_line_a_record: {src} landed, and the build wrote no such file of the session")
    return problems


def _derived_change(part: Part) -> bool:
    """A change record the adapter derives beside a result from the runtime's patch: its
    encoding is the adapter's own, so it is skipped, as upstream's property skips it."""
    return part.k == "data" and bytes(part.data or b"").startswith(b'{"schema":"changes/1"')


def parts_keep_source_bytes(ws: Workspace) -> list[str]:
    by_src = _landed_by_src(ws)
    problems = []
    for src, records in by_src.items():
        path = ws.source / src
        if not path.is_file():
            problems.append(f"parts_keep_source_bytes: {src} is gone from the source")
            continue
        data = path.read_bytes()
        for _line, r in records:
            payload = data[r.off: r.off + r.bytes]
            if hashlib.sha256(payload).hexdigest()[:12] != r.sha:
                problems.append(f"parts_keep_source_bytes: {src} ord {r.ord}: sha {r.sha} is not the digest "
                                f"of the source bytes at {r.off}+{r.bytes}")
                continue
            answers = any(part.k == "result" for part in r.parts)
            for i, part in enumerate(r.parts):
                if part.k == "media" or part.data is None or (answers and _derived_change(part)):
                    continue
                kept = part.raw() if part.k == "unknown" else bytes(part.data)
                if kept not in payload:
                    problems.append(f"parts_keep_source_bytes: {src} ord {r.ord} part {i + 1} ({part.k}): "
                                    f"its bytes are not in the source record")
    problems.extend(_bodies_keep_their_bytes(ws))
    return problems


def _bodies_keep_their_bytes(ws: Workspace) -> list[str]:
    from asz_core.providerbody import ProviderBodies

    directory = ws.source / BODIES_DIR
    written = Counter(hashlib.sha256(p.read_bytes()).hexdigest() for p in directory.glob("*.json")) \
        if directory.is_dir() else Counter()
    rebuilt: Counter[str] = Counter()
    problems = []
    for landed in ws.landed():
        if landed.header.get("kind") != "provider_body":
            continue
        for row in range(1, len(landed.records) + 1):
            try:
                body = ProviderBodies(ws.out / ws.session).body(landed.seq, row)
            except Exception as exc:  # noqa: BLE001 - any failure to rebuild is the finding
                problems.append(f"parts_keep_source_bytes: provider body {landed.seq}:{row} does not rebuild: {exc}")
                continue
            rebuilt[hashlib.sha256(body).hexdigest()] += 1
    if rebuilt != written and not problems:
        problems.append(f"parts_keep_source_bytes: {sum(written.values())} body file(s) written, "
                        f"{sum(rebuilt.values())} landed body(ies) rebuild, and they are not the same bytes")
    return problems


def discovery_ignores_noise(ws: Workspace) -> list[str]:
    from asz_core.cli.app import App
    from asz_core.cli.main import main

    assert ws.plan is not None
    out, err = io.StringIO(), io.StringIO()
    main(["sources", "--sessions", "--json", "--config", str(ws.out / "asz.yaml")],
         App(host=ws.host, out=out, err=err))
    try:
        listing = json.loads(out.getvalue())
    except ValueError:
        return [f"discovery_ignores_noise: sources printed no listing ({err.getvalue().strip()})"]
    noise = {(ws.source / ws.plan.project / rel).as_posix() for rel, _ in NOISE}
    problems, found = [], set()
    for adapter in listing.get("adapters", []):
        if adapter.get("adapter") != "claude-code-local":
            continue
        for unit in adapter.get("units", []):
            if unit.get("kind") == "session":
                found.add(unit.get("session"))
                if unit.get("path") in noise:
                    problems.append(f"discovery_ignores_noise: session {unit.get('session')} "
                                    f"is read from {unit['path']}")
    if found != {ws.session}:
        problems.append(f"discovery_ignores_noise: discovered {sorted(found)}, the scenario's session is {ws.session}")
    return problems


def _cursor_states(root: Path, session: str) -> dict[str, str]:
    out = {}
    for path in sorted((root / session).rglob("*.cursor")):
        state = dict(parse_pairs(path.read_text("utf-8"))).get("state", "")
        out[path.relative_to(root).as_posix()] = state
    return out


def _digests(ws: Workspace, root: Path) -> dict[str, str]:
    return {landed.relpath: hashlib.sha256((root / landed.relpath).read_bytes()).hexdigest()
            for landed in ws.landed(root)}


def _cursor_of(ws: Workspace, rel: str) -> str:
    """The cursor a source file's landing keeps: named by the header ``src`` of its files."""
    for landed in ws.landed():
        if _source_rel(landed.header) == rel:
            directory = os.path.dirname(landed.relpath)
            prefix = os.path.basename(landed.relpath).split("-", 1)[0]
            return f"{directory}/{prefix}.cursor"
    return ""


def pruned_sources_gone(ws: Workspace) -> list[str]:
    copy = ws.copy("pruned")
    try:
        return _prune_and_restore(ws, copy)
    finally:
        remove_tree(copy)


def _prune_and_restore(ws: Workspace, copy: Path) -> list[str]:
    before = _cursor_states(copy, ws.session)
    digests = _digests(ws, copy)
    count = sum(len(r.problems) for r in verify_root(copy, [ws.session]))
    files = _session_sources(ws, copy / "_source")
    kept = {p: p.read_bytes() for p in files}
    stats = {p: p.stat() for p in files}
    problems: list[str] = []

    def one_pass(step: str, gone: list[Path]) -> None:
        summary = ws.collect(copy)
        assert summary is not None
        t = summary.totals
        if t.landed or t.records or t.conflicts or t.errors:
            problems.append(f"pruned_sources_gone: {step}: the pass landed {t.landed} file(s) with "
                            f"{t.conflicts} conflict(s) and {t.errors} error(s)")
        want = dict(before)
        for path in gone:
            cursor = _cursor_of(ws, path.relative_to(copy / "_source").as_posix())
            if cursor and before.get(cursor) != "conflict":
                want[cursor] = SOURCE_GONE
        now = _cursor_states(copy, ws.session)
        for cursor in sorted(set(want) | set(now)):
            if want.get(cursor) != now.get(cursor):
                problems.append(f"pruned_sources_gone: {step}: {cursor} says {now.get(cursor) or 'nothing'}, "
                                f"expected {want.get(cursor) or 'no cursor'}")
        if _digests(ws, copy) != digests:
            problems.append(f"pruned_sources_gone: {step}: a landed file changed or appeared")
        again = sum(len(r.problems) for r in verify_root(copy, [ws.session]))
        if again != count:
            problems.append(f"pruned_sources_gone: {step}: verify counts {again} problem(s), {count} before")

    main, others = files[0], files[1:]
    main.unlink()
    one_pass("the main transcript deleted", [main])
    for path in others:
        path.unlink()
    one_pass("every file of the session deleted", files)
    for path, data in kept.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        os.utime(path, ns=(stats[path].st_atime_ns, stats[path].st_mtime_ns))
    one_pass("the files put back", [])
    return problems


register(Property("recollect_idempotent", recollect_idempotent, runtime=True))
register(Property("every_line_a_record", every_line_a_record, runtime=True))
register(Property("parts_keep_source_bytes", parts_keep_source_bytes, runtime=True))
register(Property("discovery_ignores_noise", discovery_ignores_noise, runtime=True))
register(Property("pruned_sources_gone", pruned_sources_gone, runtime=True))
