"""Landing one session's new bodies: read each file again, check it is what discovery read,
read the keys it lands with, and hand it to the core lander (which cuts it by upstream's rules).

What the session already holds is known before the first new body lands, so a body refers to
pieces and bodies of earlier passes as well as this one: from the session's summary of its
``provider_body`` files (:mod:`asz_core.providerbody.summary`, written after each landing) when
the files are exactly those it was made from; else by reading every file, as a session landed
by an older version is. With a summary, an earlier body's bytes (a front to copy) are read from
its own source file when it is still there and matches the digest it landed with, else rebuilt
from the landed files, read then. A body whose record id the session already holds with the
same digest is one a crash landed without ``seen.state`` catching up: it is marked landed, not
landed again; with another digest it is a conflict.
After each file is installed, the bodies in it go to the pass's table and are appended to
``seen.log`` (:func:`record_landed`), which the adapter takes into ``seen.state`` once the pass
has landed every session; the pass does that when it merges the session, after the session's
landing has made every file's name durable (once, at its end).

A session may land in a worker process (``AdapterInfo.parallel_sessions``): it then writes only
under the session, and hands the entries it changed back to the pass
(``AdapterContext.hand_back``), which alone puts them in the table and appends them to the log,
in the pass's process, after the worker reports the session. So one process appends to
``seen.log``, as before; a kill between a file landing and its entries reaching the log loses
only the log's line, and the next pass finds the body in the session's manifests.

A landed file's header names the source as ``.``: the source is the body directory itself (the
adapter's root, as ``projects/`` is the transcripts'), and each record's manifest names its own
file in ``src``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Final

import orjson

from asz_adapters.claude_code_provider import names
from asz_adapters.claude_code_provider.about import DIALECT
from asz_adapters.claude_code_provider.discover import BodyFile, pass_state
from asz_adapters.claude_code_provider.seen import CHANGED, CONFLICT, LANDED, Seen, digest_prefix, same_digest
from asz_core.context import AdapterContext
from asz_core.plugin import SessionClaim
from asz_core.providerbody import (
    BodyEntry,
    BodyInfo,
    BodyLander,
    BodyStore,
    CutRules,
    LandedBody,
    ProviderBodies,
    summary,
)
from asz_core.root.index import add_landed
from asz_core.root.landing import LandedFile
from asz_core.root.storage import SessionHandle
from asz_core.sessiondata import Header
from asz_core.sessiondata.jsonbytes import NotJSON, loads_strict

__all__ = ["DIALECT", "RULES", "land_session", "record_landed"]

RULES: Final = CutRules(arrays=names.TOOL_ARRAYS, first=names.FIRST_MESSAGE, chain=names.chain_of)
#: The bodies of the session kept whole while it lands, newest first. A request copies its front
#: from one of the chains' latest requests, which this holds; an older base is rebuilt from the
#: session's pieces when asked for. Bounded, so that a pass holds a few bodies, not the session's
#: (bounded by the reader's limit alone, one long session held many times this).
_CACHE_BYTES: Final = 4 * 1024 * 1024


def _info(bf: BodyFile, value: object) -> BodyInfo:
    """The body's record id, role, source and keys, as upstream's adapter reads them."""
    e = bf.seen
    keys = names.lift(e.name, value)
    return BodyInfo(record_id=e.name.removesuffix(".json"), role=e.role, src=e.name, model=keys.model or None,
                    session=keys.session or None, run=keys.run or None, call=keys.call or None,
                    request=keys.request or None, previous_request=keys.previous_request or None)


def record_landed(ctx: AdapterContext, entries: list[Seen]) -> None:
    """In the pass's process: ``entries``, as a session's landing left them, into the pass's
    table and appended to ``seen.log``."""
    state = pass_state(ctx)
    if state is None:
        raise RuntimeError("the seen table's entries came back to a pass without asz_discover")
    for entry in entries:
        state.table.put(entry)  # a worker's entries are copies; in the pass these are its own
    state.table.record(entries)


def land_session(ctx: AdapterContext, claim: SessionClaim, session: SessionHandle) -> None:
    """Land ``claim``'s bodies into ``session``, in write order."""
    # the entries this landing changes: the pass's table's own when landing in its process,
    # copies that go back to it (``record_landed``) in a worker
    entries_by_name = {found.key: found.payload.seen for found in claim.found}
    restored = summary.load(session.dir, _CACHE_BYTES)
    if restored is None:
        reader = ProviderBodies(session.dir, cache_bytes=_CACHE_BYTES)
        reader.load_all()
        store = reader.store
    else:
        store, _ = restored
    sources = claim.found[0].payload.path.parent if claim.found else Path(".")
    store.fetch = _fetcher(session.dir, sources)
    recorded: set[str] = set()

    def landed_file(landed: LandedFile, bodies: list[LandedBody]) -> None:
        entries = []
        for body in bodies:
            entry = entries_by_name.get(body.info.src)
            if entry is not None:
                entry.state, entry.why, entry.session = LANDED, "", claim.session
                entry.sha = digest_prefix(body.sha256)
                entries.append(entry)
                recorded.add(entry.name)
        if not ctx.dry_run:
            # the table names these files: the pass applies this once the session's landing has
            # made their names durable (``session.sync(created=True)`` below, on any way out)
            ctx.hand_back(record_landed, entries)

    def header() -> Header:
        return Header(kind="provider_body", session=claim.session, src=".", dialect=DIALECT,
                      adapter=ctx.adapter_id)

    lander = BodyLander(session, store, header, ctx.max_delta_bytes, RULES, on_file=landed_file)
    try:
        for found in claim.found:
            bf: BodyFile = found.payload
            _land_one(ctx, bf, claim.session, store, lander)
        lander.finish()
    finally:
        lander.abort()
        if not ctx.dry_run:
            # once per session, not per file: in a group commit each call commits the group
            # (two ``syncfs``), and a session of many bodies lands many files
            session.sync(created=True)
    if not ctx.dry_run:
        # what landed no file: bodies found already landed, conflicts, changes
        ctx.hand_back(record_landed, [e for name, e in entries_by_name.items() if name not in recorded])
        summary.save(session.dir, store)
        seqs = [landed.seq for landed in session.landed]
        if seqs:  # their names durable (above): the session's ids index, where it has one, covers them
            add_landed(session.dir, _no_ids, min(seqs), max(seqs))


