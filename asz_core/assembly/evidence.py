"""A session's landed evidence, read for assembly: identifiers, roles, flags and part kinds.

Assembly needs identifiers, not content, so a record is reduced to an :class:`Entry` as it is
read: its landed position, the file's kind and stream, the record's join keys (``id``,
``parent``, ``call``, ``run``, ``continues``, ``tool``, ``child``, ``batch``, ``started_by``,
``label``), who produced it, its time, trigger and flags, and one :class:`Block` per part. No
runtime's field is read: a record arrives converted, in the format's own role names.

Rules:

1. A landed file is read whole once: its SHA-256 (which a round binds) and its records come
   from the same bytes, so a round never binds a file other than the one it read.
2. Rows count from 1 after the header; the closing line ends the records.
3. A ``.sk`` skeleton stands for a landed file only where the ``.sd`` is gone.
4. A record whose line does not decode is not evidence; it is counted, never guessed at.
5. What a file reduces to is kept beside the session (``<session>/index/assembly/<seq>.json``),
   derived and disposable: a later parse reads it instead of the landed file, so a parse reads
   no landed file it has read before, and a landed file lost after a round bound it still
   assembles as it did. A cache that does not read is ignored and made again from the file.
6. A file in a version's stream (``main.v2``: a rewritten source a person accepted, see
   :mod:`asz_core.root.versions`) is read as its first version's stream (``main``).
"""

from __future__ import annotations

import contextlib
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from asz_core.root import confined
from asz_core.root.durable import read_bytes, sha256_of
from asz_core.root.storage import landed_files
from asz_core.root.versions import base_stream
from asz_core.sessiondata.times import parse_instant

__all__ = ["Block", "Entry", "LandedEvidence", "cache_dir", "cached_seqs", "flags_of", "landed_seqs", "load_session",
           "read_landed", "sweep_cache"]

# Record kinds, from the file first and from the record's producer otherwise.
ASSISTANT, USER, SYSTEM, UNKNOWN = "assistant", "user", "system", "unknown"
META, JOURNAL, MANIFEST, SCRIPT = "meta", "journal", "manifest", "script"
CHANGES, PROVIDER_BODY, EXECUTION = "changes", "provider_body", "execution"
_FILE_KINDS = {"agent_meta": META, "journal": JOURNAL, "workflow_manifest": MANIFEST,
               "workflow_script": SCRIPT, "changes": CHANGES, "provider_body": PROVIDER_BODY,
               "execution": EXECUTION}
_FROM_KINDS = {"agent": ASSISTANT, "external": USER, "runtime": SYSTEM}

# Flags, as bits: the names are the format's (Session Data, "Flags").
SYNTHETIC, CONTEXT_RESET, RESET_SUMMARY, FINISHED = 1, 2, 4, 8
EXTERNAL_INPUT, INJECTED, CHILD_RESULT, ERROR = 16, 32, 64, 128
LAUNCH_ACK, TURN_DURATION, COMMAND, NOTICE, AUXILIARY = 256, 512, 1024, 2048, 4096
_FLAG_BITS = {"synthetic": SYNTHETIC, "context_reset": CONTEXT_RESET, "reset_summary": RESET_SUMMARY,
              "finished": FINISHED, "external_input": EXTERNAL_INPUT, "injected": INJECTED,
              "child_result": CHILD_RESULT, "error": ERROR, "launch_ack": LAUNCH_ACK,
              "turn_duration": TURN_DURATION, "command": COMMAND, "notice": NOTICE, "auxiliary": AUXILIARY}

# Part kinds that matter to a join.
CALL, RESULT, TEXT, REASONING, OTHER = "call", "result", "text", "reasoning", "other"
#: a data part that is a workspace change record (``changes/1``): counted, never a step
CHANGE = "change"


def flags_of(names: object) -> int:
    bits = 0
    if isinstance(names, list):
        for name in names:
            bits |= _FLAG_BITS.get(name, 0) if isinstance(name, str) else 0
    return bits


@dataclass(slots=True)
class Block:
    """One part of a record, by position: what it is and the tool id a join needs."""

    ord: int
    kind: str
    tool: str = ""      #: a call's ``id``, a result's ``of``
    name: str = ""
    server: str = ""
    server_tool: str = ""
    adds: int = 0       #: a ``changes/1`` record's lines added, summed over its files
    dels: int = 0


@dataclass(slots=True)
class Entry:
    seq: int
    row: int
    kind: str
    stream: str
    batch: str
    record: str
    parent: str
    call: str
    run: str
    continues: str
    tool: str
    child: str
    started_by: str
    label: str
    trigger: str
    flags: int
    ts: int                 #: nanoseconds since the epoch; 0 when the record has no time
    blocks: list[Block]
    #: a provider body's join keys, from its manifest: ``request`` or ``response``, the
    #: provider's id for its request, and the request before it in its chain
    body_role: str = ""
    body_request: str = ""
    body_previous: str = ""
    ord: int = 0            #: the record's line in its source (a gap in a stream's lines is a join's business)

    @property
    def ref(self) -> tuple[int, int, None]:
        return (self.seq, self.row, None)


