"""``<root>/_provider/seen.state``: what the adapter knows of each body file, between passes.

One line per body file: its name, the size and mtime last seen, a prefix of the SHA-256 of
its bytes (for a landed file, of the bytes that landed), its state, the session it belongs
to and the join ids it carries. States:

* ``landed`` — in the root; not read again while its size and mtime stay;
* ``waiting`` — cannot be placed yet (``why`` says what it waits for); tried every pass;
* ``excluded`` — its session's directory is excluded by the session filter;
* ``unreadable`` — not one JSON value two minutes after it was last written, or refused;
* ``changed`` — its bytes changed while a pass was reading it; read again next pass;
* ``conflict`` — its bytes changed after it landed; every pass fails until they are back.

The table is derived: a landed entry is written only after its file landed, and when it is
lost, or does not read (a byte that is not UTF-8, say), it is rebuilt from the landed manifests
(:func:`rebuild_from_root`), the latter with one warning (:attr:`SeenTable.problem`).
``_provider/.lock`` guards each read and write. A line never holds white space inside a value:
an entry that would (a name no body file of Claude Code's has) is not written.

A table upstream's ``asz`` wrote (first line ``schema<TAB>1``; per file its name, size, mtime in
nanoseconds, the first 12 hex characters of its digest, state, session, request, call, previous
request and the session the body names, tab-separated, ``-`` for none) is read too: its landed
lines are landed here, its ``changed`` ones (changed after they landed) conflicts, and every
other line is read again from its file, so nothing lands twice and nothing is lost. It is
written back in this format.

Two files hold it. ``seen.state`` is the whole table, replaced atomically (:meth:`SeenTable.save`)
once when a pass has placed its files and once when it has landed them; its second line names
its generation. While a pass lands, ``seen.log`` takes the entries each landed file changed,
appended and fsynced after the file is durable (:meth:`SeenTable.record`): rewriting the whole
table after every file cost a pass time quadratic in the files it lands. The log's first line
names the generation of the ``seen.state`` it continues; a log left by a pass killed after
``seen.state`` was replaced and before the log was removed names an older generation and is
ignored, and a line a kill cut short (no newline) is ignored. A landed entry the log lost is
found again in the session's manifests (the body is marked landed, not landed again).

Both are read without following a link (:mod:`~asz_core.root.confined`): a ``seen.state``
planted as a link is refused and the table rebuilt from the landed manifests, a ``seen.log``
so planted is refused and not applied; the next save replaces the link, never its target.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Final

from asz_core.root import confined, faults
from asz_core.root.durable import make_dirs, open_private, read_small, write_replace, write_whole
from asz_core.root.locks import FileLock
from asz_core.root.storage import StorageRoot

if TYPE_CHECKING:
    from asz_core.providerbody.manifest import Manifest
    from asz_core.sessiondata.model import Record

__all__ = ["APPEND_STEP", "CHANGED", "CONFLICT", "EXCLUDED", "LANDED", "UNREADABLE", "WAITING", "Seen",
           "SeenTable", "digest_prefix", "landed_bodies", "rebuild_from_root"]

LANDED: Final = "landed"
WAITING: Final = "waiting"
EXCLUDED: Final = "excluded"
UNREADABLE: Final = "unreadable"
CHANGED: Final = "changed"
CONFLICT: Final = "conflict"
STATES: Final = frozenset({LANDED, WAITING, EXCLUDED, UNREADABLE, CHANGED, CONFLICT})

DIRECTORY: Final = "_provider"
_VERSION_LINE: Final = "# asz provider seen.state v1\n"
_GENERATION: Final = "# generation "
_LOG_LINE: Final = "# asz provider seen.log v1 generation "
#: The fault-injection step (:mod:`asz_core.root.faults`) just before a line is appended to the log.
APPEND_STEP: Final = "seen-append"
_PREFIX: Final = 16
#: The shortest digest prefix a line may hold (upstream's table holds 12 hex characters).
_SHORTEST: Final = 12
_UPSTREAM_SCHEMA: Final = "schema\t1"
_WHITE = frozenset(" \t\r\n\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2028\u2029\u3000")


def digest_prefix(sha256_hex: str) -> str:
    return sha256_hex[:_PREFIX]


def same_digest(sha256_hex: str, prefix: str) -> bool:
    """Whether ``prefix``, a line's digest prefix (16 hex characters here, 12 upstream), is the
    start of ``sha256_hex``."""
    return len(prefix) >= _SHORTEST and sha256_hex.startswith(prefix)


class Seen:
    """One body file, as last seen. Empty strings are ids the file does not carry.

    A plain class, not a dataclass: every pass imports it, and a dataclass compiles its
    generated methods at each import.
    """

    __slots__ = ("call", "json", "mtime", "name", "prev", "prompt", "role", "session", "sha", "size", "state", "why")

    def __init__(self, name: str, role: str = "", size: int = 0, mtime: int = 0, sha: str = "", state: str = WAITING,
                 why: str = "", session: str = "", prompt: str = "", prev: str = "", call: str = "",
                 json: int = 1) -> None:
        self.name = name
        self.role = role
        self.size = size
        self.mtime = mtime      #: nanoseconds
        self.sha = sha          #: digest prefix: of the landed bytes once landed, else of the bytes last read
        self.state = state
        self.why = why          #: what a waiting or unreadable file waits for or lacks (one word)
        self.session = session
        self.prompt = prompt    #: a request's prompt id
        self.prev = prev        #: a request's previous request id
        self.call = call        #: a response's message id
        self.json = json        #: 0 when the bytes last read were not one JSON value

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Seen):
            return NotImplemented
        return self.name == other.name and all(getattr(self, k) == getattr(other, k) for k in _LINE_FIELDS)

    __hash__ = None  # type: ignore[assignment]  # mutable: compared by value, never hashed

    def __repr__(self) -> str:
        return f"Seen({self.line().strip() or self.name!r})"

    def line(self) -> str:
        """The entry as one line; ``""`` for one that would not read back as itself (white space
        in its name or a value would split it: no name Claude Code writes has any)."""
        pairs = [f"{name}={value}" for name in _LINE_FIELDS
                 if (value := getattr(self, name)) not in ("", None)]
        line = " ".join([self.name, *pairs])
        if not _WHITE.isdisjoint(self.name) or len(line.split()) != len(pairs) + 1:
            return ""
        return line + "\n"

    @classmethod
    def parse(cls, line: str) -> Seen | None:
        words = line.split()
        if not words or words[0].startswith("#"):
            return None
        entry = cls(words[0])
        for word in words[1:]:
            key, _, value = word.partition("=")
            integer = _LINE_TYPES.get(key)
            if integer is None:
                continue  # a later version's key
            try:
                setattr(entry, key, int(value) if integer else value)
            except ValueError:
                return None
        return entry if entry.state in STATES else None


#: whether each field a line may hold (all but ``name``, in the line's order) is an integer
_LINE_TYPES = {"role": False, "size": True, "mtime": True, "sha": False, "state": False, "why": False,
               "session": False, "prompt": False, "prev": False, "call": False, "json": True}
_LINE_FIELDS = tuple(_LINE_TYPES)


class SeenTable:
    """The table, by file name."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / DIRECTORY / "seen.state"
        self.log_path = root / DIRECTORY / "seen.log"
        self.entries: dict[str, Seen] = {}
        self.rebuilt = False
        #: why ``seen.state`` was there and did not read (it was rebuilt), for one warning
        self.problem: str | None = None
        self.generation = 0               #: of the ``seen.state`` on disk
        self._written: str | None = None  #: the entry lines ``seen.state`` holds, when known
        self._log_found = False           #: a ``seen.log`` was there when the table was read
        self._log_ours = False            #: this table started the ``seen.log`` there now

    def _lock(self) -> FileLock:
        make_dirs(self.path.parent)
        return FileLock(self.path.parent / ".lock", wait=True)

    @classmethod
    def load(cls, root: StorageRoot) -> SeenTable:
        """The table in ``root``, its log applied; rebuilt from the landed manifests when
        ``seen.state`` is missing or does not read (then :attr:`problem` says why)."""
        table = cls(root.path)
        try:
            if table.path.parent.is_dir():
                with table._lock():
                    raw = _read_refusing_links(table.path)
                    try:
                        log = _read_refusing_links(table.log_path)
                    except confined.LinkRefused as exc:  # dropped by the next save, link and all
                        table.problem = f"{exc}; not applied: the bodies it names are found again in their sessions"
                        log = b""
            else:
                raise FileNotFoundError(table.path)
            if raw is None:
                raise FileNotFoundError(table.path)
            text = raw.decode("utf-8")
        except FileNotFoundError:
            return table._rebuilt(root)
        except _StateLinkRefused as exc:
            table.problem = (f"{exc}; rebuilt from the landed provider bodies (it is derived): every file is "
                             f"read once more, nothing lands twice")
            return table._rebuilt(root)
        except UnicodeDecodeError as exc:
            table.problem = (f"{table.path} does not read (byte {exc.start} is not UTF-8); rebuilt from the "
                             f"landed provider bodies (it is derived): every file is read once more, nothing "
                             f"lands twice")
            return table._rebuilt(root)
        table._take(text, log)
        return table

    @classmethod
    def read_only(cls, root: Path) -> SeenTable:
        """The table as ``seen.state`` and ``seen.log`` hold it now, for a reader beside a pass
        (``verify``): no lock taken, nothing written, made or rebuilt, no link followed
        (:class:`~asz_core.root.confined.LinkRefused`); empty when there is none.
        ``UnicodeDecodeError`` when ``seen.state`` does not read (the next pass rebuilds it)."""
        table = cls(root)
        raw = read_small(table.path)  # replaced whole, never in place: one read is one version
        if raw is not None:
            table._take(raw.decode("utf-8"), read_small(table.log_path))
        return table

    def _take(self, text: str, log: bytes | None) -> None:
        """Fill the table from ``seen.state``'s text and ``seen.log``'s bytes (``None``: none)."""
        lines = text.splitlines(keepends=True)
        if lines and lines[0].rstrip("\n") == _UPSTREAM_SCHEMA:
            self.entries = {e.name: e for e in map(_upstream_entry, lines[1:]) if e is not None}
            self._log_found = log is not None  # a log of ours does not continue upstream's table
            return
        for line in lines:
            if line.startswith(_GENERATION) and line[len(_GENERATION):].strip().isdigit():
                self.generation = int(line[len(_GENERATION):])
            entry = Seen.parse(line)
            if entry is not None:
                self.entries[entry.name] = entry
        self._written = "".join(line for line in lines if not line.startswith("#"))
        if log is not None:
            self._log_found = True  # taken in, or dropped, by the next save
            try:
                log_text = log.decode("utf-8")
            except UnicodeDecodeError as exc:  # what it held is found again in the landed manifests
                self.problem = (f"{self.log_path} does not read (byte {exc.start} is not UTF-8); not applied: "
                                f"the bodies it names are found again in their sessions, nothing lands twice")
                log_text = ""
            first, _, rest = log_text.partition("\n")
            if first == f"{_LOG_LINE}{self.generation}":
                for line in rest.splitlines(keepends=True):
                    entry = Seen.parse(line) if line.endswith("\n") else None  # a cut line is not read
                    if entry is not None:
                        self.entries[entry.name] = entry

    def _rebuilt(self, root: StorageRoot) -> SeenTable:
        self.entries = {e.name: e for e in rebuild_from_root(root)}
        self.rebuilt = bool(self.entries)
        self._log_found = self.log_path.exists()  # a log without its table continues nothing
        if self.problem is not None:
            self._written = None  # written again whole, even when nothing else changes
        return self

    def save(self) -> None:
        """Replace ``seen.state`` atomically with the table as it is now, as the next generation,
        then remove the log it takes in (and the temporary copy a pass killed mid-write left
        behind)."""
        text = "".join(self.entries[n].line() for n in sorted(self.entries))
        if text == self._written and not (self._log_found or self._log_ours or self.problem):
            return  # a pass that found nothing new writes nothing
        with self._lock():
            for name in confined.listdir(self.path.parent):
                if name.startswith(".tmp-") and name.endswith(self.path.name):
                    confined.unlink(self.path.parent / name)
            generation = self.generation + 1
            write_replace(self.path, f"{_VERSION_LINE}{_GENERATION}{generation}\n{text}".encode())
            self.generation = generation
            self._written = text
            self.problem = None
            # a log left behind by a kill here names the old generation, so it is never read again
            with contextlib.suppress(FileNotFoundError):
                confined.unlink(self.log_path)
            self._log_found = self._log_ours = False

    def record(self, entries: Iterable[Seen]) -> None:
        """Append ``entries`` (as they are now) to the log, durably: what a landed file changed,
        written after the file is durable, in time proportional to the entries alone."""
        text = "".join(entry.line() for entry in entries)
        if not text:
            return
        if not self._log_ours and (self._log_found or self.log_path.exists()):
            # never append to a log this table did not start: its last line may be cut short
            self.save()
        with self._lock():
            fd = open_private(self.log_path, os.O_WRONLY | os.O_APPEND)
            try:
                if os.fstat(fd).st_size == 0:
                    text = f"{_LOG_LINE}{self.generation}\n{text}"
                # until this append is whole and durable, the log is not one to append to: a
                # failed write (a full disk) may have left a line cut short
                self._log_ours = False
                faults.checkpoint(APPEND_STEP)
                write_whole(fd, text.encode("utf-8"))
                os.fsync(fd)
            finally:
                os.close(fd)
            self._log_ours = True

    def get(self, name: str) -> Seen | None:
        return self.entries.get(name)

    def put(self, entry: Seen) -> None:
        self.entries[entry.name] = entry

    def drop(self, name: str) -> None:
        self.entries.pop(name, None)


