"""A conversation's round chain on disk: ``_conversations/<id>/`` (storage-root, "The chain").

::

    conversation.state           the head: a cache, outside every digest
    .lock                        one parser per chain
    rounds/r000001-<digest12>.sf immutable, read-only

The rounds directory is the authority: a crash between publishing a round and saving the state
leaves a round the state does not name, so the head is found by listing. Publishing is the
landing's promise for rounds: a temporary file, made read-only, durable before a rename that
never replaces, whose name is durable before anything relies on it; the parse stages its rounds
in a group that installs several sessions' at once (:mod:`~asz_core.root.writeonce`), and holds
each chain's lock until then. Under the lock a round that does not follow the head is refused.
An empty file under a round's name is a reservation (no round is ever empty): it is not a round,
and one older than a minute is removed by the next publication.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from asz_core.assembly.flow import Fold, Round, RoundError, read_round
from asz_core.root import confined
from asz_core.root.durable import make_dirs, read_bytes, write_replace
from asz_core.root.locks import FileLock
from asz_core.root.writeonce import FaultSteps, Staged, WriteOnceGroup

__all__ = ["CONVERSATIONS", "ROUND_STEPS", "Chain", "ChainBusy", "RoundFile"]

CONVERSATIONS = "_conversations"
_ROUND_NAME = re.compile(r"^r(\d{6,})-([0-9a-f]{12})\.sf$")
_RESERVATION_AGE_S = 60
#: where a fault can stop a round's publication (:mod:`~asz_core.root.faults`)
ROUND_STEPS = FaultSteps(fsync="round-fsync", install="round-install", names="round-names")


class ChainBusy(RuntimeError):
    """Another parser holds the chain's lock; this one writes nothing."""


@dataclass(frozen=True)
class RoundFile:
    number: int
    digest12: str
    path: Path


