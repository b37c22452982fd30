"""Every read the page makes of a storage root: the conversations, one's document, one landed
record, a session's provider-body files, one rebuilt body.

The page serves what is in the root and nothing else, so this is the one place that opens it:

1. A conversation is a session directory of the root. Its id is one safe path segment
   (:func:`~asz_core.root.layout.check_id`); a name starting with ``_`` or ``.`` is the host's.
2. Nothing is followed through a link: a session directory, a stream directory or a landed file
   that is a symbolic link is not part of the root as the page sees it (a link could point
   anywhere on the machine).
3. What a reader withholds (the instance's ``view.hide`` and the request's ``hide``) is withheld
   as each record is read: the document by :mod:`asz_core.view`, a record here, the search text
   here (a search must not find a conversation by a word only a withheld record holds), and no
   provider body while anything is withheld.
4. The list is read once per session and kept until the session's landed files change (a landed
   file is immutable, so a file added or removed, which moves its directory's modification time,
   is the only change); a listing made in the last second is reused.
5. A conversation's document is upstream's ``asz.view`` (:func:`asz_core.view.build_view`), built
   from its rounds and landed files once for each set of withheld names and kept until a file
   lands or a round is written (the same directory times as rule 4). What the page shows beyond
   it, :meth:`Catalogue.additions`, is served apart, so the document stays upstream's.
"""

from __future__ import annotations

import base64
import json
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from asz_core.page.errors import BadRequest, Forbidden, NotFound
from asz_core.providerbody import ProviderBodyError
from asz_core.root import confined
from asz_core.root.durable import open_landed, open_read, read_bytes
from asz_core.root.layout import RefusedId, check_id
from asz_core.root.storage import file_dirs
from asz_core.sessiondata.errors import SessionDataError
from asz_core.sessiondata.times import parse_instant
from asz_core.view import BodyWithheld, NoRounds, NotABody, Session, UnknownSession, build_view, check_hide
from asz_core.view.files import PROVIDER_BODY, LandedFile, session_files
from asz_core.view.walk import walk

__all__ = ["MAX_FILES", "TEXT_CLIP", "CallUsage", "Catalogue", "Digest", "clip_utf8"]

#: Upstream's clip of a node's text: the longest prefix of whole characters within this many bytes.
TEXT_CLIP: Final = 2000
#: At most this many provider-body files in one request to the files endpoint (upstream's bound).
MAX_FILES: Final = 32
#: How long a listing of the root is reused before the sessions are looked at again.
_RELIST_SECONDS: Final = 1.0
_FROM_EXTERNAL: Final = "external"
#: A person's input flagged so is not a talk: the runtime wrote it (a summary after a reset, an
#: injected reminder).
_NOT_A_TALK: Final = ("reset_summary", "injected")
_FROM_AGENT: Final = "agent"
#: How many built documents are kept (each the size of a conversation's structure, not its bodies).
_DOCUMENTS_KEPT: Final = 16


def clip_utf8(text: str, limit: int = TEXT_CLIP) -> str:
    """The longest prefix of whole characters of ``text`` within ``limit`` UTF-8 bytes."""
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) <= limit:
        return text
    return raw[:limit].decode("utf-8", "ignore")


@dataclass(frozen=True)
class CallUsage:
    """The tokens one model call reported: its last fragment that carried usage; ``reported`` is
    false for a call none of whose records carried usage (its counts are then zero, not known)."""

    session: str
    project: str
    stream: str
    call: str
    model: str | None
    time_ns: int | None
    in_: int = 0
    out: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reported: bool = True


