"""What ``verify`` checks of a conversation's round chain (session-flow, "Reading it").

For every round, in order: no round missing before it; its ``previous`` the digest of the round
before; its own digest and every reading rule; its ``from_seq`` the previous ``through_seq`` plus
one; every landed sequence it consumed still on disk (one problem per file gone, named by round
and sequence); and, when all are there, its input digest recomputed from them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from asz_core.assembly.chain import Chain
from asz_core.assembly.evidence import landed_digest, landed_seqs
from asz_core.assembly.flow import Round, RoundError
from asz_core.assembly.parse import input_digest

__all__ = ["ChainProblem", "check_chain"]


@dataclass(frozen=True)
class ChainProblem:
    #: ``round missing``, ``round broken``, ``chain link``, ``skipped seq``, ``lost file``, ``input digest``
    kind: str
    path: str
    message: str
    round: int = 0
    seq: int = 0


def check_chain(root: Path, conversation: str, session: str | None = None) -> list[ChainProblem]:
    """Every problem of one chain (none when it has no rounds)."""
    chain = Chain(root, conversation)
    try:
        files = chain.files()
    except RoundError as exc:  # a link on the way to the rounds, or at a round's name
        return [ChainProblem("round broken", str(chain.rounds_dir), str(exc))]
    if not files:
        return []
    seqs = landed_seqs(root / (session or conversation))
    problems: list[ChainProblem] = []
    prev_digest, prev_input, prev_through = "", "", 0
    for expected, rf in enumerate(files, start=1):
        where = str(rf.path)
        if rf.number != expected:
            problems.append(ChainProblem("round missing", where, f"round {expected} is missing before round "
                                         f"{rf.number}; the rounds after it cannot be folded", expected))
            break
        try:
            rnd: Round = chain.read(rf)
        except (RoundError, OSError) as exc:
            problems.append(ChainProblem("round broken", where, f"round {rf.number}: {exc}", rf.number))
            break
        h = rnd.header
        if (h.get("previous") or "") != prev_digest:
            problems.append(ChainProblem("chain link", where, f"round {rf.number} names previous "
                                         f"{str(h.get('previous'))[:12]!r}; round {rf.number - 1} digests to "
                                         f"{prev_digest[:12]!r}", rf.number))
        if h["from_seq"] != prev_through + 1:
            problems.append(ChainProblem("skipped seq", where, f"round {rf.number} starts at seq {h['from_seq']}; "
                                         f"round {rf.number - 1} ended at {prev_through}: landed evidence "
                                         f"was skipped", rf.number))
        lost = [s for s in range(h["from_seq"], h["through_seq"] + 1) if s not in seqs]
        for seq in lost:
            problems.append(ChainProblem("lost file", where, f"round {rf.number} consumed landed seq {seq}, "
                                         f"which is no longer on disk", rf.number, seq))
        if not lost:
            try:
                digests = [landed_digest(seqs[s]) for s in range(h["from_seq"], h["through_seq"] + 1)]
            except OSError as exc:  # a link at a landed file's name (LinkRefused), or one removed meanwhile
                problems.append(ChainProblem("input digest", where, f"round {rf.number}: a landed file it consumed "
                                             f"does not read: {exc}", rf.number))
            else:
                if input_digest(prev_input, digests) != h["input_digest"]:
                    problems.append(ChainProblem("input digest", where, f"round {rf.number}: the landed files it "
                                                 f"consumed (seq {h['from_seq']}..{h['through_seq']}) no longer "
                                                 f"digest to its input_digest", rf.number))
        prev_digest, prev_input, prev_through = rnd.digest, h["input_digest"], h["through_seq"]
    return problems
