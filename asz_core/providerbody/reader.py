"""Rebuilding a session's landed provider bodies by their ``{seq, row}``.

A body can refer to any record its session landed before it, in an earlier file too (the tool
schemas land once, in the session's first provider file). So to rebuild a body in the
``provider_body`` file with sequence N, :class:`ProviderBodies` reads the session's
``provider_body`` files with sequence N or lower, in order, once, and keeps what they hold: a
later body needs only the files not read yet. A file is taken in only after it has been read
to its closing line and its digest checked.

Nothing inside the root is trusted: the ``provider_body`` directory and each file in it are
opened without following a link (:mod:`~asz_core.root.confined`). A linked directory is
:class:`~asz_core.root.confined.LinkRefused`; a file that is a link is not a landed file.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from asz_core.providerbody.errors import BodyNotFound
from asz_core.providerbody.landing import SUBDIR
from asz_core.providerbody.store import DEFAULT_CACHE_BYTES, BodyEntry, BodyStore
from asz_core.root import confined
from asz_core.root.durable import open_landed
from asz_core.root.layout import parse_file_name

__all__ = ["ProviderBodies", "provider_body_files"]


def provider_body_files(session_dir: Path) -> list[tuple[int, Path]]:
    """``(seq, path)`` of the session's provider body files, by seq; a landed file is preferred
    to its skeleton while both are there."""
    directory = session_dir / SUBDIR
    try:
        entries = confined.scandir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return []
    chosen: dict[int, Path] = {}
    for entry in entries:
        parsed = parse_file_name(entry.name)
        if parsed is None or parsed.kind != "provider_body" or entry.is_link:
            continue
        if parsed.seq not in chosen or not parsed.skeleton:
            chosen[parsed.seq] = directory / entry.name
    return sorted(chosen.items())


class ProviderBodies:
    """The provider bodies of one session directory, rebuilt on demand.

    ``body(seq, row)`` returns a body's exact bytes; it raises
    :class:`~asz_core.providerbody.errors.BodyTooLarge` when a piece of it was taken out (use
    ``body_from``), :class:`~asz_core.providerbody.errors.BodyDamaged` when it does not rebuild,
    :class:`~asz_core.providerbody.errors.BodyNotFound` when there is no such record, and
    :class:`~asz_core.sessiondata.SessionDataError` when a file it needs is damaged.
    """

    def __init__(self, session_dir: Path, *, cache_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self.session_dir = session_dir
        self.store = BodyStore(cache_bytes)
        self._files: list[tuple[int, Path]] | None = None
        self._read_through = -1   # index into _files of the last file taken in
        self._by_address: dict[tuple[int, int], BodyEntry] = {}

    # ---- reading files -------------------------------------------------------------------

    @property
    def files(self) -> list[tuple[int, Path]]:
        if self._files is None:
            self._files = provider_body_files(self.session_dir)
        return self._files

    def load_through(self, seq: int) -> None:
        """Take in every file with sequence ``seq`` or lower not taken in yet."""
        files = self.files
        while self._read_through + 1 < len(files) and files[self._read_through + 1][0] <= seq:
            file_seq, path = files[self._read_through + 1]
            self._take_in(file_seq, path)
            self._read_through += 1

    def load_all(self) -> None:
        if self.files:
            self.load_through(self.files[-1][0])

    def _take_in(self, seq: int, path: Path) -> None:
        skeleton = path.name.endswith(".sk")
        with open_landed(path) as landed:
            records = list(landed)  # the whole file is checked before any of it is used
        for row, record in enumerate(records, start=1):
            entry = self.store.add(record, seq=seq, row=row, skeleton=skeleton)
            self._by_address[(seq, row)] = entry

    # ---- bodies --------------------------------------------------------------------------

    def entry(self, seq: int, row: int) -> BodyEntry:
        """What the session holds about the body at ``{seq, row}`` (its manifest, its status)."""
        self.load_through(seq)
        entry = self._by_address.get((seq, row))
        if entry is None:
            raise BodyNotFound(f"{self.session_dir.name}: no provider body at seq {seq} row {row}")
        return entry

    def entries(self) -> Iterator[BodyEntry]:
        """Every body of the session, in landing order (reads every file)."""
        self.load_all()
        yield from sorted(self._by_address.values(), key=lambda e: e.index)

    def body(self, seq: int, row: int) -> bytes:
        """The exact bytes of the body at ``{seq, row}``."""
        return self.store.build(self.entry(seq, row))

    def body_from(self, seq: int, row: int, other_copy: bytes) -> bytes:
        """The body at ``{seq, row}`` rebuilt with ``other_copy`` (such as the file the runtime
        wrote) standing in for any piece taken out; each piece taken from it is checked against
        the digest the record names, and the whole against the manifest's ``sha256``."""
        return self.store.build(self.entry(seq, row), other_copy)
