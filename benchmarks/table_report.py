"""What ``pass.py --table`` measured: printed as a table with its notes, and written as the
generated part of the README's "Performance" section (``readme_block.py``).

The README's part says, in this order: when the run was made, on what machine (with how full its
file system was as the run began: a landing slows as the file system it lands on fills with
files, which no look at the machine before a run sees; ``benchmarks/README.md``, round 24) and by
what command; how quiet the machine was as each run started (``quiet.py``); the table; each
round's ratio, so a reader sees how far the rounds agree before trusting the median.
"""

from __future__ import annotations

import os
import textwrap
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial

import readme_block
from _common import table
from quiet import Quiet, Settling


@dataclass
class TableReport:
    """What ``--table`` measured: printed under each other, and the README's generated part."""

    #: the default number of workers on this machine for a pass whose workers would each land a
    #: group of sessions or fewer, and for one of more sessions (``default_workers``)
    workers: tuple[int, int]
    repeat: int
    rows: list[tuple[str, ...]] = field(default_factory=list)
    rounds: list[str] = field(default_factory=list)    #: each row's ratio round by round, a phrase each
    notes: list[str] = field(default_factory=list)     #: printed under the table
    after: list[str] = field(default_factory=list)     #: sentences the README's part ends with
    settlings: list[Settling] = field(default_factory=list)
    started: datetime = field(default_factory=lambda: datetime.now(UTC))
    #: the inodes in use and in all on the file system the roots land on, as the run began
    inodes: tuple[int, int] | None = None

    @property
    def heads(self) -> tuple[str, ...]:
        return ("corpus", "sessions", "MB", "floor CPU / wall (s)", "1 process CPU / wall (s)", "% of floor",
                "default workers CPU / wall (s)", "% of floor (wall)", "syscalls / session",
                "fsyncs / session", "target 1 process / workers")

    @property
    def quiet(self) -> bool:
        """Every run started with the machine quiet."""
        return all(s.quiet for s in self.settlings)

    def method(self) -> str:
        return (f"asz landing claude-code-local's transcripts (no parse, no metrics derivation) beside the floor "
                f"(read + orjson.loads + SHA-256 of every line, one process); CPU (user + system, workers "
                f"included) / wall seconds, medians of {self.repeat} rounds, each round the floor, one process "
                f"and the default workers ({self.workers_said()}) in rotation, each run once the machine "
                f"is quiet (a create's CPU, I/O and CPU pressure); % of the floor: the median of the per-round "
                f"ratios, the floor's CPU over asz's in one process and the floor's wall over asz's with workers; "
                f"system calls and fsyncs per session: one more landing in one process under strace -f -c")

    def workers_said(self) -> str:
        """The default workers on this machine, in words."""
        few, many = self.workers
        if few == many:
            return f"{many} on this machine"
        return f"on this machine {few} where each would land a group of sessions or fewer, {many} for more"

    def print(self) -> None:
        print(self.method())
        print(table(self.rows, self.heads))
        for note in self.notes:
            print(note)

    def readme(self, quiet: Quiet, command: str, ended: datetime) -> str:
        """The README's generated part: when, where and by what command; how quiet the runs
        started; the table; each round's ratio."""
        when = f"{self.started:%Y-%m-%d} from {self.started:%H:%M} to {ended:%H:%M} UTC"
        wrap = partial(textwrap.fill, width=100, break_long_words=False, break_on_hyphens=False)
        summary = quiet.summary(self.settlings)
        if not quiet.pressure:
            summary += " I/O and CPU pressure were not read (this kernel does not report them)."
        where = readme_block.machine(quiet.scratch)
        if self.inodes is not None:
            used, total = self.inodes
            where += f", its file system holding {used / 1e6:.1f} M inodes ({100 * used / total:.0f} %) as it began,"
        head = (f"{wrap(f'Regenerated on {when} on {where} by one run of')}\n"
                f"`{command}`.\n{wrap(summary)}")
        rounds = wrap(f"Each round's ratio, in order: {'; '.join(self.rounds)}. {' '.join(self.after)}".strip())
        return f"{head}\n\n{readme_block.markdown_table(self.heads, self.rows)}\n\n{rounds}\n"


def inodes_in_use(where: os.PathLike[str] | str) -> tuple[int, int] | None:
    """The inodes in use and in all on the file system holding ``where`` (``None``: it does not
    say, as some do not)."""
    try:
        st = os.statvfs(where)
    except OSError:
        return None
    return (st.f_files - st.f_ffree, st.f_files) if st.f_files else None
