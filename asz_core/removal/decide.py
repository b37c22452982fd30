"""Whether a marked session may be removed now: the conditions, in the order they are checked.

A session is removed at the end of a pass only when all of these hold; the first that does not
says why it stays and what to do about it (in upstream's own words where its guide prints them).
A reason is *kept* (a person has to act: it is said once, as ``kept:``) or *waiting* (it changes
on its own: not sent, not derived, not old enough yet; nothing is said). The list follows
upstream's scenario guide and its storage root's "A scenario root", condition by condition.

Once for every marked session (:func:`blocked_for_all`):

1. The configuration sends: ``export.otlp`` names a receiver, with ``logs`` and ``metrics`` on.
2. The ``changes`` adapter (``claude-code-changes`` before upstream renamed it) is on, and reads
   ``<source>/plugins/data``, where the build wrote the plugin's output: otherwise that output
   would never be landed, and the session would go without it.
3. No source directory an adapter reads for a build (the local adapter's, the ``changes``
   adapter's, the provider adapter's while it is on) is, holds or lies inside a place Claude Code
   keeps its own files (``CLAUDE_CONFIG_DIR``, ``XDG_CONFIG_HOME/claude``, ``~/.claude``),
   compared as written and with links resolved.
4. ``push.state`` names no receiver but the one this pipeline sends to.

For each session (:func:`decide`):

5. Every file the marker lists is a regular file holding the bytes the build wrote; provider
   bodies among them only while the provider adapter reads them where the build wrote them; and
   the local adapter's ``include`` and ``exclude`` admit the session's project directory.
6. Nothing in its ``streams/`` and ``runs/`` is a link (the landed files and cursors of rules 6
   and 7 would be judged with part of them out of sight), something of it is landed, and every
   landed file came from a file the marker lists, through
   the adapter whose source directory holds it (a provider file holds many bodies: rule 7
   checks them).
7. Every file the marker lists is landed at its full size, by a cursor of the session or as the
   adapters attribute files to it (``asz_session_sources``), and every file they attribute to it
   is one the build wrote: the adapters would land nothing more of it.
8. Every landed file is recorded as sent to this receiver with the digest it has now, and none
   has a ``rejected`` line.
9. The chain's head round reaches the last landed file and no further, and every round is sent
   as 8 says.
10. With ``metrics.enabled`` on, every landed file is derived; and every spool file of the
    session is sent as 8 says (:mod:`~asz_core.removal.metrics_sent`).
11. The policy allows it: ``immediately``, or the last landed record is at least the retention old.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from asz_core.assembly.chain import CONVERSATIONS, Chain
from asz_core.assembly.flow import RoundError
from asz_core.config import RENAMED_ADAPTERS
from asz_core.filters import SessionFilter
from asz_core.metrics.calls import COUNTED_DIALECTS
from asz_core.metrics.state import MetricsState
from asz_core.removal.marker import Marker, MarkerFile
from asz_core.removal.metrics_sent import LandedFile, metrics_sent
from asz_core.removal.verdict import GO, Verdict, kept, waiting
from asz_core.retention.receipts import ACCEPTED, REJECTED, Receipts
from asz_core.root.confined import LinkRefused, walk
from asz_core.root.cursors import ACTIVE, parse_pairs
from asz_core.root.durable import open_landed, open_read, sha256_of
from asz_core.root.layout import PLACE_GROUPS, parse_file_name
from asz_core.root.storage import landed_files
from asz_core.sessiondata.times import parse_instant

__all__ = ["BODIES_PREFIX", "CHANGES", "Sending", "Sources", "Verdict", "blocked_for_all", "claude_code_dirs",
           "decide"]

#: where under the local source a build writes provider bodies, and the adapter that reads them
BODIES_PREFIX = "provider-bodies/"
PROVIDER = "claude-code-provider"
#: where under the local source a build writes the asz plugin's change records
CHANGES_PREFIX = "plugins/data/"
#: the adapter that lands them, and every name it had before (rule 2)
CHANGES = "changes"
CHANGES_NAMES = frozenset({CHANGES, *(old for old, new in RENAMED_ADAPTERS.items() if new == CHANGES)})
#: the latest record time this process found in each retained session's landed files, by root and
#: session: it only grows while the session is kept, so a session it shows too young is still too
#: young and a pass need not read its files again to say so
_last_ns: dict[tuple[str, str], int] = {}
#: a session's source files the adapters attribute to it: absolute path → (state, size)
Attributed = dict[str, tuple[str, int]]


@dataclass
class Sending:
    """What the pass knows about sending and deriving: the receiver, its switches, what it
    confirmed, and what the derivation recorded."""

    receiver: str = ""
    logs: bool = True
    metrics: bool = True
    receipts: Receipts | None = None
    derives: bool = True                    #: ``metrics.enabled``
    derived: MetricsState | None = None     #: ``metrics.state``, loaded once (``None``: there is none)


@dataclass(frozen=True)
class Sources:
    """The source directories of the enabled adapters a build writes for."""

    local: Path                                 #: the local adapter's: sessions and markers
    changes: tuple[Path, ...] = ()              #: every enabled ``changes`` entry's
    provider: Path | None = None                #: the provider adapter's, while it is on
    #: the local adapter's ``include`` and ``exclude``
    local_filter: SessionFilter = field(default_factory=SessionFilter)

    @property
    def plugin_data(self) -> Path:
        """Where the build writes the plugin's output."""
        return self.local / CHANGES_PREFIX.rstrip("/")


