"""``verify``: read a root by the rules alone, with no source files, and report every problem.

For each session: every landed file read strictly (closing line, count, digest, every record's
types); the name, header and directory agreeing; no seq used twice; per stream (or run) and
kind, ``ord`` running 1, 2, 3 and ``off`` chaining as ``off + bytes + 1`` (``ord gap`` /
``byte gap``), the records reaching their append cursor (``end gap``) and those of the files
the cursor covers not running past it (``overshoot``); a cursor (or the provider-body summary,
or ``session.state`` of a session with no file left) that says a file landed where none is left
(``gone``); a link where the root's own files or
directories belong (``link``). A record landed twice (a crash between landing and the cursor)
is reported as a repeat, not as damage. Checks that belong to one kind of file (rebuilding
provider bodies) come from :data:`FILE_CHECKS`. What an adapter keeps of its own (a table of
what it landed) only the adapter can read: given the host, verify asks each adapter
(``asz_verify``) and files what it finds under the session it names.

Verify takes no lock, so a pass may land while it reads. What it relies on of the landing is its
contract alone: a file is durable before it takes its name, and a cursor moves only after the
files it covers have. So:

1. Each session's cursors (and summary, and ``session.state``) are read *before* its files are
   listed. A file a cursor read first covers had its name before the listing began, and a
   directory listing returns every name that is neither added nor removed while it runs: such
   a file is always listed, and a check that fails on it is damage.
2. A file past its cursor may have taken its name while the listing ran, and a listing may or may
   not return such a name (on ext4 a name whose hash sorts before where the listing has reached
   is skipped), nor does the contract say in which order a pass names the files of one landing.
   So a gap in the ord or byte chain at a file past the cursor read first is *unsettled*.
3. A session in which a look finds any problem is read again (cursors, listing, every check),
   up to :data:`LOOKS` times, and what a look found is reported once the next look saw the same
   cursors and the same files: no pass landed between them, so the listing missed nothing and
   what they saw is what is there. Retention, which lands a skeleton and then removes the
   landed file, changes what a look sees the same way (a file listed and removed before it
   was read is one more unsettled problem, never a traceback). A session that kept changing
   through every look is reported as its last look saw it, less its unsettled problems, with a
   note to run verify again. A session with no problem is read once.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from asz_core.providerbody.check import KIND as PROVIDER_BODY
from asz_core.providerbody.check import check_provider_body_file
from asz_core.root import confined
from asz_core.root.cursors import AppendCursor, CursorUnreadable
from asz_core.root.durable import open_landed, read_small
from asz_core.root.layout import CURSOR_SUFFIX, PLACE_GROUPS, PREFIX_KIND, parse_file_name
from asz_core.root.storage import landed_files, landed_files_in, noted_next_seq
from asz_core.session_report import FileCheck, Problem, SessionReport
from asz_core.sessiondata.errors import SessionDataError
from asz_core.sessiondata.model import Record

if TYPE_CHECKING:
    from asz_core.host import PluginHost

__all__ = ["FILE_CHECKS", "LOOKS", "Problem", "SessionReport", "verify_root", "verify_session"]


#: Checks for the records of one file kind, each from the module that knows that kind, so verify
#: itself stays generic: listed here, not registered by importing a module.
FILE_CHECKS: dict[str, FileCheck] = {PROVIDER_BODY: check_provider_body_file}

#: How many times a session with problems is read while passes change it before its unsettled
#: problems are left unreported (see the module's note).
LOOKS = 5


def verify_root(root: Path, sessions: Iterable[str] | None = None,
                progress: Callable[[int, int], None] | None = None,
                host: PluginHost | None = None) -> list[SessionReport]:
    """Every session's report (or those named); ``progress(done, total)`` after each. With
    ``host``, what its adapters find of their own tables (``asz_verify``) joins the report of
    the session it names (a session whose directory is gone gets a report of its own)."""
    confined.enter(root)
    names = list(sessions) if sessions is not None else sorted(
        entry.name for entry in confined.scandir(root)
        if not entry.name.startswith(("_", ".")) and (entry.is_dir or entry.is_link))  # a link is reported
    reports = []
    for name in names:
        reports.append(verify_session(root, name))
        if progress is not None:
            progress(len(reports), len(names))
    if host is not None:
        _add_adapter_problems(reports, host.verify(root, frozenset(names) if sessions is not None else None))
    return reports


def _add_adapter_problems(reports: list[SessionReport], problems: list[Problem]) -> None:
    by_session = {report.session: report for report in reports}
    for problem in problems:
        report = by_session.get(problem.session)
        if report is None:
            report = by_session[problem.session] = SessionReport(problem.session)
            reports.append(report)
        if problem.kind == "gone":  # said once: by what names the files, rather than by the seq
            report.problems = [p for p in report.problems
                               if not (p.kind == "gone" and p.path.endswith("session.state"))]
        report.problems.append(problem)


@dataclass(frozen=True)
class _CursorSays:
    """What a cursor read before the files were listed says landed."""

    path: Path
    last_seq: int
    ord: int
    offset: int


def _read_cursors(report: SessionReport, session_dir: Path) -> dict[tuple[str, str], _CursorSays]:
    """Every cursor in the session's ``streams/*`` and ``runs/*``, by ``(group, kind)``."""
    out: dict[tuple[str, str], _CursorSays] = {}
    for group in PLACE_GROUPS:
        try:
            places = sorted(confined.listdir(session_dir / group))
        except (FileNotFoundError, NotADirectoryError):
            continue
        except confined.LinkRefused as exc:
            report.problems.append(Problem(report.session, "link", str(session_dir / group), str(exc)))
            continue
        for place in places:
            directory = session_dir / group / place
            try:
                entries = confined.scandir(directory)
            except (FileNotFoundError, NotADirectoryError):
                continue
            except confined.LinkRefused as exc:
                report.problems.append(Problem(report.session, "link", str(directory), str(exc)))
                continue
            for entry in sorted(entries, key=lambda e: e.name):
                if not entry.name.endswith(CURSOR_SUFFIX) or entry.name.startswith("."):
                    continue
                path = directory / entry.name
                try:
                    cursor = AppendCursor.read(path)
                except CursorUnreadable as exc:
                    report.notes.append(f"{path} does not read ({exc.reason}); the next pass rebuilds "
                                        f"it from the landed files, and its stream is not checked against it")
                    continue
                if cursor is None:
                    continue
                prefix = entry.name[: -len(CURSOR_SUFFIX)]
                out[(f"{group}/{place}", PREFIX_KIND.get(prefix, prefix))] = _CursorSays(
                    path, cursor.last_seq, cursor.ord, cursor.offset)
    return out


