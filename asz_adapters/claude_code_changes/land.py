"""Landing one session's change files through the host's append collector.

Each file lands under the stream it names (``streams/<stream>/changes-<stamp>-<seq>.sd``, cursor
``changes.cursor``), with a dialect of its own (:class:`~.dialect.ChangesDialect`). Then each line
that landed as an unknown part is named, with its file and line, and counted ``unreadable``:
only lines that landed, so a line converted past the pass's last window is counted by the pass
that lands it.
"""

from __future__ import annotations

from asz_adapters.claude_code_changes.about import KIND
from asz_adapters.claude_code_changes.dialect import ChangesDialect
from asz_adapters.claude_code_changes.discover import ChangeFile, PluginSession
from asz_core.collect import AppendSource, collect_append
from asz_core.collect.append import landed_ord
from asz_core.context import AdapterContext
from asz_core.root.storage import SessionHandle

__all__ = ["land_session"]


def land_session(ctx: AdapterContext, found: PluginSession, session: SessionHandle) -> None:
    """Land every change file of ``found`` into ``session`` (held)."""
    for file in found.files:
        dialect = ChangesDialect()
        collect_append(ctx, session, AppendSource(path=file.path, src=file.src, subdir=file.subdir, kind=KIND,
                                                  dialect=dialect, stream=file.stream))
        if dialect.unknown:
            _name_unknown(ctx, session, file, dialect.unknown)


def _name_unknown(ctx: AdapterContext, session: SessionHandle, file: ChangeFile,
                  unknown: list[tuple[int, str]]) -> None:
    landed_to = landed_ord(session, file.subdir, KIND, dry_run=ctx.dry_run)
    for ordinal, reason in unknown:
        if ordinal <= landed_to:
            ctx.counters.unreadable += 1
            ctx.warn(f"{file.location} line {ordinal}: {reason}; it landed whole as an unknown part, "
                     f"for a version of this adapter that reads it")


