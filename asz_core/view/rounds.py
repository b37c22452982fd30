"""A conversation's round chain as the document reports it: folded as far as it goes, and checked.

Verification is content, not an error (asz-view, "Top level"):

1. Every round file is listed under ``rounds`` and ``files``, in order, from its header (one that
   does not read whole is listed from its first line when that reads, and is not verified).
2. The chain is checked as ``verify`` checks it (:func:`~asz_core.assembly.chaincheck.check_chain`),
   so the document and ``verify`` never disagree: each problem is one line of
   ``summary.problems``; a round with a problem, and every round after one the check could not
   read past, is not ``verified``.
3. ``state`` is ``mismatch`` when a digest or a link failed, ``incomplete`` when a round or a
   landed file is missing, else ``verified``.
4. The fold takes rounds in order and stops before the first it cannot take; ``head`` names the
   last round it reached. Only a chain with no usable round at all is an error.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from asz_core.assembly.chain import Chain
from asz_core.assembly.chaincheck import check_chain
from asz_core.assembly.flow import Fold, Round, RoundError
from asz_core.root.durable import read_bytes
from asz_core.sessiondata.times import parse_instant
from asz_core.view.errors import NoRounds
from asz_core.view.landed import millis

__all__ = ["MISMATCH", "ChainView", "read_chain"]

VERIFIED: Final = "verified"
INCOMPLETE: Final = "incomplete"
MISMATCH: Final = "mismatch"
#: problems of ``check_chain`` that mean a digest or a link failed; the others mean something is missing
_MISMATCH_KINDS: Final = frozenset({"round broken", "chain link", "input digest"})


@dataclass
class ChainView:
    fold: Fold
    rounds: list[dict[str, Any]] = field(default_factory=list)
    files: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    state: str = VERIFIED


def header_millis(value: Any) -> int | None:
    """A time a round's header carries: null when it has none, 0 when it is not a time."""
    if not value:
        return None
    nanos = parse_instant(value)
    return 0 if nanos is None else millis(nanos)


def _header_of(data: bytes) -> dict[str, Any] | None:
    """The header of a round that does not read whole, when its first line still does."""
    try:
        header = json.loads(data.split(b"\n", 1)[0])
    except ValueError:
        return None
    if not isinstance(header, dict) or header.get("t") != "header":
        return None
    if not all(type(header.get(k)) is int for k in ("from_seq", "through_seq")):
        return None
    return header


def _commit_digest(data: bytes) -> str:
    """The digest a round that does not read says it has (its commit's), else its bytes' own."""
    try:
        commit = json.loads(data.rstrip(b"\n").rsplit(b"\n", 1)[-1])
        if isinstance(commit, dict) and isinstance(commit.get("digest"), str):
            return str(commit["digest"])
    except ValueError:
        pass
    return hashlib.sha256(data).hexdigest()


def read_chain(root: Path, conversation: str, session: str | None = None) -> ChainView:
    chain = Chain(root, conversation)
    try:
        listed = chain.files()
    except RoundError as exc:
        raise NoRounds(f"conversation {conversation}'s rounds cannot be read: {exc}") from None
    problems = check_chain(root, conversation, session)
    out = ChainView(Fold(), problems=[p.message for p in problems])
    if any(p.kind in _MISMATCH_KINDS for p in problems):
        out.state = MISMATCH
    elif problems:
        out.state = INCOMPLETE
    bad = {p.round for p in problems}
    stopped = min((p.round for p in problems if p.kind in ("round missing", "round broken")), default=0)
    folding = True
    for rf in listed:
        try:
            data = read_bytes(rf.path)
        except OSError:
            folding = False
            continue
        try:
            rnd: Round | None = chain.read(rf, data)
        except RoundError:
            rnd, folding = None, False
        if rnd is not None and folding:
            try:
                out.fold.take(rnd)
            except RoundError:
                folding = False
        h = rnd.header if rnd is not None else _header_of(data)
        if h is None:
            continue  # nothing of it reads: verify names it, and there is nothing to list
        verified = rnd is not None and rf.number not in bad and not (stopped and rf.number >= stopped)
        from_time, through_time = header_millis(h.get("from_time")), header_millis(h.get("through_time"))
        number = rnd.number if rnd is not None else rf.number
        out.rounds.append({
            "round": number, "digest": rnd.digest if rnd is not None else _commit_digest(data),
            "previous": h.get("previous") or None,
            "from_seq": h["from_seq"], "through_seq": h["through_seq"],
            "input_digest": str(h.get("input_digest") or ""),
            "from_time": from_time, "through_time": through_time, "verified": verified,
        })
        out.files.append({
            "file": rf.path.relative_to(root).as_posix(), "format": "sf", "kind": "round", "seq": None,
            "round": number, "stream": None, "run": None, "lines": data.count(b"\n"), "bytes": len(data),
            "digest": hashlib.sha256(data).hexdigest(), "from_time": from_time, "through_time": through_time,
        })
    if out.fold.head is None:
        raise NoRounds(f"conversation {conversation} has no round that folds under {chain.rounds_dir}: "
                       f"`asz-pipeline parse` writes them" + (f" ({out.problems[0]})" if out.problems else ""))
    return out
