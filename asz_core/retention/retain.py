"""One retention step over a root: plan it, then remove session by session.

1. The plan (:func:`~asz_core.retention.plan.plan_root`) says which landed files go now, with
   what the receiver confirmed of each, and counts the rest by why they stay.
2. A dry run stops there: what would go, and the bytes it would free.
3. Each session with files to remove is locked as a landing locks it (which also deletes the
   temporary files a killed removal left), and each of its files is replaced by its skeleton
   (:func:`~asz_core.retention.remove.remove_landed`). The files a step removes in one session
   share one ``generation``: one above the highest its skeletons already record.
4. A file that cannot go (its skeleton conflicts, it does not read, the disk is full) stays and
   is reported with what to do; the other files and sessions go on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from asz_core.retention.plan import Candidate, Plan, plan_root, session_files
from asz_core.retention.policy import RetentionPolicy
from asz_core.retention.receipts import Receipts
from asz_core.retention.remove import SkeletonConflict, remove_landed, removed_header
from asz_core.root.confined import LinkRefused
from asz_core.root.locks import LockBusy
from asz_core.root.storage import StorageRoot
from asz_core.sessiondata.errors import SessionDataError
from asz_core.sessiondata.skeleton import Removal
from asz_core.sessiondata.times import format_instant

__all__ = ["RetainResult", "retain_root"]


@dataclass
class RetainResult:
    """What one retention step did (or, in a dry run, would do)."""

    dry_run: bool
    plan: Plan
    removed: list[Candidate] = field(default_factory=list)
    skeleton_bytes: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def freed(self) -> int:
        """Bytes the removed files held, less their skeletons' (all of them in a dry run)."""
        done = self.plan.remove if self.dry_run else self.removed
        return sum(c.size for c in done) - self.skeleton_bytes

    def line(self) -> str:
        done = self.plan.remove if self.dry_run else self.removed
        verb = "would remove" if self.dry_run else "removed"
        kept = ", ".join(f"{n} {reason}" for reason, n in sorted(self.plan.kept.items()))
        text = (f"retain: {verb} {len(done)} file(s) of {len({c.session for c in done})} session(s), "
                f"{sum(c.size for c in done)} bytes")
        if not self.dry_run:
            text += f" for {self.skeleton_bytes} bytes of skeletons (freed {self.freed})"
        text += f"; kept {sum(self.plan.kept.values())} file(s), {self.plan.kept_bytes} bytes"
        if kept:
            text += f" ({kept})"
        if self.errors:
            text += f"; {len(self.errors)} error(s)"
        return text


def _next_generation(session_dir: Path) -> int:
    highest = 0
    for kinds in session_files(session_dir).values():
        skeleton = kinds.get("sk")
        if skeleton is None or "sd" in kinds:
            continue  # a removal being finished keeps the generation it had
        try:
            generation = removed_header(skeleton).get("generation")
        except (SessionDataError, LinkRefused):  # verify names it; it holds no generation of ours
            continue
        if isinstance(generation, int) and generation > highest:
            highest = generation
    return highest + 1


def retain_root(root: Path, policy: RetentionPolicy, receipts: Receipts, now_ns: int, *,
                dry_run: bool = False, sessions: list[str] | None = None) -> RetainResult:
    """Apply ``policy`` to ``root``; the caller holds the root lock (as a pass or ``retain``)."""
    plan = plan_root(root, policy, receipts, now_ns, sessions, note=not dry_run)
    result = RetainResult(dry_run, plan)
    if dry_run:
        return result
    by_session: dict[str, list[Candidate]] = {}
    for candidate in plan.remove:
        by_session.setdefault(candidate.session, []).append(candidate)
    store = StorageRoot(root)
    at = format_instant(now_ns - now_ns % 1_000_000_000)
    for session, candidates in by_session.items():
        try:
            with store.open_session(session):
                generation, owner = _next_generation(root / session), receipts.owner(session)
                for c in candidates:
                    try:
                        skeleton = remove_landed(c.landed, c.sha256, Removal(
                            at=at, generation=generation, receiver=c.receipt, owner=owner))
                    except SkeletonConflict as exc:
                        result.errors.append(str(exc))
                        continue
                    except (SessionDataError, OSError) as exc:
                        result.errors.append(f"{c.relpath}: not removed ({exc}); it stays, and the "
                                             f"next retention tries again")
                        continue
                    result.removed.append(c)
                    result.skeleton_bytes += skeleton.stat().st_size
        except LockBusy as exc:
            result.errors.append(f"{session}: locked by another writer ({exc.holder or 'pid unknown'}); "
                                 f"its files are removed by the next retention")
    return result