def claude_code_dirs() -> list[Path]:
    """Every place Claude Code may keep its files, whichever the environment selects."""
    bases = []
    if os.environ.get("CLAUDE_CONFIG_DIR"):
        bases.append(Path(os.environ["CLAUDE_CONFIG_DIR"]))
    if os.environ.get("XDG_CONFIG_HOME"):
        bases.append(Path(os.environ["XDG_CONFIG_HOME"]) / "claude")
    home = os.path.expanduser("~")
    if home and home != "~":
        bases.append(Path(home) / ".claude")
    return [d for b in bases for d in (b, b / "projects", b / "plugins" / "data")]


def _overlaps(a: Path, b: Path) -> bool:
    def under(x: Path, y: Path) -> bool:
        return x == y or y in x.parents
    la, lb = Path(os.path.abspath(a)), Path(os.path.abspath(b))
    ra, rb = Path(os.path.realpath(a)), Path(os.path.realpath(b))
    return under(la, lb) or under(lb, la) or under(ra, rb) or under(rb, ra)


def blocked_for_all(sending: Sending, sources: Sources) -> str:
    """Rules 1 to 4: why no marked session goes this pass, or ``""``."""
    if not sending.receiver or sending.receipts is None:
        return "no export endpoint; nothing is sent, so nothing is removed"  # as upstream's guide prints it
    if not sending.logs:
        return "export.otlp.logs is off; landed files and rounds are never sent (switch it on to remove)"
    if not sending.metrics:
        return ("export.otlp.metrics is off; the metrics derived from a session are never sent (switch it on "
                "to remove)")
    want = sources.plugin_data
    if not sources.changes:
        return (f"the {CHANGES} adapter is off; the plugin output the build wrote under {want} would never be "
                f"landed (switch it on, reading {want})")
    if not any(os.path.realpath(r) == os.path.realpath(want) for r in sources.changes):
        reads = ", ".join(str(r) for r in sources.changes)
        return (f"the {CHANGES} adapter reads {reads}, not {want}; the plugin output the build wrote would never "
                f"be landed (set its source_root to {want})")
    for src in (sources.local, *sources.changes, *([sources.provider] if sources.provider else [])):
        for own in claude_code_dirs():
            if _overlaps(src, own):
                return (f"{src} is, holds, or lies inside {own}, where Claude Code keeps its own files; asz "
                        f"never removes there (build into a directory of its own)")
    others = sorted(sending.receipts.others)
    if others:
        return (f"push.state records sending to {', '.join(others)}; this pipeline sends to {sending.receiver}; "
                f"which file reached which receiver cannot be told (a root sends to one receiver: remove the "
                f"sessions yourself, or build again into a new directory)")
    return ""


@dataclass
class Landed:
    """What a session's landed files hold, read once."""

    files: dict[str, str] = field(default_factory=dict)   #: relpath → SHA-256
    derivable: list[LandedFile] = field(default_factory=list)  #: each as rule 10 reads it
    max_seq: int = 0
    last_ns: int | None = None                              #: its latest record's time