def _summary_files(session_dir: Path) -> list[str]:
    """The ``provider_body`` file names the session's provider-body summary says landed."""
    try:
        data = read_small(session_dir / "index" / "provider_bodies")  # providerbody.summary's
        files = orjson.loads(data)["files"] if data is not None else []
        return [str(f[0]) for f in files if isinstance(f, list) and f and isinstance(f[0], str)]
    except (OSError, ValueError, KeyError, TypeError):
        return []  # derived and disposable: a summary that does not read says nothing


def _check_round_chain(root: Path, session: str, report: SessionReport) -> None:
    """The session's round chain (its conversation is the session): digests, links, seq
    contiguity, and every landed file a round consumed (a lost one named by round and seq)."""
    from asz_core.assembly.chaincheck import check_chain

    for problem in check_chain(root, session):
        report.problems.append(Problem(session, problem.kind, problem.path, problem.message))


def _expected_place(root: Path, path: Path) -> tuple[str, str | None]:
    """The group (``streams/x``, ``runs/y``, ``provider_body``) and stream a path implies."""
    rel = path.relative_to(root).parts
    if len(rel) == 4 and rel[1] in PLACE_GROUPS:
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
        #: gaps at files past the cursor read first: a landing in progress, or damage
        self.unsettled: list[Problem] = []
        self.last_path: Path | None = None
        #: the furthest record of the files the cursor names as landed (seq ≤ its ``last_seq``)
        self.covered_ord: int | None = None
        self.covered_end = 0
        self.covered_path: Path | None = None

    def feed(self, path: Path, row: int, record: Record, covered: bool = False) -> None:
        self.last_path = path
        if covered and (self.covered_ord is None or record.ord > self.covered_ord):
            self.covered_ord, self.covered_path = record.ord, path
            self.covered_end = max(self.covered_end, record.off + record.bytes + 1)
        if row > 1 or record.ord != 1 or record.off != 0:
            self.snapshot = False
        if record.ord < self.want_ord and self.seen.get(record.ord) == (record.off, record.sha):
            self.report.repeats += 1
            return
        found = self.pending if covered else self.unsettled
        if record.ord != self.want_ord:
            found.append(Problem(self.report.session, "ord gap", str(path),
                                 f"row {row}: ord {record.ord}, expected {self.want_ord}"))
        if record.off != self.want_off:
            found.append(Problem(self.report.session, "byte gap", str(path),
                                 f"row {row}: off {record.off}, expected {self.want_off}"))
        self.seen[record.ord] = (record.off, record.sha)
        self.want_ord, self.want_off = record.ord + 1, record.off + record.bytes + 1

    def finish(self, cursor: _CursorSays | None) -> list[Problem]:
        """Report what the chain found; return the unsettled gaps (reported too)."""
        if cursor is not None and cursor.offset and self.covered_ord is not None and (
                self.covered_ord > cursor.ord or self.covered_end > cursor.offset):
            self.report.problems.append(Problem(
                self.report.session, "overshoot", str(self.covered_path),
                f"the files up to seq {cursor.last_seq} reach ord {self.covered_ord} at byte "
                f"{self.covered_end}, past the cursor's ord {cursor.ord} at byte {cursor.offset}"))
        if self.snapshot:
            return []
        self.report.problems.extend(self.pending)
        self.report.problems.extend(self.unsettled)
        if cursor is not None and cursor.offset and (
                self.want_ord - 1 < cursor.ord or self.want_off < cursor.offset):
            self.report.problems.append(Problem(
                self.report.session, "end gap", str(self.last_path or self.session_dir / self.group),
                f"records reach ord {self.want_ord - 1} at byte {self.want_off}; "
                f"the cursor says ord {cursor.ord} at byte {cursor.offset}"))
        return self.unsettled


