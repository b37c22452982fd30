"""What retention would remove from a root now, and why each other landed file stays.

Reads the root only. The rules are :mod:`asz_core.retention.policy`'s, applied in its order;
a file whose skeleton already stands beside it (a removal stopped midway) is always finished,
without deciding again, as the step that landed its skeleton had decided.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from asz_core.retention.policy import RetentionPolicy
from asz_core.retention.receipts import ACCEPTED, UNCONFIRMED, Receipt, Receipts
from asz_core.retention.times import last_record_ns
from asz_core.root.cursors import AppendCursor
from asz_core.root.durable import sha256_of
from asz_core.root.layout import KIND_PREFIX, parse_file_name
from asz_core.root.storage import StorageRoot, landed_files

__all__ = ["Candidate", "Plan", "plan_root", "session_files"]

#: why a landed file stays, as ``retain`` counts it
YOUNG = "young"                  #: the session's last record is not old enough (rule 2)
AFTER_CURSOR = "after its cursor"  #: rule 4
UNREADABLE = "unreadable"        #: it does not read: verify reports it, retention leaves it


@dataclass(frozen=True)
class Candidate:
    """A landed file retention removes now."""

    session: str
    seq: int
    landed: Path
    relpath: str
    size: int
    sha256: str
    receipt: Receipt
    finishing: bool  #: its skeleton is there already: a removal that stopped midway


@dataclass
class Plan:
    remove: list[Candidate] = field(default_factory=list)
    #: reason → how many landed files stay for it (``unconfirmed``, ``rejected``, ``young``, …)
    kept: Counter[str] = field(default_factory=Counter)
    kept_bytes: int = 0
    #: the earliest instant a file kept only for its age (rule 2) may go; ``None``: none waits
    next_ns: int | None = None

    def keep(self, reason: str, size: int) -> None:
        self.kept[reason] += 1
        self.kept_bytes += size


def session_files(session_dir: Path) -> dict[int, dict[str, Path]]:
    """seq → ``{"sd": landed, "sk": skeleton}``, whichever of the two are there."""
    out: dict[int, dict[str, Path]] = {}
    for seq, path in landed_files(session_dir):
        out.setdefault(seq, {})[path.suffix[1:]] = path
    return out


def _after_cursor(path: Path, seq: int) -> bool:
    """Rule 4: a cursor beside the file covers only files up to its ``last_seq``."""
    name = parse_file_name(path.name)
    if name is None:
        return False
    cursor = AppendCursor.load(path.parent / f"{KIND_PREFIX.get(name.kind, name.kind)}.cursor")
    return cursor is not None and cursor.last_seq < seq


def plan_root(root: Path, policy: RetentionPolicy, receipts: Receipts, now_ns: int,
              sessions: list[str] | None = None, *, note: bool = True) -> Plan:
    """``note=False`` (a dry run) writes nothing, not even the derived note of record times."""
    plan = Plan()
    for session in sessions if sessions is not None else StorageRoot(root).sessions():
        files = session_files(root / session)
        landed = {seq: kinds for seq, kinds in files.items() if "sd" in kinds}
        if not landed:
            continue  # nothing left to remove: every file is a skeleton already
        last = last_record_ns(root / session, files, note=note) if policy.on else None
        for seq in sorted(landed):
            path = landed[seq]["sd"]
            try:
                size = os.stat(path, follow_symlinks=False).st_size  # a link's own: never what it points at
            except FileNotFoundError:  # removed since it was listed
                continue
            finishing = "sk" in landed[seq]
            if not finishing and (last is None or not policy.old_enough(last, now_ns)):
                if policy.on:
                    plan.keep(YOUNG, size)
                    if last is not None and policy.after_ns is not None:
                        due = last + policy.after_ns
                        plan.next_ns = due if plan.next_ns is None else min(plan.next_ns, due)
                continue
            if not finishing and _after_cursor(path, seq):
                plan.keep(AFTER_CURSOR, size)
                continue
            relpath = path.relative_to(root).as_posix()
            if not finishing and not policy.local_only and not receipts.receiver:
                plan.keep(UNCONFIRMED, size)  # no receiver: nothing to hash the file for
                continue
            try:
                sha = sha256_of(path)
            except OSError:  # a link planted at its name (LinkRefused), or removed meanwhile
                plan.keep(UNREADABLE, size)
                continue
            receipt = receipts.receipt(relpath, sha)
            if not finishing and receipt != ACCEPTED and not policy.local_only:
                plan.keep(receipt, size)
                continue
            plan.remove.append(Candidate(session, seq, path, relpath, size, sha, receipt, finishing))
    return plan