#: upstream's states, as this table holds them; a line in any other is read again from its file
_UPSTREAM_STATES: Final = {"landed": LANDED, "changed": CONFLICT}


def _upstream_entry(line: str) -> Seen | None:
    """One line of upstream's table as an entry here; ``None`` for one that does not read."""
    fields_ = line.rstrip("\n").split("\t")
    if len(fields_) != 10 or not fields_[0]:
        return None
    name, size, mtime, sha, state, session, _request, call, previous, _named = (
        "" if f == "-" else f for f in fields_)
    role = next((r for r in ("request", "response") if name.endswith(f".{r}.json")), "")
    try:
        entry = Seen(name, role=role, size=int(size), mtime=int(mtime))
    except ValueError:
        return None
    if state in _UPSTREAM_STATES and sha and session:
        entry.state, entry.sha, entry.session = _UPSTREAM_STATES[state], sha, session
        entry.prev = previous if role == "request" else ""
        entry.call = call if role == "response" else ""
    else:
        entry.mtime = -1  # not landed: read again, and placed by this adapter's own rules
    return entry


class _StateLinkRefused(confined.LinkRefused):
    """``seen.state`` itself is a link (one above it, ``_provider/``, is refused as it is)."""


def _read_refusing_links(path: Path) -> bytes | None:
    """The file's bytes, ``None`` when there is none; a link at its name is refused."""
    try:
        return read_small(path)
    except confined.LinkRefused:
        if os.path.islink(path):
            raise _StateLinkRefused(path) from None
        raise


