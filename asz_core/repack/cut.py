"""Re-cutting a root's landed files to a new ``max_delta_bytes``, in a new root.

Every record keeps its landed line byte for byte, and its place: the records of one stream (or
run, or the provider bodies) and kind are read in seq order and written in that order into new
files, each as large as the budget allows (a record larger than the budget gets a file of its
own, whole). The rules, in order:

1. ``DEST`` is new or empty, so nothing of another root is mixed in (``RepackRefused``).
2. A run of files is merged only while their headers agree in everything but ``seq`` and ``at``
   (the same source, adapter and dialect); a header that differs starts a new file.
3. New files are numbered from 1 in the order the old ones had, and say when the repack wrote
   them (``at``). References between records are by id and digest, never by file and row, so
   nothing inside a record needs to change.
4. A skeleton (``.sk``) is copied whole under its own name and seq: its header describes the
   landed file it stands for. A session where a landed file comes before a skeleton of the same
   stream is refused (retention has not finished it); the other sessions go on.
5. Each cursor is carried with its ``last_seq`` moved to the new file that holds the last record
   of the old one, after those files are durable, so collection continues into ``DEST``.
6. The session's id index holds ids only, no file positions: it is carried as it is.
7. The round chains are built again by a parse over ``DEST``'s landed files: a round binds the
   files it read by digest and names records by file and row, and both changed, so the source's
   rounds cannot be carried; the new chain describes the same conversation at the new positions.
   A session whose parse is refused keeps its records, and its row says why.
8. Nothing is followed through a link in the source root: a session with a link anywhere in its
   directory is refused, naming it, before anything of it is written (a stream or a cursor
   behind it would otherwise be left out of ``DEST``, or read from outside the root).
Root-level state (``push.state``, the settled tables, the provider's ``seen`` table) is not
carried: it names old paths, and each is derived again, or starts afresh for a new root.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from asz_core.assembly.parse import DEFAULT_MAX_ROUND_BYTES, parse_root
from asz_core.retention.plan import session_files
from asz_core.root import confined
from asz_core.root.cursors import format_pairs, parse_pairs
from asz_core.root.durable import make_dirs, open_landed, read_bytes, write_replace, write_whole
from asz_core.root.landing import LandingFile
from asz_core.root.storage import SessionHandle, StorageRoot
from asz_core.sessiondata.errors import SessionDataError
from asz_core.sessiondata.model import Header

__all__ = ["RepackRefused", "SessionRepack", "repack_root"]

_CLOSING_ROOM = 128  #: the closing line, with room to spare
_NOT_IDENTITY = ("h", "schema", "seq", "at")


class RepackRefused(Exception):
    """``repack`` cannot start, or cannot repack one session; the message says what to do."""


@dataclass
class SessionRepack:
    """One row of ``repack``'s report."""

    session: str
    files_in: int = 0
    files_out: int = 0
    records: int = 0
    bytes: int = 0  #: of the records' landed lines, each with its newline
    rounds: int = 0  #: of the chain built again in ``DEST``
    refused: str = ""


def _header(head: dict[str, Any]) -> Header:
    return Header(kind=head["kind"], session=head["session"], src=head["src"], dialect=head["dialect"],
                  adapter=str(head.get("adapter", "")), stream=head.get("stream"), batch=head.get("batch"),
                  extra={k: v for k, v in head.items() if k not in (
                      *_NOT_IDENTITY, "kind", "adapter", "dialect", "src", "session", "stream", "batch")})


def _identity(head: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in head.items() if k not in _NOT_IDENTITY}


class _Chain:
    """The open output file of one stream and kind."""

    def __init__(self, subdir: str) -> None:
        self.subdir = subdir
        self.identity: dict[str, Any] | None = None
        self.landing: LandingFile | None = None
        self.last_seq = 0  #: the new file the last record written went into


def _check_order(files: dict[int, dict[str, Path]]) -> str:
    """Rule 4: why the session cannot be repacked now, or ``""``."""
    landed_before: set[Path] = set()
    for seq in sorted(files):
        kinds = files[seq]
        if "sd" in kinds:
            landed_before.add(kinds["sd"].parent)
        elif kinds["sk"].parent in landed_before:
            return (f"{kinds['sk'].parent}: a landed file comes before a skeleton; run "
                    f"`asz-pipeline retain` to finish the removal, then repack")
    return ""


def repack_root(source: Path, dest: Path, budget: Callable[[dict[str, Any]], int], now_ns: int,
                sessions: list[str] | None = None, *,
                max_round_bytes: int = DEFAULT_MAX_ROUND_BYTES) -> list[SessionRepack]:
    """Repack ``sessions`` (all) of ``source`` into ``dest``; ``budget(header)`` is the largest
    file for the records of a file with that header, ``max_round_bytes`` the parse's."""
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise RepackRefused(f"{dest} is not empty; repack writes only into a new or empty directory")
    if dest.resolve() == source.resolve():
        raise RepackRefused("DEST is the root itself; name a new directory")
    confined.enter(source)  # rule 8, for a caller that has not entered it (the CLI has)
    store = StorageRoot(dest, pass_started_ns=now_ns)
    store.ensure()
    rows = []
    for session in sessions if sessions is not None else list(StorageRoot(source).sessions()):
        rows.append(_repack_session(source / session, store, session, budget))
    _rebuild_chains(dest, rows, max_round_bytes)
    return rows