def _no_ids() -> tuple[tuple[str, str], ...]:
    """What a provider body adds to a session's ids index: no id (its seq alone; the index holds
    the ids of transcripts, :mod:`asz_core.root.index`). Without it, the next reader of the index
    listed the session's files and read them for nothing."""
    return ()


def _fetcher(session_dir: Path, sources: Path) -> Callable[[BodyEntry], bytes]:
    """How the store gets the bytes of a body it holds elsewhere: its source file, when that is
    still there with the bytes it landed with; else rebuilt from the session's landed files,
    read (once) then. The store checks either against the manifest."""
    full: list[ProviderBodies] = []

    def fetch(entry: BodyEntry) -> bytes:
        m = entry.manifest
        if m.src and "/" not in m.src and not m.src.startswith("."):
            try:
                with open(sources / m.src, "rb") as f:
                    data = f.read(m.bytes + 1)
            except OSError:
                data = b""
            if len(data) == m.bytes and hashlib.sha256(data).hexdigest() == m.sha256:
                return data
        if not full:
            full.append(ProviderBodies(session_dir, cache_bytes=_CACHE_BYTES))
        full[0].load_all()  # a file this pass landed since is read too; it is not asked for
        return full[0].store.body(entry.id)

    return fetch


def _land_one(ctx: AdapterContext, bf: BodyFile, session: str, store: BodyStore, lander: BodyLander) -> None:
    e = bf.seen
    try:
        body = bf.path.read_bytes()
    except OSError as exc:
        ctx.warn(f"cannot read {bf.path}: {exc.strerror or exc}; tried again next pass")
        ctx.counters.waiting += 1
        return
    digest = hashlib.sha256(body).hexdigest()
    if not same_digest(digest, e.sha):
        e.state, e.why = CHANGED, "changed"
        ctx.counters.waiting += 1
        ctx.warn(f"{bf.path} changed while the pass read it; it is read again next pass")
        return
    record_id = e.name.removesuffix(".json")
    held = store.bodies.get(record_id)
    if held is not None:
        if held.manifest.sha256 == digest:
            e.state, e.why, e.session = LANDED, "", session  # landed before seen.state caught up
        else:
            e.state, e.sha = CONFLICT, digest_prefix(held.manifest.sha256)
            ctx.counters.conflicts += 1
            ctx.warn(f"conflict: {bf.path} differs from the body landed as {record_id} in session {session}; "
                     f"put the landed bytes back to end it")
        return
    value = _parse(body, e.json)
    info = _info(bf, value if value is not None else names.parse_lenient(body))
    landed = lander.add(body, info, value)
    if landed.reason:
        ctx.warn(f"{bf.path} landed {landed.how} in session {session}: {landed.reason}")


def _parse(body: bytes, parsed_before: int) -> object:
    """``body`` parsed (``None``: not JSON). When discovery parsed these very bytes (their digest
    is the one it recorded) with ``loads_strict``, nesting bound included, and they were JSON,
    orjson alone is enough here; what it refuses and JSON allows goes to ``loads_strict``."""
    if parsed_before:
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError:
            pass
    try:
        return loads_strict(body)
    except NotJSON:
        return None
