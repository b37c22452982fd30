"""Where a session's transcripts sit when ``claude-code-local`` has landed none of them.

A body's session is judged by the directory its transcripts sit under, and this adapter learns
that directory from what ``claude-code-local`` landed. A session that adapter leaves out (its
``exclude``, by default ``/private/tmp/**``) never lands, so its bodies would wait forever, a
warning every pass. So for a session nothing landed names a directory for, the transcripts'
source directory is looked at: the project directories (slugs) under ``claude-code-local``'s
source root holding ``<session>.jsonl``. When the session filter leaves out one of them, the
bodies are excluded (a named, counted outcome); when it admits them all they wait, as
``claude-code-local`` lands the session, and when nothing is found they wait too.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from asz_adapters.claude_code_local.discover import default_source_root
from asz_core.context import AdapterContext

__all__ = ["SourceProjects", "local_projects"]

LOCAL: Final = "claude-code-local"


def local_projects(ctx: AdapterContext) -> Path:
    """``claude-code-local``'s source root as this pass's configuration sets it, else its default."""
    config = ctx.pass_ctx.config
    for entry in config.adapters if config is not None else ():
        if entry.name == LOCAL and entry.options.get("source_root"):
            return Path(str(entry.options["source_root"])).expanduser()
    return default_source_root()


class SourceProjects:
    """The project directories under a ``projects/`` tree, listed once, looked up by session."""

    def __init__(self, projects: Path) -> None:
        self.projects = projects
        self._slugs: list[str] | None = None
        self._found: dict[str, list[str]] = {}

    @property
    def looked(self) -> bool:
        """Whether the pass looked at the projects directory (so its outcome depends on it)."""
        return self._slugs is not None

    def directories(self, session: str) -> list[str]:
        """The slugs whose directory holds ``<session>.jsonl`` (a main transcript)."""
        if self._slugs is None:
            try:
                self._slugs = sorted(e.name for e in os.scandir(self.projects) if e.is_dir(follow_symlinks=False))
            except OSError:
                self._slugs = []
        found = self._found.get(session)
        if found is None:
            name = f"{session}.jsonl"
            found = self._found[session] = [s for s in self._slugs if os.path.isfile(self.projects / s / name)]
        return found
