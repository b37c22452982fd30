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

The table is derived: a landed entry is written only after its file landed, every write
replaces the file atomically, and when it is lost it is rebuilt from the landed manifests
(:func:`rebuild_from_root`). ``_provider/.lock`` guards each read and write.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Final

from asz_core.root.durable import make_dirs, write_replace
from asz_core.root.locks import FileLock
from asz_core.root.storage import StorageRoot

__all__ = ["CHANGED", "CONFLICT", "EXCLUDED", "LANDED", "UNREADABLE", "WAITING", "Seen", "SeenTable",
           "digest_prefix", "rebuild_from_root"]

LANDED: Final = "landed"
WAITING: Final = "waiting"
EXCLUDED: Final = "excluded"
UNREADABLE: Final = "unreadable"
CHANGED: Final = "changed"
CONFLICT: Final = "conflict"
STATES: Final = frozenset({LANDED, WAITING, EXCLUDED, UNREADABLE, CHANGED, CONFLICT})

DIRECTORY: Final = "_provider"
_VERSION_LINE: Final = "# asz provider seen.state v1\n"
_PREFIX: Final = 16


def digest_prefix(sha256_hex: str) -> str:
    return sha256_hex[:_PREFIX]


@dataclass
class Seen:
    """One body file, as last seen. Empty strings are ids the file does not carry."""

    name: str
    role: str = ""
    size: int = 0
    mtime: int = 0       #: nanoseconds
    sha: str = ""        #: digest prefix: of the landed bytes once landed, else of the bytes last read
    state: str = WAITING
    why: str = ""        #: what a waiting or unreadable file waits for or lacks (one word)
    session: str = ""
    prompt: str = ""     #: a request's prompt id
    prev: str = ""       #: a request's previous request id
    call: str = ""       #: a response's message id
    json: int = 1        #: 0 when the bytes last read were not one JSON value

    def line(self) -> str:
        # the table is written after each session's landing, every entry each time: the field
        # names are looked up once (_LINE_FIELDS), not with dataclasses.fields() per entry
        pairs = [f"{name}={value}" for name in _LINE_FIELDS
                 if (value := getattr(self, name)) not in ("", None)]
        return " ".join([self.name, *pairs]) + "\n"

    @classmethod
    def parse(cls, line: str) -> Seen | None:
        words = line.split()
        if not words or words[0].startswith("#"):
            return None
        entry = cls(words[0])
        types = {f.name: f.type for f in fields(cls)}
        for word in words[1:]:
            key, _, value = word.partition("=")
            if key not in types or key == "name":
                continue  # a later version's key
            try:
                setattr(entry, key, int(value) if types[key] in ("int", int) else value)
            except ValueError:
                return None
        return entry if entry.state in STATES else None


_LINE_FIELDS = tuple(f.name for f in fields(Seen) if f.name != "name")


class SeenTable:
    """The table, by file name."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / DIRECTORY / "seen.state"
        self.entries: dict[str, Seen] = {}
        self.rebuilt = False
        self._written: str | None = None  #: the text the file holds, when known

    def _lock(self) -> FileLock:
        make_dirs(self.path.parent)
        return FileLock(self.path.parent / ".lock", wait=True)

    @classmethod
    def load(cls, root: StorageRoot) -> SeenTable:
        """The table in ``root``; rebuilt from the landed manifests when it is missing."""
        table = cls(root.path)
        try:
            if table.path.parent.is_dir():
                with table._lock():
                    text = table.path.read_text("utf-8")
            else:
                raise FileNotFoundError(table.path)
        except FileNotFoundError:
            table.entries = {e.name: e for e in rebuild_from_root(root)}
            table.rebuilt = bool(table.entries)
            return table
        for line in text.splitlines():
            entry = Seen.parse(line)
            if entry is not None:
                table.entries[entry.name] = entry
        table._written = text
        return table

    def save(self) -> None:
        """Replace the file atomically with the table as it is now (and remove the temporary
        copy a pass killed mid-write left behind)."""
        data = _VERSION_LINE + "".join(self.entries[n].line() for n in sorted(self.entries))
        if data == self._written:
            return  # a pass that found nothing new writes nothing
        with self._lock():
            for name in os.listdir(self.path.parent):
                if name.startswith(".tmp-") and name.endswith(self.path.name):
                    os.unlink(self.path.parent / name)
            write_replace(self.path, data.encode("utf-8"))
        self._written = data

    def get(self, name: str) -> Seen | None:
        return self.entries.get(name)

    def put(self, entry: Seen) -> None:
        self.entries[entry.name] = entry

    def drop(self, name: str) -> None:
        self.entries.pop(name, None)


def rebuild_from_root(root: StorageRoot) -> Iterator[Seen]:
    """A landed entry for every body the root's ``provider_body`` files hold (the first copy of
    each). Its mtime is unknown (0), so the next look at the file reads and checks it once."""
    # the reader and provider-body manifests load only for a rebuild, not on every pass
    from asz_core.providerbody import ManifestError, manifest_of, provider_body_files
    from asz_core.sessiondata import SessionDataError, open_file

    names: set[str] = set()
    for session in root.sessions():
        for _, path in provider_body_files(root.path / session):
            try:
                with open_file(path) as landed:
                    records = list(landed)
            except SessionDataError:
                continue  # verify reports it; its bodies stay unknown and are compared on landing
            for record in records:
                try:
                    manifest = manifest_of(record)
                except ManifestError:
                    continue
                if manifest.src in names or os.sep in manifest.src or not manifest.src:
                    continue
                names.add(manifest.src)
                yield Seen(manifest.src, role=manifest.role, size=manifest.bytes, mtime=0,
                           sha=digest_prefix(manifest.sha256), state=LANDED, session=session,
                           prompt=manifest.run or "", prev=manifest.previous_request or "",
                           call=record.call or "")