def _rebuild_chains(dest: Path, rows: list[SessionRepack], max_round_bytes: int) -> None:
    """Rule 7: parse every repacked session into a new chain in ``dest``."""
    by_session = {r.session: r for r in rows if not r.refused}
    for parsed in parse_root(dest, sorted(by_session), max_round_bytes=max_round_bytes):
        row = by_session[parsed.session]
        row.rounds = len(parsed.rounds)
        if parsed.outcome:
            row.refused = (f"its records are in DEST but its chain is not: {parsed.message}; "
                           f"run `asz-pipeline parse` there once the cause is fixed")


def _repack_session(session_dir: Path, store: StorageRoot, session: str,
                    budget: Callable[[dict[str, Any]], int]) -> SessionRepack:
    row = SessionRepack(session)
    try:
        tree = confined.walk(session_dir)  # rule 8: every name of it, before anything is written
    except confined.LinkRefused as exc:
        row.refused = f"{exc}; nothing of the session was repacked"
        return row
    if not tree:
        row.refused = f"no session {session} in the root"
        return row
    listed = [Path(directory) / name for directory, _, names in tree for name in names]  # its files
    files = session_files(session_dir)
    row.refused = _check_order(files)
    if row.refused:
        return row
    row.files_in = len(files)
    for kinds in files.values():  # rule 4: skeletons first, so new files number above them
        skeleton = kinds.get("sk")
        if skeleton is not None and "sd" not in kinds:
            target = store.path / session / skeleton.relative_to(session_dir)
            make_dirs(target.parent)  # through the root's writer, which knows a new session's names
            fd = confined.open_path(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
            try:
                write_whole(fd, read_bytes(skeleton))
            finally:
                os.close(fd)
            row.files_out += 1
            row.records += sum(1 for _ in open_landed(target))
    new_seq: dict[int, int] = {}  # old seq → the new file holding its last record
    with store.open_session(session) as handle:
        chains: dict[tuple[str, str], _Chain] = {}
        for seq in sorted(files):
            landed = files[seq].get("sd")
            if landed is None:
                new_seq[seq] = seq
                continue
            subdir = landed.parent.relative_to(session_dir).as_posix()
            try:
                new_seq[seq] = _carry(handle, chains, subdir, landed, budget, row)
            except SessionDataError as exc:
                raise RepackRefused(f"{landed} does not read ({exc.reason}); run `asz-pipeline "
                                    f"verify`, and repack once it passes") from None
        for chain in chains.values():
            if chain.landing is not None:
                _commit(handle, chain, row)
        handle.sync(created=True)
        _carry_cursors([path for path in listed if path.name.endswith(".cursor")], session_dir,
                       store.path / session, new_seq)
    index = session_dir / "index" / "ids"
    if index in listed:  # rule 6
        target = store.path / session / "index" / "ids"
        make_dirs(target.parent)  # through the root's writer, which knows a new session's names
        write_replace(target, read_bytes(index))
    return row


def _carry(handle: SessionHandle, chains: dict[tuple[str, str], _Chain], subdir: str, landed: Path,
           budget: Callable[[dict[str, Any]], int], row: SessionRepack) -> int:
    """Write the records of ``landed`` into its chain's files; the seq of the last one."""
    with open_landed(landed) as reader:
        head = reader.header
        limit = budget(head)
        chain = chains.setdefault((subdir, head["kind"]), _Chain(subdir))
        if chain.landing is not None and chain.identity != _identity(head):  # rule 2
            _commit(handle, chain, row)
        chain.identity = _identity(head)
        for line, record in reader.raw_records():
            if (chain.landing is not None and chain.landing.writer.records
                    and chain.landing.writer.size + len(line) + 1 + _CLOSING_ROOM > limit):
                _commit(handle, chain, row)
            if chain.landing is None:
                chain.landing = handle.begin(subdir, _header(head))
            chain.landing.write(line, record.ord, record.off, record.bytes, record.time)
            chain.last_seq = chain.landing.header.seq
            row.records += 1
            row.bytes += len(line) + 1
    return chain.last_seq


def _commit(handle: SessionHandle, chain: _Chain, row: SessionRepack) -> None:
    assert chain.landing is not None
    handle.commit(chain.landing)
    chain.landing = None
    row.files_out += 1


def _carry_cursors(cursors: list[Path], session_dir: Path, target_dir: Path, new_seq: dict[int, int]) -> None:
    """Rule 5: every cursor of the session, its ``last_seq`` moved to the new numbering."""
    for path in cursors:
        pairs = parse_pairs(read_bytes(path).decode("utf-8"))
        moved = [(k, str(new_seq.get(int(v), int(v))) if k == "last_seq" and v.isdigit() else v)
                 for k, v in pairs]
        target = target_dir / path.relative_to(session_dir)
        make_dirs(target.parent)  # through the root's writer, which knows a new session's names
        write_replace(target, format_pairs(moved))
