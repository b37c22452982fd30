"""A summary of what a session's ``provider_body`` files hold, so that landing a few new bodies
into a session does not read every body it landed before.

Landing a body needs, of what the session holds: each body's id, role, chain, depth, digest,
size and whether it rebuilds (to refer to it, copy its front, find a body landed twice, and know
each chain's latest request, in landing order); each
piece's digest and whether the root holds its bytes (to refer to it); and the bytes of the few
earlier bodies a new one copies its front from. A summary keeps all but those bytes, in
``<session>/index/provider_bodies`` (derived and disposable, as ``index/ids`` is), with the
name, size and mtime of every ``provider_body`` file it was made from. :func:`load` restores a
:class:`~asz_core.providerbody.store.BodyStore` from it only when the session's files are
exactly those, unchanged; anything else (no summary, one unreadable or of another format, a
file added, replaced by its skeleton or touched) is a miss, and the caller reads the files as
before. The restored store holds every body and piece *elsewhere*: a body's bytes come from the
store's ``fetch``, checked against its manifest, and a new body is checked against its own
bytes, piece by piece (see :mod:`~asz_core.providerbody.store`). So what lands is what landing
after reading every file would land, byte for byte; nothing landed is trusted to the summary
but what it says the files hold.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import orjson

from asz_core.providerbody.manifest import Manifest
from asz_core.providerbody.reader import provider_body_files
from asz_core.providerbody.store import DEFAULT_CACHE_BYTES, BodyEntry, BodyStore
from asz_core.root.durable import make_dirs, read_small, write_replace

__all__ = ["load", "save", "summary_path"]

_FORMAT = 1


def summary_path(session_dir: Path) -> Path:
    return session_dir / "index" / "provider_bodies"


def _files(session_dir: Path) -> list[list[Any]] | None:
    """Each ``provider_body`` file's name, size and mtime, in seq order. Not its inode: a landed
    file is never rewritten, and a root copied with its times (a backup put back) holds the
    same files."""
    out: list[list[Any]] = []
    for _, path in provider_body_files(session_dir):
        try:
            st = os.lstat(path)
        except OSError:
            return None
        out.append([path.name, st.st_size, st.st_mtime_ns])
    return out


def save(session_dir: Path, store: BodyStore, extra: dict[str, Any] | None = None) -> None:
    """Write the summary of ``store``, which holds exactly what the session's files hold now
    (read from them, restored from a summary of them, or both, plus what landed since), with
    ``extra`` for the caller. A summary that cannot be written is simply not kept."""
    files = _files(session_dir)
    if files is None:
        return
    bodies = [[e.id, e.index, e.seq, e.row, e.manifest.role, e.manifest.src, e.manifest.sha256,
               e.manifest.bytes, e.manifest.depth, e.manifest.chain, e.status, e.problem]
              for e in sorted(store.bodies.values(), key=lambda e: e.index)]
    held = {digest: len(data) for digest, data in store.pieces.items() if data is not None}
    held.update((digest, size) for digest, size in store.elsewhere.items() if store.pieces.get(digest) is None)
    data = {"format": _FORMAT, "files": files, "count": store.count, "bodies": bodies, "held": held,
            "without": [digest for digest in store.pieces if digest not in held],
            "sizes": store.piece_sizes, "states": store.piece_states, "extra": extra or {}}
    path = summary_path(session_dir)
    with contextlib.suppress(OSError):
        make_dirs(path.parent)
        write_replace(path, orjson.dumps(data), derived=True)


def load(session_dir: Path, cache_bytes: int = DEFAULT_CACHE_BYTES) -> tuple[BodyStore, dict[str, Any]] | None:
    """A store holding, elsewhere, what the session's files hold, and the caller's ``extra``,
    when the summary is there and its files are the session's, unchanged; else ``None``."""
    try:
        raw = read_small(summary_path(session_dir))  # a link is refused: a miss, as a bad summary is
        data = orjson.loads(raw) if raw is not None else None
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(data, dict) or data.get("format") != _FORMAT or data.get("files") != _files(session_dir):
        return None
    try:
        store = BodyStore(cache_bytes)
        for (record_id, index, seq, row, role, src, sha256, size, depth, chain, status, problem) in data["bodies"]:
            manifest = Manifest(role=role, src=src, sha256=sha256, bytes=size, depth=depth, chain=chain)
            store.bodies[record_id] = BodyEntry(record_id, manifest, [], [], status=status, problem=problem,
                                                index=index, seq=seq, row=row, elsewhere=True)
        for digest, size in data["held"].items():
            store.pieces[digest] = None
            store.elsewhere[digest] = int(size)
        for digest in data["without"]:
            store.pieces[digest] = None
        store.piece_sizes.update(data["sizes"])
        store.piece_states.update(data["states"])
        store.count = int(data["count"])
        for entry in sorted(store.bodies.values(), key=lambda e: e.index):
            store.set_tip(entry)
        extra = data["extra"]
    except (KeyError, TypeError, ValueError):
        return None
    return (store, extra) if isinstance(extra, dict) else None