@dataclass
class Digest:
    """What the list needs of one session, read once."""

    id: str
    stamp: tuple[tuple[str, int, int], ...]
    title: str = ""
    project: str = ""
    runtime: str = ""
    dialect: str = ""
    first_ns: int | None = None
    last_ns: int | None = None
    talks: int = 0
    steps: int = 0
    llm_calls: int = 0
    rounds: int = 0
    streams: int = 0
    bash_runs: int = 0
    provider_bodies: int = 0
    problems: int = 0
    models: list[str] = field(default_factory=list)
    calls: list[CallUsage] = field(default_factory=list)
    text: str = ""          #: lower-cased prompts, replies, tool inputs and results, for search

    def tokens(self) -> dict[str, int]:
        return {"in": sum(c.in_ for c in self.calls), "out": sum(c.out for c in self.calls),
                "cache_read": sum(c.cache_read for c in self.calls),
                "cache_write": sum(c.cache_write for c in self.calls)}

    def row(self) -> dict[str, Any]:
        """Upstream's row (``id`` … ``bash_runs``; what this root cannot count yet is null), then
        what this page adds: ``project``, ``runtime``, ``models``, ``tokens``, ``provider_bodies``."""
        return {
            "id": self.id, "title": self.title, "talks": self.talks, "steps": self.steps,
            "streams": self.streams, "segments": None, "rounds": self.rounds,
            "from": _ms(self.first_ns), "to": _ms(self.last_ns), "unresolved": 0,
            "changes": None, "lines_added": None, "lines_removed": None,
            "llm_calls": self.llm_calls, "subagents": max(self.streams - 1, 0),
            "bash_runs": self.bash_runs,
            "project": self.project, "runtime": self.runtime, "models": self.models,
            "tokens": self.tokens(), "provider_bodies": self.provider_bodies,
            "problems": self.problems,
        }


def _ms(nanos: int | None) -> int | None:
    return None if nanos is None else nanos // 1_000_000


def _is_link(path: Path) -> bool:
    return os.path.islink(path)


