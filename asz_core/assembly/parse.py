"""``parse``: append to a session's round chain what its landed evidence newly says.

For one session (conversation-assembly, "The round chain"):

1. A session with no landed file and no chain has nothing to parse: no chain directory is made.
2. Take the chain's lock before reading anything (a second parser writes nothing). Step 1 looked
   without it, so a scenario removal may have taken the session away since: under the lock, a
   session with no landed file whose chain holds no round is left as step 1 leaves it, and the
   directory the lock made goes again. A parse that runs after a removal leaves nothing behind.
3. Fold the chain; refuse one built by another parser or policy, or for another session.
4. Fix the watermark at the highest landed sequence; refuse when the chain covers more than is
   landed. Nothing above the previous watermark: no round, and no landed file is read. A chain
   whose intact head round already names this parser, policy and session at the watermark is
   known to be up to date from that round alone, before any lock or fold: every ``run`` ends
   with a parse, so after a pass that landed nothing each session costs a listing and one read.
5. Assemble the whole session up to the watermark and write the difference from the fold:
   changed or new entities, a tombstone for what is gone, ``resolved`` for an open reference
   no longer produced. A round is written whenever evidence advanced, even with no entity.
6. A round over ``max_round_bytes`` is assembled again over half the window, until it fits or
   covers one landed sequence; the next round starts where it stops.
7. Publish the round (see :mod:`.chain`), then save the state: a parse of several sessions
   stages their rounds and installs them together (:mod:`.rounds`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asz_core.assembly import evidence as ev
from asz_core.assembly import model as m
from asz_core.assembly.assemble import Assembly, assemble
from asz_core.assembly.chain import Chain, ChainBusy
from asz_core.assembly.evidence import LandedEvidence, cached_seqs, landed_seqs, load_session, sweep_cache
from asz_core.assembly.flow import PARSER, POLICY, Fold, RoundError, encode_round, read_round
from asz_core.assembly.rounds import HeldChain, RoundGroup
from asz_core.root.confined import LinkRefused
from asz_core.root.durable import read_bytes
from asz_core.root.locks import LockBusy
from asz_core.root.storage import StorageRoot
from asz_core.sessiondata.times import format_instant

__all__ = ["DEFAULT_MAX_ROUND_BYTES", "ParseError", "SessionParse", "input_digest", "parse_root", "parse_session"]

DEFAULT_MAX_ROUND_BYTES = 2 << 20


class ParseError(RuntimeError):
    """A session that cannot be parsed now; the message says why and what to do."""


@dataclass
class SessionParse:
    session: str
    rounds: list[Path] = field(default_factory=list)
    through_seq: int = 0
    files_read: int = 0
    stats: dict[str, int] = field(default_factory=dict)
    #: ``busy``, ``refused`` (with ``message``), or empty
    outcome: str = ""
    message: str = ""


def input_digest(previous: str, digests: list[str]) -> str:
    """``hex(SHA-256(previous || 0x00 || d1 || 0x00 || d2 ...))`` over the digests sorted."""
    h = hashlib.sha256(previous.encode())
    for d in sorted(digests):
        h.update(b"\0" + d.encode())
    return h.hexdigest()


def _delta(fold: Fold, a: Assembly) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    nodes = [n for id, n in a.nodes.items() if fold.nodes.get(id) != n]
    nodes += [{"id": id, "tombstone": True} for id in fold.nodes if id not in a.nodes]
    relations = [r for id, r in a.relations.items() if fold.relations.get(id) != r]
    relations += [{"id": id, "tombstone": True} for id in fold.relations if id not in a.relations]
    unresolved = [u for id, u in a.unresolved.items() if fold.unresolved.get(id) != u]
    unresolved += [{**u, "state": m.RESOLVED} for id, u in fold.unresolved.items()
                   if id not in a.unresolved and u.get("state") == m.OPEN]
    return nodes, relations, unresolved


def _header_counts(a: Assembly, files: list[LandedEvidence], through: int) -> dict[str, Any]:
    kinds: dict[str, int] = {}
    for n in a.nodes.values():
        kinds[n["kind"]] = kinds.get(n["kind"], 0) + 1
    session = next((n for n in a.nodes.values() if n["kind"] == "session"), {})
    sattrs = session.get("attrs", {})
    changes: dict[str, tuple[int, int]] = {}
    for f in files:
        if f.seq > through:
            continue
        for e in f.entries:
            for b in e.blocks:
                if b.kind == ev.CHANGE and b.name not in changes:
                    changes[b.name] = (b.adds, b.dels)
    return {
        "session_from_time": sattrs.get("from_time", ""), "session_through_time": sattrs.get("through_time", ""),
        "title": sattrs.get("title", ""), "talks": kinds.get("talk", 0),
        "steps": sum(c for k, c in kinds.items() if k not in m.STRUCTURE_KINDS),
        "streams": kinds.get("stream", 0), "segments": kinds.get("segment", 0),
        "unresolved": sum(u["state"] == m.OPEN for u in a.unresolved.values()),
        "changes": len(changes), "lines_added": sum(v[0] for v in changes.values()),
        "lines_removed": sum(v[1] for v in changes.values()),
        "llm_calls": kinds.get("llm.call", 0),
        "subagents": sum(1 for n in a.nodes.values() if n["kind"] == "stream"
                         and n.get("attrs", {}).get("role") == "child"),
        "bash_runs": sum(1 for n in a.nodes.values() if n["kind"] in ("tool", "agent.call")
                         and n.get("attrs", {}).get("name") == "Bash"),
    }


def _window_times(files: list[LandedEvidence], after: int, through: int) -> tuple[str, str]:
    lo = min((f.times[0] for f in files if after < f.seq <= through and f.times), default=0)
    hi = max((f.times[1] for f in files if after < f.seq <= through and f.times), default=0)
    return (format_instant(lo), format_instant(hi)) if lo else ("", "")


def build_round(fold: Fold, files: list[LandedEvidence], session: str, conversation: str,
                through: int) -> tuple[bytes, str, Assembly]:
    """The next round over ``(fold.through_seq, through]``: its bytes, digest and the assembly."""
    a = assemble(files, session, conversation, through)
    nodes, relations, unresolved = _delta(fold, a)
    after = fold.through_seq
    from_time, through_time = _window_times(files, after, through)
    header: dict[str, Any] = {
        "conversation": conversation, "session": session, "round": fold.rounds + 1, "previous": fold.digest,
        "from_seq": after + 1, "through_seq": through,
        "input_digest": input_digest(fold.input_digest, [f.sha256 for f in files if after < f.seq <= through]),
        "parser": PARSER, "policy": POLICY, "from_time": from_time, "through_time": through_time,
        **_header_counts(a, files, through),
    }
    data, digest = encode_round(header, nodes, relations, unresolved)
    return data, digest, a


def parse_session(root: Path, session: str, *, conversation: str | None = None,
                  max_round_bytes: int = DEFAULT_MAX_ROUND_BYTES, now: str = "",
                  group: RoundGroup | None = None) -> SessionParse:
    """Append rounds to ``session``'s chain until it reaches the landed evidence (steps 1 to 7).
    With ``group``, its rounds are installed when the group commits (its caller commits it);
    without, before this returns."""
    if group is None:
        lone = RoundGroup(root, whole_filesystem=False)
        try:
            return parse_session(root, session, conversation=conversation, max_round_bytes=max_round_bytes,
                                 now=now, group=lone)
        finally:
            lone.close()
    conversation = conversation or session
    out = SessionParse(session)
    chain = Chain(root, conversation)
    session_dir = root / session
    seqs = landed_seqs(session_dir)
    if not seqs and not chain.exists():
        return out
    watermark = max(seqs.keys() | cached_seqs(session_dir), default=0)
    if _head_is_at(chain, session, watermark):
        out.through_seq = watermark
        return out
    lock = chain.lock()
    try:
        lock.acquire()
    except LockBusy:
        out.outcome, out.message = "busy", (f"{session}: another parser holds {chain.dir / '.lock'}; "
                                            f"this one wrote nothing (parse again once it finishes)")
        return out
    except FileNotFoundError:
        # the chain's directory went between its making and its lock's file: a removal took it,
        # or a parser that found the session gone (step 2); there is nothing left to parse
        return out
    except LinkRefused as exc:  # a link in the chain's place: this session's alone is refused
        out.outcome, out.message = "refused", f"{session}: {exc}"
        return out
    held = group.hold(chain, lock, out)
    try:
        if not _parse_locked(held, session_dir, session, conversation, max_round_bytes, now, group):
            chain.unmake()
    except (RoundError, ChainBusy, ParseError, LinkRefused) as exc:
        out.outcome, out.message = "refused", f"{session}: {exc}"
    finally:
        group.let_go(held)
    return out


def _head_is_at(chain: Chain, session: str, watermark: int) -> bool:
    """Whether the chain's head round is intact (its bytes digest to its name) and is this
    parser's and policy's round of ``session`` through ``watermark``. Nothing is written on a
    yes, so a head that is damaged, an empty reservation, or a chain another parser is extending
    at this instant is only ever a no: the locked path then folds and decides, as without this
    check. An earlier round damaged under an intact head is left to ``verify`` and to the next
    parse that has something to write."""
    head = chain.head_name()
    if head is None or watermark <= 0:
        return False
    number, name = head
    try:
        data = read_bytes(chain.rounds_dir / name)
    except OSError:
        return False
    cut = data.rfind(b"\n", 0, len(data) - 1) + 1  # the commit is the last line
    digest12 = name.rsplit("-", 1)[1][:12]
    if not data.endswith(b"\n") or cut <= 0 or not hashlib.sha256(data[:cut]).hexdigest().startswith(digest12):
        return False
    try:
        header = json.loads(data[:data.index(b"\n")])
    except ValueError:
        return False
    return (isinstance(header, dict) and header.get("t") == "header" and header.get("round") == number
            and header.get("through_seq") == watermark and header.get("session") == session
            and (header.get("parser"), header.get("policy")) == (PARSER, POLICY))


def _parse_locked(held: HeldChain, session_dir: Path, session: str, conversation: str, budget: int,
                  now: str, group: RoundGroup) -> bool:
    """Steps 3 to 7 under the lock; ``False`` when the session has no landed file and its chain
    no round (step 2: there is nothing to keep the chain's directory for)."""
    chain, out = held.chain, held.out
    chain.sweep()  # a crash at any instant leaves at most a temporary file: the lock's next holder removes it
    sweep_cache(session_dir)
    fold = chain.fold()
    if fold.head is not None:
        h = fold.head
        if (h.get("parser"), h.get("policy")) != (PARSER, POLICY):
            raise ParseError(f"the chain was built by parser {h.get('parser')!r} under policy {h.get('policy')!r}; "
                             f"this is {PARSER!r}/{POLICY!r}: remove {chain.dir} and parse again to rebuild it")
        if h.get("session") != session:
            raise ParseError(f"the chain carries session {h.get('session')!r}, not {session!r}")
    seqs = landed_seqs(session_dir)
    # the derived cache still knows a landed file lost after a round bound it, as upstream's
    # index does, so the session goes on into later rounds
    watermark = max(seqs.keys() | cached_seqs(session_dir), default=0)
    if watermark == 0 and fold.head is None:
        return False
    out.through_seq = fold.through_seq
    if watermark < fold.through_seq:
        raise ParseError(f"the chain covers landed sequence {fold.through_seq} but the root holds only "
                         f"{watermark}: landed files are missing (asz-pipeline verify names them)")
    if watermark == fold.through_seq:
        return True
    files, out.files_read = load_session(session_dir, watermark, seqs)
    while fold.through_seq < watermark:
        start, through = fold.through_seq + 1, watermark
        while True:
            data, digest, a = build_round(fold, files, session, conversation, through)
            if len(data) <= budget or through <= start:
                break
            through = start + (through - start) // 2
        number = fold.rounds + 1
        fold.take(read_round(data))
        out.rounds.append(group.stage(held, number, digest, data, fold, now or _now()))
        out.through_seq = fold.through_seq
        out.stats = a.stats
    return True


def _now() -> str:
    import time

    return format_instant(time.time_ns())


def parse_root(root: Path, sessions: list[str] | None = None, *,
               max_round_bytes: int = DEFAULT_MAX_ROUND_BYTES) -> list[SessionParse]:
    """Parse every session of the root (or those named), in name order."""
    if sessions is None:  # as the root lists them: no link is looked through, nor taken for one
        sessions = list(StorageRoot(root).sessions())
    group = RoundGroup(root)
    out = []
    try:
        for s in sessions:
            out.append(parse_session(root, s, max_round_bytes=max_round_bytes, group=group))
            if group.full():
                group.commit()
    finally:
        group.close()
    return out