class Chain:
    """One conversation's chain. Everything it reads or removes below the root goes through
    :mod:`~asz_core.root.confined`, as a pass's landing does: a link at the chain's directory,
    at ``rounds/`` or at a round's name is never read or written through, nor waited on (a
    fifo), whichever command made the chain (a pass, ``view``, retention, ``push``)."""

    def __init__(self, root: Path, conversation: str) -> None:
        confined.enter(root)  # a reader that has not entered the root is confined all the same
        self.root = root
        self.conversation = conversation
        self.dir = root / CONVERSATIONS / conversation
        self.rounds_dir = self.dir / "rounds"
        self.state_path = self.dir / "conversation.state"
        #: the directories the last :meth:`lock` made, outermost first
        self._made: list[Path] = []

    def exists(self) -> bool:
        """Whether the chain's directory is there (a link in its place is, and the lock refuses it)."""
        try:
            os.close(confined.open_dir(self.dir))
        except (FileNotFoundError, NotADirectoryError):
            return False
        except confined.LinkRefused:
            pass
        return True

    def lock(self) -> FileLock:
        """The chain's lock, taken without waiting (:class:`ChainBusy` when held). Its file makes
        the chain's directory where there was none; :meth:`unmake` takes that back."""
        self._made = make_dirs(self.dir)
        return FileLock(self.dir / ".lock", describe=True)

    def unmake(self) -> None:
        """Under the lock, on a chain found to hold no round for a session with no landed file:
        remove the lock's file and the directories :meth:`lock` made, so a parse that ran after a
        removal leaves nothing (storage-root, "The chain"). A chain directory that was there
        before stays. A parser that opened the lock's file meanwhile was refused it and writes
        nothing; one that makes it again finds the session gone too, and does the same."""
        if not self._made:
            return
        with contextlib.suppress(FileNotFoundError):
            confined.unlink(self.dir / ".lock")
        for directory in reversed(self._made):
            fd = confined.open_dir(directory.parent)
            try:
                os.rmdir(directory.name, dir_fd=fd)
            except FileNotFoundError:
                continue
            except OSError as exc:
                if exc.errno == errno.ENOTEMPTY:  # another writer's by now: it is theirs to keep
                    return
                raise
            finally:
                os.close(fd)
        self._made = []

    def files(self) -> list[RoundFile]:
        """The round files in round order; reservations (empty files) are not rounds. A round's
        name that is not a file of the chain's own (a link, a fifo), or a link on the way to the
        rounds, is a :class:`RoundError` naming it: nothing is read through it."""
        try:
            fd = confined.open_dir(self.rounds_dir)
        except FileNotFoundError:
            return []
        except confined.LinkRefused as exc:
            raise RoundError(str(exc)) from None
        out = []
        try:
            for name in os.listdir(fd):
                m = _ROUND_NAME.match(name)
                if m is None:
                    continue
                try:
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                except FileNotFoundError:
                    continue
                if not stat.S_ISREG(st.st_mode):
                    raise RoundError(f"{self.rounds_dir / name} is not a file of the root's own (a link or a "
                                     f"special file); nothing is read through it: remove it")
                if st.st_size == 0:
                    continue
                out.append(RoundFile(int(m.group(1)), m.group(2), self.rounds_dir / name))
        finally:
            os.close(fd)
        return sorted(out, key=lambda f: f.number)

    def head_name(self) -> tuple[int, str] | None:
        """The highest-numbered round name and its number, from a listing of the rounds and of the
        chain's directory: a quick look that stats nothing, so the name may be a reservation
        (:meth:`files` is the authority). ``None`` where a killed writer left a temporary file."""
        try:
            names = confined.listdir(self.rounds_dir)
            # a killed writer's temporary round or state: no quick answer, so the locked path,
            # which sweeps them, runs (as it does past a link, which it refuses)
            if any(n.startswith(".tmp-") for n in (*names, *confined.listdir(self.dir))):
                return None
        except (FileNotFoundError, NotADirectoryError, confined.LinkRefused):
            return None
        best: tuple[int, str] | None = None
        for name in names:
            m = _ROUND_NAME.match(name)
            if m is not None and (best is None or int(m.group(1)) > best[0]):
                best = (int(m.group(1)), name)
        return best

    def read(self, rf: RoundFile, data: bytes | None = None) -> Round:
        """Round ``rf``, checked against its name; ``data``: its bytes, when the caller has read them."""
        rnd = read_round(read_bytes(rf.path) if data is None else data)
        if rnd.number != rf.number:
            raise RoundError(f"{rf.path.name}: the header says round {rnd.number}")
        if not rnd.digest.startswith(rf.digest12):
            raise RoundError(f"{rf.path.name}: the round digests to {rnd.digest[:12]}")
        return rnd

    def fold(self) -> Fold:
        """Every round in order, folded; ``RoundError`` at the first that cannot be taken."""
        fold = Fold()
        for rf in self.files():
            fold.take(self.read(rf))
        return fold

    def stage(self, number: int, digest: str, data: bytes, group: WriteOnceGroup) -> Staged:
        """Stage round ``number`` in ``group`` (the caller holds the lock until the group has
        installed it); refused unless it follows the head."""
        files = self.files()
        head = files[-1].number if files else 0
        if number != head + 1:
            raise RoundError(f"cannot publish round {number}: the chain's head is round {head}")
        make_dirs(self.rounds_dir)
        self._sweep_reservations(number)
        return group.stage(self.rounds_dir / f"r{number:06d}-{digest[:12]}.sf", data, owner=self.conversation)

    def publish(self, number: int, digest: str, data: bytes) -> Path:
        """Install round ``number`` now, on its own (the caller holds the lock)."""
        group = WriteOnceGroup(self.root, ROUND_STEPS, whole_filesystem=False)
        staged = self.stage(number, digest, data, group)
        if group.commit() and staged.error is not None:
            raise staged.error
        return staged.final

    def sweep(self) -> None:
        """Under the lock, before anything is read: a killed writer's temporary round (or state)
        goes."""
        for directory in (self.rounds_dir, self.dir):
            with contextlib.suppress(FileNotFoundError):
                for name in confined.listdir(directory):
                    if name.startswith(".tmp-"):
                        with contextlib.suppress(FileNotFoundError):
                            confined.unlink(directory / name)

    def _sweep_reservations(self, number: int) -> None:
        """Under the lock: a temporary file is a crashed writer's (nothing of it was ever a
        round), and an empty round file older than a minute a reservation nobody completed."""
        prefix = f"r{number:06d}-"
        try:
            fd = confined.open_dir(self.rounds_dir)
        except FileNotFoundError:
            return
        try:
            for name in os.listdir(fd):
                with contextlib.suppress(FileNotFoundError):
                    if name.startswith(".tmp-"):
                        os.unlink(name, dir_fd=fd)
                    elif name.startswith(prefix):
                        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                        if st.st_size == 0 and time.time() - st.st_mtime > _RESERVATION_AGE_S:
                            os.unlink(name, dir_fd=fd)
        finally:
            os.close(fd)

    def save_state(self, fold: Fold, now: str) -> None:
        """The head as upstream's ``conversation.state`` writes it; a cache, rebuilt by listing."""
        h = fold.head or {}
        text = (f"schema       1\nconversation {self.conversation}\nhead         {fold.rounds}\n"
                f"head_digest  {fold.digest}\nthrough_seq  {fold.through_seq}\n"
                f"input_digest {fold.input_digest}\nparser       {h.get('parser', '')}\n"
                f"policy       {h.get('policy', '')}\nupdated_at   {now}\n")
        # a cache rebuilt by listing the rounds whenever it is wrong: no fsync is owed to it
        write_replace(self.state_path, text.encode(), derived=True)