class Catalogue:
    """The conversations of the root at ``root``, as the page reads them. ``hide`` is the
    instance's ``view.hide``, withheld from every reader."""

    def __init__(self, root: Path, hide: Iterable[str] = ()) -> None:
        self.root = root
        self.hide = check_hide(hide)
        self._lock = threading.Lock()
        self._digests: dict[str, Digest] = {}
        self._listed_at = float("-inf")
        self._listing: list[Digest] = []
        self._documents: OrderedDict[tuple[str, tuple[str, ...]], tuple[Any, dict[str, Any]]] = OrderedDict()

    # ---- which sessions, which files ---------------------------------------------------

    def session_dir(self, conversation: str) -> Path:
        """The directory of ``conversation``; :class:`NotFound` for an id that cannot name one,
        a session that is not there, or one reached through a link."""
        try:
            check_id(conversation, "conversation id")
        except RefusedId:
            raise NotFound(f"{conversation!r} cannot name a conversation") from None
        path = self.root / conversation
        if conversation.startswith(("_", ".")) or _is_link(path) or not path.is_dir():
            raise NotFound(f"no conversation {conversation!r} in this root")
        return path

    def _files(self, session_dir: Path) -> list[LandedFile]:
        # A landed file, or the directory holding it, that is a link is not read (rule 2).
        return [f for f in session_files(session_dir)
                if not _is_link(f.path) and not _is_link(f.path.parent)
                and not _is_link(f.path.parent.parent)]

    def _stamp(self, session_dir: Path) -> tuple[tuple[str, int, int], ...]:
        # A landed file is never changed in place: one is added or removed, and either changes
        # the modification time of the directory holding it. So the directories are stat-ed,
        # not the files (a few calls a session rather than one a file).
        out = []
        # none listed through a link (rule 2)
        for directory in (*file_dirs(session_dir), self._rounds_dir(session_dir.name)):
            try:
                st = directory.stat(follow_symlinks=False)  # a link's own, not what it points at
            except OSError:
                continue
            out.append((directory.name, st.st_ino, st.st_mtime_ns))
        return tuple(out)

    def _rounds_dir(self, conversation: str) -> Path:
        return self.root / "_conversations" / conversation / "rounds"

    def _rounds(self, conversation: str) -> int:
        """How many rounds the conversation's chain holds (``r<NNNNNN>-….sf``), none through a link."""
        rounds = self._rounds_dir(conversation)
        if any(_is_link(p) for p in (rounds.parent.parent, rounds.parent, rounds)):
            return 0
        try:
            return sum(1 for name in confined.listdir(rounds) if name.startswith("r") and name.endswith(".sf"))
        except OSError:
            return 0

    def session_ids(self) -> list[str]:
        """The root's sessions by id, as the list reads them (no host name, no link)."""
        try:
            names = sorted(os.listdir(self.root))
        except OSError:
            return []
        return [n for n in names if not n.startswith(("_", ".")) and not _is_link(self.root / n)
                and (self.root / n).is_dir()]

    # ---- the list ------------------------------------------------------------------------

    def digests(self) -> list[Digest]:
        """Every session of the root, newest first (by last activity; a session with no time
        last)."""
        with self._lock:
            now = time.monotonic()
            if now - self._listed_at < _RELIST_SECONDS:
                return self._listing
            kept: dict[str, Digest] = {}
            for session in self.session_ids():
                session_dir = self.root / session
                stamp = self._stamp(session_dir)
                held = self._digests.get(session)
                kept[session] = held if held is not None and held.stamp == stamp else \
                    self._digest(session, session_dir, stamp)
            self._digests = kept
            self._listing = sorted(kept.values(), key=lambda d: (d.last_ns is None, -(d.last_ns or 0), d.id))
            self._listed_at = time.monotonic()
            return self._listing

    def refresh(self) -> None:
        """Look at the root again at the next read rather than reuse the last listing (a pass
        beside the page has just landed)."""
        with self._lock:
            self._listed_at = float("-inf")

    def last_landed_ms(self) -> int | None:
        """When a file last landed in (or left) the root as the list saw it: the newest
        modification time of the directories it stat-ed, in unix milliseconds."""
        newest = max((mtime for d in self.digests() for _, _, mtime in d.stamp), default=None)
        return None if newest is None else newest // 1_000_000

    def conversations(self) -> list[dict[str, Any]]:
        """``/api/conversations``: one row per conversation, newest first."""
        return [d.row() for d in self.digests()]

    def search(self, words: str) -> list[str]:
        """The ids of the conversations whose prompts, replies, tool inputs or results hold every
        word of ``words`` (case-insensitive), newest first."""
        terms = [w for w in words.lower().split() if w]
        return [d.id for d in self.digests() if all(t in d.text for t in terms)]

    def _digest(self, session: str, session_dir: Path, stamp: tuple[tuple[str, int, int], ...]) -> Digest:
        digest = Digest(id=session, stamp=stamp)
        reader = _DigestReader(digest, self.hide)
        for landed in self._files(session_dir):
            if landed.group == PROVIDER_BODY:
                digest.provider_bodies += 1
                continue
            reader.read(landed)
        reader.finish()
        digest.rounds = self._rounds(session)
        return digest

    # ---- one conversation ----------------------------------------------------------------

    def withheld(self, asked: Iterable[str]) -> tuple[str, ...]:
        """What a reader who asked to withhold ``asked`` is withheld: that and the instance's."""
        try:
            return check_hide([*self.hide, *asked])
        except ValueError as exc:
            raise BadRequest(str(exc)) from None

    def document(self, conversation: str, hide: tuple[str, ...]) -> dict[str, Any]:
        """``/api/c/{id}/view``: upstream's ``asz.view`` document of the conversation less what
        ``hide`` withholds (rule 5). Not to be changed by the caller: it is kept for the next."""
        session_dir = self.session_dir(conversation)
        files = self._files(session_dir)
        if len(files) != len(session_files(session_dir)):
            # The document reads every landed file of the session; one reached through a link
            # could be anything on the machine (rule 2), so the session is not drawn at all.
            raise NotFound(f"conversation {conversation} holds a landed file reached through a link; "
                           f"the page follows no link out of the root")
        if any(_is_link(p) for p in (self.root / "_conversations", self._rounds_dir(conversation).parent,
                                     self._rounds_dir(conversation))):
            raise NotFound(f"conversation {conversation}'s rounds are reached through a link; "
                           f"the page follows no link out of the root")
        key, stamp = (conversation, tuple(sorted(hide))), self._stamp(session_dir)
        with self._lock:
            kept = self._documents.get(key)
            if kept is not None and kept[0] == stamp:
                self._documents.move_to_end(key)
                return kept[1]
        try:
            doc = build_view(self.root, conversation, hide=hide)
        except NoRounds as exc:
            raise NotFound(f"{exc} (`asz-pipeline parse` writes them; `serve --watch` parses after "
                           f"each pass)") from None
        except UnknownSession as exc:
            raise NotFound(str(exc)) from None
        with self._lock:
            self._documents[key] = (stamp, doc)
            self._documents.move_to_end(key)
            while len(self._documents) > _DOCUMENTS_KEPT:
                self._documents.popitem(last=False)
        return doc

    def additions(self, conversation: str, hide: tuple[str, ...]) -> dict[str, Any]:
        """``/api/c/{id}/additions``: what the page shows that upstream's document does not carry.

        * ``prompts``: each text a person sent (``from`` external, text and no result, not injected
          nor a summary after a reset) on a record no node of the document shows the text of: a
          transcript written before the runtime named a person's input as such gives its talks no
          input node. Each with its ``stream``, ``ref``, ``at``, ``text`` (clipped as the
          document's) and ``bytes``; none from a record that carries a withheld flag.
        * ``models``: the model each call's first record names, by ``"seq:row"`` (the ``ref`` of
          the document's ``llm.call``).
        """
        doc = self.document(conversation, hide)
        shown = {(n["ref"]["seq"], n["ref"]["row"]) for n in walk(doc)
                 if "ref" in n and ("text" in n or n.get("state") == "omitted")}
        prompts: list[dict[str, Any]] = []
        models: dict[str, str] = {}
        first: dict[tuple[str, str], str] = {}  # each call's first record, where its node stands
        for landed in self._files(self.session_dir(conversation)):
            if landed.group != "streams":
                continue
            for row, record in _plain_records(landed):
                call, model = record.get("call"), record.get("model")
                if isinstance(call, str):
                    at = first.setdefault((landed.owner or "", call), f"{landed.seq}:{row}")
                    if isinstance(model, str):
                        models.setdefault(at, model)
                flags = record.get("flags") or ()
                if (landed.seq, row) in shown or any(f in hide or f in _NOT_A_TALK for f in flags):
                    continue
                parts = [p for p in record.get("parts") or () if isinstance(p, dict)]
                texts = [p["text"] for p in parts if p.get("k") == "text" and isinstance(p.get("text"), str)]
                if record.get("from") != _FROM_EXTERNAL or not texts or any(p.get("k") == "result" for p in parts):
                    continue
                full = "\n\n".join(texts)
                when = parse_instant(record["time"]) if isinstance(record.get("time"), str) else None
                prompts.append({"stream": landed.owner or "main", "ref": {"seq": landed.seq, "row": row},
                                "at": 0 if when is None else when // 1_000_000, "text": clip_utf8(full),
                                "bytes": len(full.encode("utf-8", "surrogatepass"))})
        return {"prompts": prompts, "models": models}

    def record(self, conversation: str, seq: int, row: int, hide: tuple[str, ...]) -> dict[str, Any]:
        """``/api/c/{id}/record/{seq}/{row}``: the record as landed, its content withheld when it
        carries a withheld flag; 403 for a provider body's record while anything is withheld."""
        landed = self._landed(conversation, seq)
        if landed.group == PROVIDER_BODY and hide:
            raise Forbidden(f"{', '.join(hide)} withheld: a provider body's record is not served")
        line = _raw_record(landed, row)
        if line is None:
            raise NotFound(f"file {seq} of {conversation} has no record {row}")
        value = json.loads(line)
        if any(flag in hide for flag in value.get("flags", [])):
            value = _withhold_record(value)
        out: dict[str, Any] = dict(value)
        out.setdefault("dropped", [])
        return out

    def files(self, conversation: str, session: str, seqs: list[int], hide: tuple[str, ...]) -> list[dict[str, Any]]:
        """``/api/c/{id}/files``: provider-body files whole, base64, by seq; a seq with no landed
        file is left out; any other file is refused (400); nothing while anything is withheld (403)."""
        if session != conversation:
            raise NotFound(f"session {session!r} is not part of conversation {conversation!r}")
        if len(seqs) > MAX_FILES:
            raise BadRequest(f"at most {MAX_FILES} files a request, not {len(seqs)}")
        if hide:
            raise Forbidden(f"{', '.join(hide)} withheld: no provider body is served")
        by_seq = {f.seq: f for f in self._files(self.session_dir(conversation))}
        out = []
        for seq in seqs:
            landed = by_seq.get(seq)
            if landed is None:
                continue
            if landed.group != PROVIDER_BODY:
                raise BadRequest(f"file {seq} of {conversation} is a {landed.kind} file, not a provider body")
            try:
                with open_landed(landed.path):
                    pass
            except (SessionDataError, OSError) as exc:  # LinkRefused is an OSError
                raise BadRequest(f"file {seq} of {conversation}: its header does not read ({exc})") from None
            data = read_bytes(landed.path)
            out.append({"seq": seq, "file": landed.rel, "bytes": len(data),
                        "data": base64.b64encode(data).decode("ascii")})
        return out

    def body(self, conversation: str, seq: int, row: int, hide: tuple[str, ...]) -> bytes:
        """One provider body, rebuilt to its exact bytes (what the page's request/response shows)."""
        self.session_dir(conversation)
        if hide:
            raise Forbidden(f"{', '.join(hide)} withheld: no provider body is served")
        try:
            return Session(self.root, conversation).body((seq, row))
        except NotABody as exc:
            raise NotFound(str(exc)) from None
        except BodyWithheld as exc:
            raise Forbidden(str(exc)) from None
        except ProviderBodyError as exc:  # only a skeleton kept, a piece taken out, or damaged
            raise NotFound(f"provider body {seq}:{row} of {conversation} does not rebuild: {exc}") from None

    def _landed(self, conversation: str, seq: int) -> LandedFile:
        for landed in self._files(self.session_dir(conversation)):
            if landed.seq == seq:
                return landed
        raise NotFound(f"conversation {conversation} has no landed file {seq}")


