"""What ``verify`` finds in one session: its problems, counts and notes.

Apart from :mod:`asz_core.verify` so that the checks of one kind of file (provider bodies,
:mod:`asz_core.providerbody.check`) can fill a report without importing verify, which lists them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asz_core.sessiondata.model import Record

__all__ = ["FileCheck", "Problem", "SessionReport"]


@dataclass(frozen=True)
class Problem:
    """One thing wrong in a session: ``kind`` names it (``damaged``, ``ord gap``, ...)."""

    session: str
    kind: str
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.kind}: {self.message}"


@dataclass
class SessionReport:
    session: str
    files: int = 0
    records: int = 0
    repeats: int = 0           #: records landed more than once (not damage)
    notes: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    #: what a file check (``FileCheck``) keeps from one file of the session to the next (a check
    #: whose records refer to earlier files of the session, such as provider bodies)
    state: dict[str, Any] = field(default_factory=dict)


#: A check of the records of one file kind: ``check(report, path, records)``.
FileCheck = Callable[[SessionReport, Path, list[tuple[bytes, Record]]], None]