def _any_file(directory: Path, kind: str) -> bool:
    """Whether ``directory`` holds a landed file (or skeleton) of ``kind``."""
    for _, path in landed_files_in(directory):
        parsed = parse_file_name(path.name)
        if parsed is not None and parsed.kind == kind:
            return True
    return False


def _check_alone(report: SessionReport, path: Path, rows: list[tuple[bytes, Record]]) -> None:
    """A record of a kind checked whole (a provider body) is a document of its own: ``ord`` 1
    at ``off`` 0, as every whole document is."""
    for row, (_, record) in enumerate(rows, start=1):
        if record.ord != 1 or record.off != 0:
            report.problems.append(Problem(report.session, "ord gap", str(path),
                                           f"row {row}: ord {record.ord} at off {record.off}; a whole "
                                           f"document is ord 1 at off 0"))


def _check_removed(report: SessionReport, path: Path, header: dict[str, Any], count: int) -> None:
    """A skeleton's ``removed`` header describes the landed file it stands for: as many records."""
    removed = header.get("removed")
    if not isinstance(removed, dict) or removed.get("records") != count:
        report.problems.append(Problem(report.session, "skeleton", str(path),
                                       f"holds {count} record(s) but its removed header says "
                                       f"{removed.get('records') if isinstance(removed, dict) else 'nothing'}"))
    report.counts["removed"] += 1


def verify_session(root: Path, session: str) -> SessionReport:
    """The session's report, read again while a pass lands in it (the module's note)."""
    look = _look(root, session)
    for _ in range(LOOKS - 1):
        if not look.report.problems:
            return look.report
        again = _look(root, session)
        if again.saw == look.saw:
            return again.report  # nothing landed or went between the two: its problems are there
        look = again
    if look.unsettled:
        report = look.report
        report.problems = [p for p in report.problems if p not in look.unsettled]
        report.notes.append(f"passes kept changing the session through {LOOKS} reads of it: "
                            f"{len(look.unsettled)} problem(s) in files landed past their cursor or removed "
                            f"meanwhile were not settled and are not reported; run verify again when no "
                            f"pass runs")
    return look.report