@dataclass(slots=True)
class LandedEvidence:
    """One landed file: what a round binds (its digest) and what assembly reads (its entries)."""

    seq: int
    path: Path
    kind: str
    sha256: str
    entries: list[Entry]
    undecodable: int = 0
    times: list[int] = field(default_factory=list)  #: the range of record times, when any


def landed_seqs(session_dir: Path) -> dict[int, Path]:
    """Each landed sequence of a session and its file (the ``.sd``; a ``.sk`` where it is gone)."""
    out: dict[int, Path] = {}
    for seq, path in landed_files(session_dir):
        if seq not in out or path.suffix == ".sd":
            out[seq] = path
    return out


def _str(obj: dict[str, object], key: str) -> str:
    value = obj.get(key)
    return value if isinstance(value, str) else ""


def _blocks(parts: object) -> list[Block]:
    if not isinstance(parts, list):
        return []
    out = []
    for i, part in enumerate(parts):
        if not isinstance(part, dict):
            out.append(Block(i, OTHER))
            continue
        k = part.get("k")
        if k == "call":
            out.append(Block(i, CALL, _str(part, "id"), _str(part, "name"), _str(part, "server"),
                             _str(part, "server_tool")))
        elif k == "result":
            out.append(Block(i, RESULT, _str(part, "of")))
        elif k == "text":
            out.append(Block(i, TEXT))
        elif k == "reasoning":
            out.append(Block(i, REASONING))
        elif k == "data" and isinstance(part.get("data"), dict) and part["data"].get("schema") == "changes/1":
            out.append(_change(i, part["data"]))
        else:
            out.append(Block(i, OTHER))
    return out


def _change(i: int, record: dict[str, object]) -> Block:
    """A change record by its identity (who captured it, and its id) and the lines its diffs
    add and remove."""
    adds = dels = 0
    files = record.get("changes")
    for change in files if isinstance(files, list) else []:
        if isinstance(change, dict):
            a, d = change.get("additions"), change.get("deletions")
            adds += a if type(a) is int else 0
            dels += d if type(d) is int else 0
    return Block(i, CHANGE, name=f"{_str(record, 'captured_by')}|{_str(record, 'id')}", adds=adds, dels=dels)


def _body_keys(parts: object) -> dict[str, str]:
    """A provider body's join keys, from its manifest (the record's last part); none when the
    manifest does not read, and the body then joins to nothing."""
    if not isinstance(parts, list) or not parts or not isinstance(parts[-1], dict):
        return {}
    manifest = parts[-1].get("data")
    if not isinstance(manifest, dict) or manifest.get("schema") != "provider_body/1":
        return {}
    role = manifest.get("role")
    if role not in ("request", "response"):
        return {}
    # Only the keys the record does not carry come from the manifest, as upstream's index reads
    # them: a body's run and call are its record's (a request's record names its run, a
    # response's its call), so a call a request's manifest alone names joins nothing by it.
    return {"body_role": role, "body_request": _str(manifest, "request"),
            "body_previous": _str(manifest, "previous_request")}


def _lines(path: Path) -> tuple[bytes, list[bytes]]:
    if path.suffix == ".sk":
        import gzip

        data = read_bytes(path)
        return data, gzip.decompress(data).split(b"\n")
    data = read_bytes(path)
    return data, data.split(b"\n")


def _removed_digest(header: dict[str, object]) -> str:
    """The digest a skeleton's header records of the landed file it stands for ("" if none)."""
    removed = header.get("removed")
    return _str(removed, "digest") if isinstance(removed, dict) else ""


def landed_digest(path: Path) -> str:
    """The SHA-256 a round's input digest binds for ``path``: the landed file's whole bytes, or,
    for a skeleton, the digest its header records of the file it replaced (Session Data,
    "Skeletons"), so a chain still verifies once retention has removed the content."""
    if path.suffix == ".sk":
        _, lines = _lines(path)
        try:
            header = orjson.loads(lines[0]) if lines else {}
        except orjson.JSONDecodeError:
            header = {}
        return _removed_digest(header) if isinstance(header, dict) else ""
    return sha256_of(path)