# ---- reading a session for the list ------------------------------------------------------


class _DigestReader:
    """Fills a :class:`Digest` from the session's stream files, one line at a time.

    The list reads every session, so it reads lines as plain JSON and takes the few fields it
    shows, rather than checking each record by the format's rules (the document and the record
    endpoint do that); a line that is not JSON, and a file whose header is not, count as problems.
    """

    def __init__(self, digest: Digest, hide: tuple[str, ...]) -> None:
        self.digest = digest
        self.hide = hide
        self.streams: set[str] = set()
        self.models: dict[str, None] = {}
        self.usage: dict[tuple[str, str], CallUsage] = {}
        self.calls: dict[tuple[str, str], tuple[str | None, int | None]] = {}  # its model and time
        self.label: str | None = None
        self.first_prompt: str | None = None
        self.cwd: str | None = None
        self.src_dir: str | None = None
        self.text: list[str] = []

    def read(self, landed: LandedFile) -> None:
        stream = landed.owner or "main"
        in_stream = landed.group == "streams"
        if in_stream:
            self.streams.add(stream)
        try:
            with open_read(landed.path) as fh:
                header = json.loads(fh.readline())
                self._header(header)
                for line in fh:
                    value = json.loads(line)
                    if isinstance(value, dict) and "ord" in value:
                        self._record(stream, in_stream, value)
        except (OSError, ValueError):
            self.digest.problems += 1

    def _header(self, header: Any) -> None:
        if not isinstance(header, dict):
            raise ValueError("header is not an object")
        if not self.digest.runtime:
            self.digest.runtime = str(header.get("adapter", "")).split("/")[0]
            self.digest.dialect = str(header.get("dialect", ""))
        src = header.get("src")
        if self.src_dir is None and isinstance(src, str) and "/" in src:
            self.src_dir = src.rsplit("/", 1)[0]

    def _record(self, stream: str, in_stream: bool, record: dict[str, Any]) -> None:
        digest = self.digest
        when = record.get("time")
        nanos = parse_instant(when) if when is not None else None
        if nanos is not None:
            digest.first_ns = nanos if digest.first_ns is None else min(digest.first_ns, nanos)
            digest.last_ns = nanos if digest.last_ns is None else max(digest.last_ns, nanos)
        if not in_stream:
            return
        digest.steps += 1
        model = record.get("model")
        if isinstance(model, str) and not model.startswith("<"):
            self.models.setdefault(model, None)
        label = record.get("label")
        if stream == "main" and isinstance(label, str):
            self.label = label
        call = record.get("call")
        if isinstance(call, str):
            known = self.calls.get((stream, call), (None, None))
            self.calls[(stream, call)] = (model if isinstance(model, str) else known[0],
                                          nanos if nanos is not None else known[1])
            usage = record.get("usage")
            if isinstance(usage, dict):
                self.usage[(stream, call)] = CallUsage(
                    session=digest.id, project="", stream=stream, call=call,
                    model=model if isinstance(model, str) else None, time_ns=nanos,
                    in_=_count(usage, "in"), out=_count(usage, "out"),
                    cache_read=_count(usage, "cache_read"), cache_write=_count(usage, "cache_write"))
        flags = record.get("flags") or ()
        if any(flag in self.hide for flag in flags):
            return  # rule 3: nothing a withheld record holds is searchable
        parts = [p for p in record.get("parts") or () if isinstance(p, dict)]
        kinds = {p.get("k") for p in parts}
        if record.get("from") == _FROM_EXTERNAL and "text" in kinds and "result" not in kinds and stream == "main" \
                and not any(flag in _NOT_A_TALK for flag in flags):
            digest.talks += 1
            if self.first_prompt is None:
                self.first_prompt = next((str(p["text"]) for p in parts if p.get("k") == "text" and "text" in p), None)
        for part in parts:
            kind, name = part.get("k"), part.get("name")
            if kind == "call" and name == "Bash":
                digest.bash_runs += 1
            text = part.get("text")
            if isinstance(text, str) and kind in ("text", "result", "reasoning"):
                self.text.append(clip_utf8(text))
            elif "data" in part:
                if kind == "call":
                    self.text.append(clip_utf8(json.dumps(part["data"], ensure_ascii=False)))
                elif self.cwd is None and kind == "data":
                    self.cwd = _cwd(part["data"])
            if isinstance(name, str):
                self.text.append(name)

    def finish(self) -> None:
        digest = self.digest
        digest.streams = len(self.streams)
        digest.models = list(self.models)
        digest.llm_calls = len(self.calls)
        digest.project = self.cwd or self.src_dir or ""
        title = self.label or self.first_prompt or ""
        digest.title = " ".join(title.split())[:200]
        digest.calls = [CallUsage(**{**u.__dict__, "project": digest.project}) for u in self.usage.values()]
        digest.calls += [CallUsage(digest.id, digest.project, stream, call, model, nanos, reported=False)
                         for (stream, call), (model, nanos) in self.calls.items() if (stream, call) not in self.usage]
        digest.text = "\n".join(self.text).lower()