@dataclass
class _Look:
    """One reading of a session: its report, the problems in it a landing in progress could
    cause, and what it read first (cursors, summary, state) and listed, to tell whether anything
    changed between two."""

    report: SessionReport
    unsettled: list[Problem] = field(default_factory=list)
    saw: tuple[object, ...] = ()


def _look(root: Path, session: str) -> _Look:
    report = SessionReport(session)
    session_dir = root / session
    confined.enter(root)
    if os.path.islink(session_dir):
        report.problems.append(Problem(session, "link", str(session_dir),
                                       "the session is a link; a pass never follows it: remove the link"))
        return _Look(report)
    if not session_dir.is_dir():
        report.problems.append(Problem(session, "missing", str(session_dir), "no such session in the root"))
        return _Look(report)
    # before the files are listed (see the module's note on a pass landing meanwhile)
    cursors = _read_cursors(report, session_dir)
    summarized = _summary_files(session_dir)
    noted_seq = noted_next_seq(session_dir) or 0
    seen_seq: dict[int, Path] = {}
    chains: dict[tuple[str, str], _Chain] = {}
    links: list[Path] = []
    files = sorted(landed_files(session_dir, links))
    for link in sorted(links):  # in a file directory of the root: a landed file, or a temporary, moved out
        report.problems.append(Problem(session, "link", str(link), str(confined.LinkRefused(link))))
    look = _Look(report, saw=(sorted(cursors.items()), summarized, noted_seq, files))
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
            with open_landed(path) as landed:
                header = landed.header
                if check is not None:
                    rows = list(landed.raw_records())  # one file of a kind that needs it whole
                    _check_alone(report, path, rows)
                    check(report, path, rows)
                    count = len(rows)
                else:
                    assert chain is not None
                    says = cursors.get((group, name.kind))
                    covered = says is not None and seq <= says.last_seq
                    count = 0
                    for count, record in enumerate(landed, start=1):
                        chain.feed(path, count, record, covered)
        except SessionDataError as exc:
            report.problems.append(Problem(session, "damaged", str(path), exc.reason))
            continue
        except confined.LinkRefused as exc:  # planted since the listing, or at a name it was given
            report.problems.append(Problem(session, "link", str(path), str(exc)))
            continue
        except FileNotFoundError:  # removed since it was listed (retention): the session changed
            look.unsettled.append(Problem(session, "gone", str(path), "listed, then removed before it was read"))
            report.problems.append(look.unsettled[-1])
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
    for key, chain in chains.items():
        look.unsettled.extend(chain.finish(cursors.get(key)))
    for (group, kind), says in cursors.items():
        if says.last_seq and (group, kind) not in chains and not _any_file(session_dir / group, kind):
            report.problems.append(Problem(
                session, "gone", str(says.path),
                f"the cursor says {kind} files landed here (the last seq {says.last_seq}); none is left"))
    present = {path.name for _, path in landed_files(session_dir)} if summarized else set()
    for file in summarized:
        if file not in present and file[:-3] + ".sk" not in present:
            report.problems.append(Problem(
                session, "gone", str(session_dir / "provider_body" / file),
                "the provider-body summary says this file landed; it is not there"))
    if noted_seq > 1 and not seen_seq and not any(p.kind in ("gone", "link") for p in report.problems):
        report.problems.append(Problem(  # said once: by a cursor, the summary or a link, when they can
            session, "gone", str(session_dir / "session.state"),
            f"session.state says files up to seq {noted_seq - 1} landed; none is left"))
    _check_round_chain(root, session, report)
    if report.repeats:
        report.notes.append(f"{report.repeats} record(s) landed more than once (a crash between "
                            f"landing and the cursor write); readers keep the first copy")
    return look
