"""``verify``: read a root by the rules alone, with no source files, and report every problem.

For each session: every landed file read strictly (closing line, count, digest, every record's
types); the name, header and directory agreeing; no seq used twice; per stream (or run) and
kind, ``ord`` running 1, 2, 3 and ``off`` chaining as ``off + bytes + 1`` (``ord gap`` /
``byte gap``), and the records reaching their append cursor (``end gap``). A record landed twice
(a crash between landing and the cursor) is reported as a repeat, not as damage. Checks that
belong to one kind of file (rebuilding provider bodies) come from :data:`FILE_CHECKS`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from asz_core.providerbody.check import KIND as PROVIDER_BODY
from asz_core.providerbody.check import check_provider_body_file
from asz_core.root.cursors import AppendCursor
from asz_core.root.layout import cursor_file, parse_file_name
from asz_core.root.storage import landed_files
from asz_core.session_report import FileCheck, Problem, SessionReport
from asz_core.sessiondata.errors import SessionDataError
from asz_core.sessiondata.model import Record
from asz_core.sessiondata.reader import open_file

__all__ = ["FILE_CHECKS", "Problem", "SessionReport", "verify_root", "verify_session"]


#: Checks for the records of one file kind, each from the module that knows that kind, so verify
#: itself stays generic: listed here, not registered by importing a module.
FILE_CHECKS: dict[str, FileCheck] = {PROVIDER_BODY: check_provider_body_file}


def verify_root(root: Path, sessions: Iterable[str] | None = None,
                progress: Callable[[int, int], None] | None = None) -> list[SessionReport]:
    """Every session's report (or those named); ``progress(done, total)`` after each."""
    names = list(sessions) if sessions is not None else sorted(
        p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))
    reports = []
    for name in names:
        reports.append(verify_session(root, name))
        if progress is not None:
            progress(len(reports), len(names))
    return reports


def _check_round_chain(root: Path, session: str, report: SessionReport) -> None:
    """The session's round chain (its conversation is the session): digests, links, seq
    contiguity, and every landed file a round consumed (a lost one named by round and seq)."""
    from asz_core.assembly.chaincheck import check_chain

    for problem in check_chain(root, session):
        report.problems.append(Problem(session, problem.kind, problem.path, problem.message))


def _expected_place(root: Path, path: Path) -> tuple[str, str | None]:
    """The group (``streams/x``, ``runs/y``, ``provider_body``) and stream a path implies."""
    rel = path.relative_to(root).parts
    if len(rel) == 4 and rel[1] in ("streams", "runs"):
        return f"{rel[1]}/{rel[2]}", rel[2] if rel[1] == "streams" else None
    return rel[1], None


class _Chain:
    """The ord/off chain of one stream (or run) and kind, fed one record at a time."""

    def __init__(self, report: SessionReport, session_dir: Path, group: str, kind: str) -> None:
        self.report, self.session_dir, self.group, self.kind = report, session_dir, group, kind
        self.want_ord, self.want_off = 1, 0
        self.seen: dict[int, tuple[int, str | None]] = {}
        self.snapshot = True  # every file one record at ord 1, off 0: versions of a document
        self.pending: list[Problem] = []
        self.last_path: Path | None = None

    def feed(self, path: Path, row: int, record: Record) -> None:
        self.last_path = path
        if row > 1 or record.ord != 1 or record.off != 0:
            self.snapshot = False
        if record.ord < self.want_ord and self.seen.get(record.ord) == (record.off, record.sha):
            self.report.repeats += 1
            return
        if record.ord != self.want_ord:
            self.pending.append(Problem(self.report.session, "ord gap", str(path),
                                        f"row {row}: ord {record.ord}, expected {self.want_ord}"))
        if record.off != self.want_off:
            self.pending.append(Problem(self.report.session, "byte gap", str(path),
                                        f"row {row}: off {record.off}, expected {self.want_off}"))
        self.seen[record.ord] = (record.off, record.sha)
        self.want_ord, self.want_off = record.ord + 1, record.off + record.bytes + 1

    def finish(self) -> None:
        if self.snapshot:
            return
        self.report.problems.extend(self.pending)
        cursor = AppendCursor.load(cursor_file(self.session_dir, self.group, self.kind))
        if cursor is not None and cursor.offset and (
                self.want_ord - 1 < cursor.ord or self.want_off < cursor.offset):
            self.report.problems.append(Problem(
                self.report.session, "end gap", str(self.last_path or self.session_dir / self.group),
                f"records reach ord {self.want_ord - 1} at byte {self.want_off}; "
                f"the cursor says ord {cursor.ord} at byte {cursor.offset}"))


def _check_removed(report: SessionReport, path: Path, header: dict[str, Any], count: int) -> None:
    """A skeleton's ``removed`` header describes the landed file it stands for: as many records."""
    removed = header.get("removed")
    if not isinstance(removed, dict) or removed.get("records") != count:
        report.problems.append(Problem(report.session, "skeleton", str(path),
                                       f"holds {count} record(s) but its removed header says "
                                       f"{removed.get('records') if isinstance(removed, dict) else 'nothing'}"))
    report.counts["removed"] += 1


def verify_session(root: Path, session: str) -> SessionReport:
    report = SessionReport(session)
    session_dir = root / session
    if not session_dir.is_dir():
        report.problems.append(Problem(session, "missing", str(session_dir), "no such session in the root"))
        return report
    seen_seq: dict[int, Path] = {}
    chains: dict[tuple[str, str], _Chain] = {}
    files = sorted(landed_files(session_dir))
    # a skeleton beside its landed file is a removal in progress: the landed file is read (retention)
    whole = {(seq, path.parent) for seq, path in files if path.suffix == ".sd"}
    for seq, path in files:
        name = parse_file_name(path.name)
        assert name is not None
        if name.skeleton and (seq, path.parent) in whole:
            continue
        if seq in seen_seq:
            report.problems.append(Problem(session, "seq twice", str(path), f"seq {seq} is also {seen_seq[seq]}"))
        seen_seq[seq] = path
        group, stream = _expected_place(root, path)
        check = FILE_CHECKS.get(name.kind)
        chain = None
        if check is None:
            chain = chains.get((group, name.kind))
            if chain is None:
                chain = chains[(group, name.kind)] = _Chain(report, session_dir, group, name.kind)
        try:
            with open_file(path) as landed:
                header = landed.header
                if check is not None:
                    rows = list(landed.raw_records())  # one file of a kind that needs it whole
                    check(report, path, rows)
                    count = len(rows)
                else:
                    assert chain is not None
                    count = 0
                    for count, record in enumerate(landed, start=1):
                        chain.feed(path, count, record)
        except SessionDataError as exc:
            report.problems.append(Problem(session, "damaged", str(path), exc.reason))
            continue
        disagree = [k for k, want in (("seq", seq), ("kind", name.kind), ("session", session))
                    if header.get(k) != want]
        if stream is not None and header.get("stream") not in (None, stream):
            disagree.append("stream")
        if disagree:
            report.problems.append(Problem(session, "misplaced", str(path),
                                           f"header {', '.join(disagree)} disagree(s) with where the file is"))
        if name.skeleton:
            _check_removed(report, path, header, count)
        report.files += 1
        report.records += count
        report.counts[name.kind] += 1
    for chain in chains.values():
        chain.finish()
    _check_round_chain(root, session, report)
    if report.repeats:
        report.notes.append(f"{report.repeats} record(s) landed more than once (a crash between "
                            f"landing and the cursor write); readers keep the first copy")
    return report
