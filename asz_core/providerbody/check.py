"""``verify`` for provider bodies: every landed body rebuilt and compared with its ``sha256``.

Listed in :data:`asz_core.verify.FILE_CHECKS` for the kind ``provider_body``. Files come in
seq order, so one :class:`~asz_core.providerbody.store.BodyStore` per session (kept in the
session's report) sees every record after those it may refer to. A body that does not rebuild,
or whose record's ``bytes``/``sha`` disagree with its manifest, is damage; a body with a piece
taken out (too large to land) is counted apart, and so is one only a skeleton keeps.
"""

from __future__ import annotations

from pathlib import Path

from asz_core.providerbody.errors import ProviderBodyError
from asz_core.providerbody.store import DAMAGED, OK, TOO_LARGE, BodyStore
from asz_core.session_report import Problem, SessionReport
from asz_core.sessiondata.model import Record

__all__ = ["KIND", "check_provider_body_file"]

KIND = "provider_body"


def check_provider_body_file(report: SessionReport, path: Path, rows: list[tuple[bytes, Record]]) -> None:
    store = report.state.get(KIND)
    if not isinstance(store, BodyStore):
        store = report.state[KIND] = BodyStore()
    skeleton = path.name.endswith(".sk")
    for row, (_, record) in enumerate(rows, start=1):
        entry = store.add(record, row=row, skeleton=skeleton)
        status, problem = entry.status, entry.problem
        if status == OK:
            try:
                store.build(entry)
            except ProviderBodyError as exc:
                status, problem = DAMAGED, str(exc)
        if status != DAMAGED and (record.bytes != entry.manifest.bytes
                                  or record.sha != entry.manifest.sha256[:12]):
            status, problem = DAMAGED, "the record's bytes/sha disagree with its manifest"
        report.counts[f"provider_body_{status}"] += 1
        if status == DAMAGED:
            report.problems.append(Problem(report.session, "damaged", str(path),
                                           f"row {row}: provider body {entry.id!r} does not rebuild: {problem}"))
    apart = report.counts[f"provider_body_{TOO_LARGE}"]
    removed = report.counts["provider_body_unavailable"]
    if not apart and not removed:
        return
    text = (f"provider bodies not rebuilt from the root alone (not damage): {apart} with pieces "
            f"taken out (too large to land; they rebuild from another copy of the body), "
            f"{removed} kept only as skeletons")
    note = report.state.get(KIND + ".note")
    if isinstance(note, int):
        report.notes[note] = text
    else:
        report.state[KIND + ".note"] = len(report.notes)
        report.notes.append(text)
