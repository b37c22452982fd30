"""When each landed file's last record was made, noted per session so a pass need not read them.

Rule 2 of the policy needs the time of a session's last record, and a pass that retains runs it
for every session that still has content: reading every file each pass would cost a pass the
whole root. A landed file never changes, so what it says is read once and noted in
``<session>/retention.times``, one line per file: its name without extension, the latest
``time`` of its records and when it landed (``-`` for none), and a closing ``.``. The note is
derived: written in place with no fsync, a line a kill cut short (no ``.``) is not believed,
and a missing or unreadable note is read again from the files.
"""

from __future__ import annotations

import os
from pathlib import Path

from asz_core.root.confined import LinkRefused
from asz_core.root.durable import open_landed, read_bytes, write_note
from asz_core.sessiondata.errors import SessionDataError
from asz_core.sessiondata.times import parse_instant

__all__ = ["NOTE", "last_record_ns"]

NOTE = "retention.times"

#: a file's (latest record time, landing time), either ``None`` when not stated
_Times = tuple[int | None, int | None]


def _read_note(path: Path) -> dict[str, _Times]:
    try:
        text = read_bytes(path).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    out: dict[str, _Times] = {}
    for line in text.splitlines():
        fields = line.split(" ")
        if len(fields) != 4 or fields[3] != ".":
            continue  # cut short by a kill, or not ours
        try:
            out[fields[0]] = (None if fields[1] == "-" else int(fields[1]),
                              None if fields[2] == "-" else int(fields[2]))
        except ValueError:
            continue
    return out


def _times_of(path: Path) -> _Times | None:
    latest: int | None = None
    try:
        with open_landed(path) as reader:
            landed_at = parse_instant(reader.header.get("at"))
            for record in reader:
                when = parse_instant(record.time)
                if when is not None and (latest is None or when > latest):
                    latest = when
    except (SessionDataError, LinkRefused):
        return None  # verify reports it; it says nothing of the session's age
    return latest, landed_at


def last_record_ns(session_dir: Path, files: dict[int, dict[str, Path]], *, note: bool = True) -> int | None:
    """When the session's last record was made: the latest ``time`` of its records, else when
    its newest file landed; ``None`` when no file says."""
    known = _read_note(session_dir / NOTE) if note else {}
    learned = False
    latest: int | None = None
    landed_at: int | None = None
    for seq in sorted(files):
        path = files[seq].get("sd") or files[seq]["sk"]
        stem = path.name[: -len(path.suffix)]
        times = known.get(stem)
        if times is None:
            times = _times_of(path)
            if times is None:
                continue
            known[stem], learned = times, True
        if times[0] is not None and (latest is None or times[0] > latest):
            latest = times[0]
        if times[1] is not None and (landed_at is None or times[1] > landed_at):
            landed_at = times[1]
    if note and learned and os.access(session_dir, os.W_OK):
        write_note(session_dir / NOTE, "".join(
            f"{stem} {'-' if a is None else a} {'-' if b is None else b} .\n"
            for stem, (a, b) in sorted(known.items())).encode("ascii"))
    return latest if latest is not None else landed_at