def source_file_holds(path: Path, size: int, sha256: str) -> str:
    """``""`` when ``path`` is a regular file of ``size`` bytes with that digest, else why not."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return f"{path}, which the build wrote, is missing"
    if not stat.S_ISREG(st.st_mode):
        return f"{path} is a symbolic link or not a regular file"
    if st.st_size != size or sha256_of(path) != sha256:
        return f"{path} changed after the build wrote it"
    return ""


#: what a person does about a session rules 5 to 7 keep
_BY_HAND = "the session stays until a person removes its files"


def decide(root: Path, sources: Sources, marker: Marker, roots: dict[str, Path], sending: Sending,
           now_ns: int, attributed: Attributed) -> Verdict:
    """Rules 5 to 11 for one session. ``roots`` is each enabled adapter's source directory."""
    source = sources.local
    assert sending.receipts is not None
    known = _last_ns.get((str(root), marker.session))
    if marker.retain_ns and known is not None and now_ns < known + marker.retain_ns:
        return _until(known + marker.retain_ns)  # landed files never change: still too young
    listed = {f.path: f for f in marker.files}
    bodies = any(p.startswith(BODIES_PREFIX) for p in listed)
    if bodies:                                                                  # rule 5
        want = source / BODIES_PREFIX.rstrip("/")
        if PROVIDER not in roots:
            return kept(f"the provider adapter is off; the bodies the build wrote under {want} would never "
                        f"be landed (switch {PROVIDER} on, reading {want})")
        if os.path.realpath(roots[PROVIDER]) != os.path.realpath(want):
            return kept(f"the provider adapter reads {roots[PROVIDER]}, not {want}; the bodies the build wrote "
                        f"would never be landed (set its source_root to {want})")
    for f in marker.files:
        why = source_file_holds(source / f.path, f.size, f.sha256)
        if why:
            return kept(f"{why}; {_BY_HAND}")
    for project in _projects(marker):
        if not sources.local_filter.admits_slug(project):
            return kept(f"the local adapter's include and exclude leave {marker.session} out (its project "
                        f"directory is {project}); admit it there, or remove the session's files yourself")
    try:  # rule 7's walk, first: a link it meets hides landed files from rule 6 as well
        covered = _covered(root / marker.session, source, roots)
    except LinkRefused as exc:
        return kept(str(exc))
    landed, why = _read_landed(root, marker.session, source, roots, listed, bodies)  # rule 6
    if why:
        return kept(f"{why}; {_BY_HAND}")
    if not landed.files:
        return kept("nothing of it is landed, so nothing of it can be sent; see why with `asz-pipeline run`'s "
                    "errors, or remove its files yourself")
    for path, (state, size) in sorted(attributed.items()):
        rel = _relative(Path(path), source)
        if rel not in listed:
            return kept(f"{path} is not a file the build wrote; {_BY_HAND}")
        if state == "landed":
            covered[rel] = size
    for f in marker.files:
        if covered.get(f.path) != f.size:
            return waiting("not landed in full yet")
    verdict = _sent(sending.receipts, landed.files, "not sent yet")              # rule 8
    if not verdict.go:
        return verdict
    verdict = _chain_sent(root, marker.session, landed, sending.receipts)         # rule 9
    if not verdict.go:
        return verdict
    verdict = metrics_sent(root, marker.session, landed.derivable, sending.receipts,  # rule 10
                           derives=sending.derives, state=sending.derived)
    if not verdict.go:
        return verdict
    if marker.retain_ns:                                                          # rule 11
        if landed.last_ns is None:
            return kept("no landed record carries a time, so the retention cannot be counted; build it again "
                        "with --remove immediately, or remove its files yourself")
        _last_ns[(str(root), marker.session)] = landed.last_ns
        if now_ns < landed.last_ns + marker.retain_ns:
            return _until(landed.last_ns + marker.retain_ns)
    return GO


def _projects(marker: Marker) -> set[str]:
    """The project directories of the session's own transcripts (``<project>/<session>.jsonl``)."""
    return {parent for parent, _, name in (f.path.rpartition("/") for f in marker.files)
            if name == f"{marker.session}.jsonl" and parent and "/" not in parent}


def _until(until_ns: int) -> Verdict:
    return waiting(f"kept until {datetime.fromtimestamp(until_ns / 1e9, UTC).strftime('%Y-%m-%dT%H:%M:%SZ')}")