def rebuild_from_root(root: StorageRoot) -> Iterator[Seen]:
    """A landed entry for every body the root's ``provider_body`` files hold (the first copy of
    each). Its mtime is unknown (0), so the next look at the file reads and checks it once."""
    names: set[str] = set()
    for session in root.sessions():
        try:
            # a linked ``provider_body/`` is refused: the session's landing is refused, naming it
            for _, bodies in landed_bodies(root.path / session):
                for record, manifest in bodies or ():  # a file that does not read: verify reports it
                    if manifest is None or manifest.src in names or os.sep in manifest.src or not manifest.src:
                        continue
                    names.add(manifest.src)
                    yield Seen(manifest.src, role=manifest.role, size=manifest.bytes, mtime=0,
                               sha=digest_prefix(manifest.sha256), state=LANDED, session=session,
                               prompt=manifest.run or "", prev=manifest.previous_request or "",
                               call=record.call or "")
        except confined.LinkRefused:
            continue


def landed_bodies(session_dir: Path) -> Iterator[tuple[Path, list[tuple[Record, Manifest | None]] | None]]:
    """Each of the session's ``provider_body`` files (its skeleton while the landed file is gone)
    with its records, each with its manifest (``None`` when it has none that reads); ``None``
    instead of the records of a file that does not read. ``LinkRefused`` when ``provider_body/``
    is a link; a file that is one is no landed file."""
    # the reader and provider-body manifests load only when asked, not on every pass
    from asz_core.providerbody import ManifestError, manifest_of, provider_body_files
    from asz_core.root.durable import open_landed
    from asz_core.sessiondata import SessionDataError

    for _, path in provider_body_files(session_dir):
        try:
            with open_landed(path) as landed:
                records = list(landed)
        except (SessionDataError, confined.LinkRefused):
            yield path, None
            continue
        bodies: list[tuple[Record, Manifest | None]] = []
        for record in records:
            try:
                bodies.append((record, manifest_of(record)))
            except ManifestError:
                bodies.append((record, None))
        yield path, bodies