def _count(usage: dict[str, Any], key: str) -> int:
    value = usage.get(key)
    return value if type(value) is int and value >= 0 else 0


def _cwd(value: Any) -> str | None:
    for holder in _dicts(value, depth=2):
        cwd = holder.get("cwd")
        if isinstance(cwd, str) and cwd:
            return cwd
    return None


def _dicts(value: Any, depth: int) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
        if depth > 0:
            for inner in value.values():
                yield from _dicts(inner, depth - 1)


# ---- reading one record ------------------------------------------------------------------


def _raw_record(landed: LandedFile, row: int) -> bytes | None:
    """The landed line of record ``row`` (from 1), once the file reads to it by the format's rules."""
    if row < 1:
        return None
    try:
        with open_landed(landed.path) as sd:
            for n, _ in enumerate(sd, start=1):
                if n == row:
                    break
            else:
                return None
        with open_read(landed.path) as fh:
            for n, line in enumerate(fh):
                if n == row:  # line 0 is the header
                    return line
    except (SessionDataError, OSError):  # a link at its name (LinkRefused) reads as no record
        return None
    return None


def _withhold_record(value: dict[str, Any]) -> dict[str, Any]:
    """The envelope and flags stay; every part keeps its kind and size, loses what it holds."""
    out = dict(value)
    parts = []
    for part in value.get("parts", []):
        kept = {k: v for k, v in part.items() if k not in ("text", "data", "encoding")}
        kept["state"] = "omitted"
        parts.append(kept)
    out["parts"] = parts
    return out


# ---- reading a document and plain records ----------------------------------------------


def _plain_records(landed: LandedFile) -> Iterator[tuple[int, dict[str, Any]]]:
    """The records of a landed file as plain JSON with their row (from 1); a line that is not an
    object is skipped (the document and the record endpoint read by the format's rules)."""
    try:
        with open_read(landed.path) as fh:
            fh.readline()
            for row, line in enumerate(fh, start=1):
                try:
                    value = json.loads(line)
                except ValueError:
                    continue
                if isinstance(value, dict) and "ord" in value:
                    yield row, value
    except OSError:
        return
