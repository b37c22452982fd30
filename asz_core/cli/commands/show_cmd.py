"""``asz-pipeline show SESSION ID``: the collected record behind an id, as upstream's ``asz show``.

What a step is based on, read from the root alone. ``ID`` is a tool-use id or a record id:

1. The session is one of the root's: a name that cannot be a session, one with no directory, or
   one whose directory is a link, is an **unknown session**.
2. Every landed file of the session is read whole by the strict reader, in seq order, each
   opened without following a link; a file that does not read to a good closing line (or is a
   link) is **unreadable**, and nothing of it is printed, since a record is trusted only once
   its file's digest is.
3. A tool-use id names every part that carries it, the call and its result, each printed; else
   a record id names the first record landed with it (a later copy is a repeat, and is counted).
   An id none of the readable records carries is **not found**.
4. Each record is printed as it landed: where (seq, row, file), its source line's place (ord,
   off, sha) and its landed line, cut at :data:`SHOWN` bytes unless ``--full``. The session's
   content is printed only here, where the user named the record; no outcome prints any.

Every outcome other than a record found in a wholly readable session ends with exit 1, named in
its message: ``unknown session``, ``not found``, ``unreadable`` (the file and why; with the id
found elsewhere too, since the unreadable file may carry it as well).
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, cast

from asz_core.cli.app import EXIT_FAILED, EXIT_OK, App
from asz_core.cli.rootcheck import require_root

__all__ = ["SHOWN", "add"]

#: how much of a landed line is printed without ``--full`` (upstream's cut)
SHOWN = 600


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("show", help="print the collected record behind a record id or a tool-use id",
                       description="Print the landed record a step is based on: every part carrying "
                                   "the tool-use ID (its call and its result), or the record with the "
                                   "record ID. Reads only the root, every file strictly and whole; "
                                   "exit 1 for an unknown session, an id no record carries, or a file "
                                   "that cannot be read.")
    p.add_argument("session", metavar="SESSION")
    p.add_argument("id", metavar="ID", help="a tool-use id or a record id")
    p.add_argument("--full", action="store_true", help=f"print whole lines, not their first {SHOWN} bytes")
    p.set_defaults(func=run)


@dataclass(frozen=True)
class Found:
    """One landed record the id names: a whole record (``block`` None) or one of its parts."""

    seq: int
    row: int
    rel: str                #: the file, relative to the root
    lane: str               #: ``stream=NAME``, ``run=NAME`` or ``provider_body``
    line: bytes             #: the record as it landed
    ord: int
    off: int
    sha: str
    block: int | None = None
    role: str = "record"    #: ``tool_use``, ``tool_result`` or ``record``


@dataclass
class Search:
    tool: list[Found] = field(default_factory=list)
    records: list[Found] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # (file, why)


def _session_dir(root: Path, session: str) -> Path | None:
    """The session's directory, or ``None`` when there is no such session (nothing followed)."""
    from asz_core.root import confined
    from asz_core.root.layout import RefusedId, check_id

    try:
        check_id(session, "session id")
    except RefusedId:
        return None
    if session.startswith(("_", ".")):
        return None
    directory = root / session
    try:
        os.close(confined.open_dir(directory))
    except OSError:  # LinkRefused is one
        return None
    return directory


def _search(session_dir: Path, want: str) -> Search:
    from asz_core.root.durable import open_landed
    from asz_core.sessiondata.errors import SessionDataError
    from asz_core.view.files import session_files

    out = Search()
    for lf in session_files(session_dir):
        lane = f"{lf.group[:-1]}={_safe(lf.owner)}" if lf.owner is not None else lf.group
        tool: list[Found] = []
        records: list[Found] = []
        try:
            with open_landed(lf.path) as landed:
                for row, (line, record) in enumerate(landed.raw_records(), start=1):
                    at = Found(lf.seq, row, lf.rel, lane, line, record.ord, record.off, record.sha or "")
                    for block, part in enumerate(record.parts):
                        if part.k == "call" and part.id == want:
                            tool.append(replace(at, block=block, role="tool_use"))
                        elif part.k == "result" and part.of == want:
                            tool.append(replace(at, block=block, role="tool_result"))
                    if record.id == want:
                        records.append(at)
        except (SessionDataError, OSError) as exc:  # a link met on the way is an OSError too
            out.unreadable.append((lf.rel, str(exc)))
            continue
        out.tool += tool
        out.records += records
    return out


def _safe(text: str) -> str:
    """A name read from the root, printed so no control character reaches the terminal."""
    return json.dumps(text) if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text) else text


def _cut(line: bytes, full: bool) -> tuple[bytes, bool]:
    if full or len(line) <= SHOWN:
        return line, False
    end = SHOWN
    while end > 0 and 0x80 <= line[end] < 0xC0:  # on a character's start
        end -= 1
    return line[:end], True


def _print(app: App, f: Found, full: bool) -> None:
    out = app.out
    print(f"   index : seq={f.seq} row={f.row}", file=out)
    print(f"   file  : {_safe(f.rel)}", file=out)
    print(f"   source: ord={f.ord} off={f.off} sha={_safe(f.sha)}   (from the record's envelope)", file=out)
    shown, cut = _cut(f.line, full)
    print(f"   payload ({len(f.line)} bytes{', truncated' if cut else ''}):", file=out)
    raw = cast(IO[bytes] | None, getattr(out, "buffer", None))
    tail = "…" if cut else ""
    if raw is None:
        out.write(f"   {shown.decode('utf-8', 'replace')}{tail}\n\n")
    else:
        out.flush()
        raw.write(b"   " + shown + tail.encode() + b"\n\n")
        raw.flush()


def run(args: argparse.Namespace, app: App) -> int:
    root = app.config.root
    require_root(root, "show")  # entered as the configuration resolved it (App.config)
    session_dir = _session_dir(root, args.session)
    if session_dir is None:
        print(f"show: unknown session {_safe(args.session)} in {root}; `asz-pipeline view` lists the "
              f"sessions there", file=app.err)
        return EXIT_FAILED
    found = _search(session_dir, args.id)
    want = _safe(args.id)
    if found.tool:
        print(f"tool-use id {want} resolves to {len(found.tool)} block(s)\n", file=app.out)
        for f in found.tool:
            print(f"── {f.role}  block {f.block} of record  {f.lane}", file=app.out)
            _print(app, f, args.full)
    elif found.records:
        first = found.records[0]
        print(f"record id {want}  {first.lane}", file=app.out)
        _print(app, first, args.full)
        if len(found.records) > 1:
            print(f"   (landed {len(found.records)} times; the first is shown, the others are repeats)",
                  file=app.out)
    for rel, why in found.unreadable:
        print(f"show: unreadable: {_safe(rel)}: {why}; nothing of it is shown (`asz-pipeline verify "
              f"{args.session}` says more)", file=app.err)
    if found.unreadable:
        if not (found.tool or found.records):
            print(f"show: {want} is in none of the readable files of session {args.session}; "
                  f"{len(found.unreadable)} file(s) could not be read", file=app.err)
        return EXIT_FAILED
    if not (found.tool or found.records):
        print(f"show: not found: no record of session {args.session} carries {want} as a record id or a "
              f"tool-use id (`asz-pipeline view {args.session}` lists its steps)", file=app.err)
        return EXIT_FAILED
    return EXIT_OK