def _read_landed(root: Path, session: str, source: Path, roots: dict[str, Path],
                 listed: dict[str, MarkerFile], bodies: bool) -> tuple[Landed, str]:
    out = Landed()
    for seq, path in sorted(landed_files(root / session)):
        rel = path.relative_to(root).as_posix()
        try:
            with open_landed(path) as f:
                header = f.header
                for _line, record in f.raw_records():
                    t = parse_instant(record.time) if record.time else None
                    if t is not None and (out.last_ns is None or t > out.last_ns):
                        out.last_ns = t
            # the bytes just read, digested as they were (a skeleton's are compressed: read again)
            digest = f.sha256 or sha256_of(path)
        except (OSError, ValueError) as exc:
            return out, f"landed file {rel} cannot be read ({exc})"
        named = str(header.get("adapter", "")).partition("/")[0]
        adapter = RENAMED_ADAPTERS.get(named, named)  # a root landed before the rename
        base = roots.get(adapter)
        src = header.get("src")
        if base is None or not isinstance(src, str) or header.get("session") != session:
            return out, (f"landed file {rel} came through {named or 'no adapter'!r}, which reads no file "
                         f"the build wrote")
        if adapter == PROVIDER and bodies:
            pass  # a provider file holds many bodies: rule 7 checks each is one the build wrote
        elif _relative(base / src, source) not in listed:
            return out, f"landed file {rel} names a source the build did not write"
        out.files[rel] = digest
        name = parse_file_name(path.name)
        counted = (header.get("kind") == "transcript"
                   and str(header.get("dialect") or "").partition("/")[0] in COUNTED_DIALECTS)
        out.derivable.append(LandedFile(rel, seq, digest, counted, name is not None and name.skeleton))
        out.max_seq = max(out.max_seq, seq)
    return out, ""


def _relative(path: Path, base: Path) -> str:
    try:
        return Path(os.path.normpath(path)).relative_to(os.path.normpath(base)).as_posix()
    except ValueError:
        return ""


def _covered(session_dir: Path, source: Path, roots: dict[str, Path]) -> dict[str, int]:
    """Marker path → the size an active cursor of the session has landed it to: an append
    cursor's offset when it has reached the size it saw, a snapshot cursor's size. ``LinkRefused``
    naming the first link met in ``streams/`` or ``runs/``."""
    out: dict[str, int] = {}
    for dirpath, _dirs, names in (step for place in PLACE_GROUPS for step in walk(session_dir / place)):
        for name in names:
            if not name.endswith(".cursor"):
                continue
            try:
                with open_read(Path(dirpath) / name) as f:
                    pairs = dict(parse_pairs(f.read(1 << 16).decode("utf-8")))
                size = int(pairs.get("size", "-1"))
                landed = int(pairs.get("offset", size))
            except (OSError, UnicodeDecodeError, ValueError):
                continue
            if pairs.get("state") != ACTIVE or not pairs.get("source") or landed != size:
                continue
            for base in roots.values():
                rel = _relative(base / pairs["source"], source)
                if rel:
                    out[rel] = size
    return out


def _sent(receipts: Receipts, files: dict[str, str], not_yet: str) -> Verdict:
    wait = GO
    for rel, digest in sorted(files.items()):
        receipt = receipts.receipt(rel, digest)
        if receipt == REJECTED:
            return kept(f"the receiver rejected records of {rel}")  # as upstream's guide prints it
        if receipt != ACCEPTED and wait.go:
            wait = waiting(not_yet)
    return wait


def _chain_sent(root: Path, session: str, landed: Landed, receipts: Receipts) -> Verdict:
    chain = Chain(root, session)
    try:
        rounds = chain.files()
    except RoundError as exc:
        return kept(f"{exc}; `asz-pipeline verify` says what is wrong")
    if not rounds:
        return waiting("not parsed or not sent yet")
    head = rounds[-1].path
    try:
        with open_read(head) as f:
            header = json.loads(f.readline())
    except (OSError, ValueError) as exc:
        return kept(f"the head round {head} cannot be read ({exc}); `asz-pipeline verify` says what is wrong")
    if header.get("session") != session or header.get("conversation", session) != session:
        return kept(f"the head round {head} names session {header.get('session')!r}, not {session}; "
                    f"`asz-pipeline verify` says what is wrong")
    through = header.get("through_seq")
    if not isinstance(through, int) or through < landed.max_seq:
        return waiting("not parsed or not sent yet")
    if through > landed.max_seq:
        return kept(f"the head round {head} reaches sequence {through}, past the last landed file, "
                    f"{landed.max_seq}: a landed file is missing; `asz-pipeline verify` names it")
    files = {f"{CONVERSATIONS}/{session}/rounds/{r.path.name}": sha256_of(r.path) for r in rounds}
    return _sent(receipts, files, "not parsed or not sent yet")