def read_landed(seq: int, path: Path) -> LandedEvidence:
    """Read one landed file into entries (rules 1, 2 and 4)."""
    data, lines = _lines(path)
    try:
        header = orjson.loads(lines[0]) if lines else {}
    except orjson.JSONDecodeError:
        header = {}
    if not isinstance(header, dict):
        header = {}
    # a skeleton binds the digest of the landed file it replaced, as that file did
    digest = _removed_digest(header) if path.suffix == ".sk" else hashlib.sha256(data).hexdigest()
    file_kind = _FILE_KINDS.get(_str(header, "kind"), "")
    # a rewritten source accepted as a new version lands in a stream of its own (``main.v2``);
    # its records are the same stream's, where a record already landed under its id is a duplicate
    stream, file_batch = base_stream(_str(header, "stream")), _str(header, "batch")
    entries: list[Entry] = []
    undecodable = 0
    lo = hi = 0
    for row, line in enumerate(lines[1:], start=1):
        if not line or line.startswith(b'{"t":"end"'):
            break
        try:
            rec = orjson.loads(line)
        except orjson.JSONDecodeError:
            undecodable += 1
            continue
        if not isinstance(rec, dict):
            undecodable += 1
            continue
        ts = parse_instant(rec.get("time")) or 0
        if ts:
            lo = ts if not lo or ts < lo else lo
            hi = ts if ts > hi else hi
        kind = file_kind or _FROM_KINDS.get(_str(rec, "from"), UNKNOWN)
        body = _body_keys(rec.get("parts")) if kind == PROVIDER_BODY else {}
        entries.append(Entry(
            seq=seq, row=row, kind=kind, stream=stream, batch=_str(rec, "batch") or file_batch,
            record=_str(rec, "id"), parent=_str(rec, "parent"), call=_str(rec, "call"),
            run=_str(rec, "run"), continues=_str(rec, "continues"), tool=_str(rec, "tool"),
            child=_str(rec, "child"), started_by=_str(rec, "started_by"), label=_str(rec, "label"),
            trigger=_str(rec, "trigger"), flags=flags_of(rec.get("flags")), ts=ts,
            ord=rec["ord"] if type(rec.get("ord")) is int else 0,
            blocks=_blocks(rec.get("parts")) if kind != PROVIDER_BODY else [], **body))
    return LandedEvidence(seq, path, _str(header, "kind"), digest, entries, undecodable,
                          [lo, hi] if lo else [])


_CACHE_FORMAT = 4  # 4: a provider body's run is its record's alone


def cache_dir(session_dir: Path) -> Path:
    return session_dir / "index" / "assembly"


def _load_cached(path: Path, seq: int) -> LandedEvidence | None:
    try:
        data = orjson.loads(read_bytes(path))
        if data.get("format") != _CACHE_FORMAT or data.get("seq") != seq:
            return None
        entries = [Entry(**{**e, "blocks": [Block(**b) for b in e["blocks"]]}) for e in data["entries"]]
        return LandedEvidence(seq, Path(data["path"]), data["kind"], data["sha256"], entries,
                              int(data["undecodable"]), list(data["times"]))
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError):
        return None


def _store(path: Path, ev: LandedEvidence) -> None:
    from asz_core.root.durable import make_dirs, write_replace

    make_dirs(path.parent)
    doc = {"format": _CACHE_FORMAT, "seq": ev.seq, "path": str(ev.path), "kind": ev.kind, "sha256": ev.sha256,
           "undecodable": ev.undecodable, "times": ev.times, "entries": ev.entries}
    with contextlib.suppress(OSError):  # a cache that cannot be written is made again next time
        write_replace(path, orjson.dumps(doc), derived=True)


def sweep_cache(session_dir: Path) -> None:
    """Remove what a parser killed while writing the cache left (its temporary files); only the
    holder of the session's chain lock calls this, so no live writer's file goes."""
    directory = cache_dir(session_dir)
    with contextlib.suppress(FileNotFoundError, NotADirectoryError, confined.LinkRefused):  # nothing through a link
        for name in confined.listdir(directory):
            if name.startswith(".tmp-"):
                with contextlib.suppress(FileNotFoundError):
                    confined.unlink(directory / name)


def cached_seqs(session_dir: Path) -> set[int]:
    """The sequences the derived cache holds: landed files read before, gone or not (none where
    the cache is reached through a link: it is derived, and made again from the landed files)."""
    try:
        names = confined.listdir(cache_dir(session_dir))
    except (FileNotFoundError, NotADirectoryError, confined.LinkRefused):
        return set()
    return {int(name[:-5]) for name in names if name.endswith(".json") and name[:-5].isdigit()}


def load_session(session_dir: Path, through_seq: int, seqs: dict[int, Path] | None = None
                 ) -> tuple[list[LandedEvidence], int]:
    """Every landed sequence up to ``through_seq``, from the cache where it is and from the
    landed file otherwise (then cached); returns them in landed order and how many landed files
    were read."""
    seqs = landed_seqs(session_dir) if seqs is None else seqs
    cache = cache_dir(session_dir)
    cached = cached_seqs(session_dir)
    out: list[LandedEvidence] = []
    read = 0
    for seq in sorted(set(seqs) | cached):
        if seq > through_seq:
            continue
        found = _load_cached(cache / f"{seq:06d}.json", seq) if seq in cached else None
        if found is None and seq in seqs:
            found = read_landed(seq, seqs[seq])
            read += 1
            _store(cache / f"{seq:06d}.json", found)
        if found is not None:
            out.append(found)
    return out, read
