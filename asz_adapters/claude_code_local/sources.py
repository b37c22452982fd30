"""Landing one session's files with the host's collectors, and indexing what landed.

Transcripts and journals grow by lines and go through the append collector; sidecars, manifests
and scripts are documents rewritten in place and go through the snapshot collector. Each source
gets its own dialect instance, told what the source's path says (its kind, session, stream and
run: :class:`~.source_facts.SourceFacts`).

After the session's files have landed, the session's derived index (``index/ids``), if it has
one, learns the ``call`` (``message.id``) of every assistant line that landed in a transcript
and the ``directory`` its main transcript sits under, so the provider adapter, run next in the
pass, reads them without re-reading transcripts. A session with no index gets none: its reader
begins one from the landed files when it first needs it (:mod:`asz_core.root.index`). In a dry
run, which lands nothing, the ids are handed to the pass for that reader.

A place the session landed into whose source no longer exists is marked gone (:mod:`.gone`).
"""

from __future__ import annotations

from functools import partial

from asz_adapters.claude_code_local.dialect import ClaudeCodeDialect
from asz_adapters.claude_code_local.discover import JOURNAL, TRANSCRIPT, SessionSources, SourceFile
from asz_adapters.claude_code_local.gone import landed_places, mark_gone
from asz_adapters.claude_code_local.source_facts import SourceFacts
from asz_core.collect import AppendSource, SnapshotSource, collect_append, collect_snapshot
from asz_core.collect.append import landed_ord
from asz_core.context import AdapterContext
from asz_core.plugin import SessionClaim
from asz_core.root.index import CALL, DIRECTORY, add_landed
from asz_core.root.storage import SessionHandle

__all__ = ["land_session", "lone_transcript"]


def land_session(ctx: AdapterContext, sources: SessionSources, session: SessionHandle) -> None:
    """Land every source of ``sources`` into ``session`` (held), then add its ids to the session's
    index if it has one; in a dry run, hand them to the pass."""
    transcripts: list[tuple[SourceFile, ClaudeCodeDialect]] = []
    for source in sources.files:
        dialect = ClaudeCodeDialect(facts_of(session.id, source))
        if source.kind == TRANSCRIPT:
            transcripts.append((source, dialect))
        if source.kind in (TRANSCRIPT, JOURNAL):
            collect_append(ctx, session, AppendSource(
                path=source.path, src=source.src, subdir=source.subdir, kind=source.kind,
                dialect=dialect, stream=source.stream, batch=source.run))
        else:
            collect_snapshot(ctx, session, SnapshotSource(
                path=source.path, src=source.src, subdir=source.subdir, kind=source.kind,
                dialect=dialect, stream=source.stream, batch=source.run))
    # a session its landing made has no place landed before (none to mark gone) and no index
    # (only its reader makes one, from landed files)
    if not session.fresh:
        for place in landed_places(session.dir, skip={source.place for source in sources.files}):
            mark_gone(ctx, session, sources.root, place)
    if not session.landed:
        return
    if ctx.dry_run:
        ctx.hand_back(_would_index, (session.id, _landed_ids(ctx, session, sources, transcripts)))
    elif not session.fresh:
        seqs = [landed.seq for landed in session.landed]
        add_landed(session.dir_text, partial(_landed_ids, ctx, session, sources, transcripts), min(seqs), max(seqs))


def lone_transcript(claim: SessionClaim) -> AppendSource | None:
    """The one source of ``claim``'s session, when it holds one transcript and nothing else:
    landing it is all :func:`land_session` does for a session new to the root (no place landed
    before to mark gone, no index to add to), so the host may land it in one place."""
    if len(claim.found) != 1:
        return None
    sources = claim.found[0].payload
    if not isinstance(sources, SessionSources) or len(sources.files) != 1:
        return None
    source = sources.files[0]
    if source.kind != TRANSCRIPT:
        return None
    return AppendSource(path=source.path, src=source.src, subdir=source.subdir, kind=source.kind,
                        dialect=ClaudeCodeDialect(facts_of(claim.session, source)), stream=source.stream,
                        batch=source.run)


def facts_of(session: str, source: SourceFile) -> SourceFacts:
    """What the dialect is told of ``source``: the run is that of every file filed under a
    workflow run (its journal, manifest and script, and its children's transcripts and sidecars)."""
    return SourceFacts(kind=source.kind, session=session, stream=source.stream or "", run=source.run or "")


def _landed_ids(ctx: AdapterContext, session: SessionHandle, sources: SessionSources,
                transcripts: list[tuple[SourceFile, ClaudeCodeDialect]]) -> list[tuple[str, str]]:
    """The ids of what this landing landed: the directory of the session's main transcript and
    the call of each assistant line landed."""
    pairs: list[tuple[str, str]] = [(DIRECTORY, sources.directory)] if sources.directory else []
    for source, dialect in transcripts:
        if dialect.calls:
            # a line converted but not landed (the pass stopped at its window) lands next pass
            landed_to = landed_ord(session, source.subdir, TRANSCRIPT, dry_run=ctx.dry_run)
            pairs += [(CALL, value) for ordinal, value in dialect.calls if ordinal <= landed_to]
    return pairs


def _would_index(ctx: AdapterContext, value: tuple[str, list[tuple[str, str]]]) -> None:
    """In the pass's own process: note a dry run's index lines for the adapters after this one."""
    session, pairs = value
    ctx.pass_ctx.index_would_add(session, pairs)
