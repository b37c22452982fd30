"""What a removal's condition answers: go, or why not, and whether a person has to act.

A reason is *kept* when a person has to act (it is said once, as ``kept:``), or *waiting* when
it changes on its own (not sent yet, not derived yet, not old enough; nothing is said).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GO", "Verdict", "kept", "waiting"]


@dataclass(frozen=True)
class Verdict:
    reason: str = ""
    kept: bool = False     #: a person has to act (else it only waits)

    @property
    def go(self) -> bool:
        return not self.reason


GO = Verdict()


def kept(reason: str) -> Verdict:
    return Verdict(reason, kept=True)


def waiting(reason: str) -> Verdict:
    return Verdict(reason)
