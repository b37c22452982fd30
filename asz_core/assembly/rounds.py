"""Several sessions' rounds installed together: the parse of every session a pass landed.

The parse's step 7 (publish the round, then save the state) made for a group of sessions, as
the landing's group commit makes its steps (:mod:`~asz_core.root.group`). The rules, and the code
below in the same order:

1. A session's rounds are staged under its chain's lock (:meth:`Chain.stage`), and the group
   holds the lock from then on, with the fold the rounds make and the session's result. A
   session that staged nothing has its lock released at once.
2. A second round of a chain whose first is staged installs the group first: a round is staged
   only on a head the chain's listing shows.
3. The group installs every staged round (:class:`~asz_core.root.writeonce.WriteOnceGroup`: one
   ``syncfs`` for their bytes, the renames, one for their names) once it holds
   :data:`GROUP_SESSIONS` sessions and when the parse ends; then each chain's state (a cache) is
   saved and its lock released. Only after that does the caller settle the parse's owed log, so
   a kill at any step leaves the session owed, and the next parse, which sweeps the chain's
   temporary files under its lock, writes the round again.
4. A round that was not installed makes its session ``refused`` (parse again), keeping the
   rounds before it that were; its chain's state is left as it was.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from asz_core.assembly.chain import ROUND_STEPS, Chain
from asz_core.assembly.flow import Fold
from asz_core.root.locks import FileLock
from asz_core.root.writeonce import Staged, WriteOnceGroup

if TYPE_CHECKING:
    from asz_core.assembly.parse import SessionParse

__all__ = ["GROUP_SESSIONS", "HeldChain", "RoundGroup"]

#: sessions whose rounds wait before the group installs them: two ``syncfs`` shared by this
#: many, and as many chain locks held open meanwhile (far below the usual limit of 1,024)
GROUP_SESSIONS = 64


@dataclass
class HeldChain:
    """A session whose chain's lock the group holds (rule 1)."""

    chain: Chain
    lock: FileLock
    out: SessionParse
    rounds: list[Staged] = field(default_factory=list)
    fold: Fold | None = None  #: the fold its staged rounds make
    now: str = ""

    @property
    def waiting(self) -> bool:
        """A round of it is staged and not installed yet."""
        return any(not s.installed and s.error is None for s in self.rounds)


class RoundGroup:
    """Rounds staged by several sessions' parses, installed together (see the module's rules).
    ``whole_filesystem=False``: each round is fsynced on its own (a lone session's parse)."""

    def __init__(self, root: Path, *, whole_filesystem: bool = True) -> None:
        self.files = WriteOnceGroup(root, ROUND_STEPS, whole_filesystem=whole_filesystem)
        self.held: list[HeldChain] = []

    def hold(self, chain: Chain, lock: FileLock, out: SessionParse) -> HeldChain:
        """The group holds ``lock`` from now (rule 1)."""
        held = HeldChain(chain, lock, out)
        self.held.append(held)
        return held

    def stage(self, held: HeldChain, number: int, digest: str, data: bytes, fold: Fold, now: str) -> Path:
        """Stage ``held``'s round ``number``, whose fold is then ``fold`` (rules 1 and 2)."""
        if held.waiting:
            self.install()
        staged = held.chain.stage(number, digest, data, self.files)
        held.rounds.append(staged)
        held.fold, held.now = fold, now
        return staged.final

    def let_go(self, held: HeldChain) -> None:
        """Release ``held`` now when nothing of it is staged (rule 1)."""
        if not held.rounds:
            self.held.remove(held)
            held.lock.release()

    def full(self) -> bool:
        return len(self.held) >= GROUP_SESSIONS

    def install(self) -> None:
        """Install every staged round (rule 3), and say which were not (rule 4)."""
        self.files.commit()
        for held in self.held:
            failed = next((s for s in held.rounds if s.error is not None), None)
            if failed is not None and held.out.outcome != "refused":
                held.out.outcome = "refused"
                held.out.message = (f"{held.out.session}: round {failed.final.name} was not installed "
                                    f"({failed.error}); parse again")
                held.out.rounds = [s.final for s in held.rounds if s.installed]

    def commit(self) -> None:
        """Install, then save each chain's state and release its lock (rule 3)."""
        try:
            self.install()
        finally:
            held_now, self.held = self.held, []
            for held in held_now:
                # a cache, rebuilt by listing the rounds whenever it is wrong: one not written is not an error
                with contextlib.suppress(OSError):
                    if held.fold is not None and all(s.installed for s in held.rounds):
                        held.chain.save_state(held.fold, held.now)
                held.lock.release()

    def close(self) -> None:
        """Commit what is held and let the group's descriptor go."""
        try:
            self.commit()
        finally:
            self.files.close()
