"""What the landed transcripts say about a session: the call ids they hold, the directories
they name.

Each session's derived index (:mod:`asz_core.root.index`) holds ``call <message id>`` and
``directory <slug>`` of its landed transcripts (``src`` starts with the project directory the
file was found under). This adapter is its reader: it brings a session's index up to date from
the transcripts landed since (``claude-code-local`` lands them first in a pass) before it looks.
In a dry run nothing is written, and the ids the pass's landing would have landed
(``PassContext.would_index``) are read beside the landed ones, so a dry run places the bodies
the real pass would.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from asz_core.root.index import CALL, DIRECTORY, session_ids
from asz_core.root.layout import RefusedId, check_id

__all__ = ["Transcripts"]


class Transcripts:
    """Lookups into a root's sessions, each session read at most once per pass: its ids from
    its index, brought up to date from its landed transcripts first
    (:func:`~asz_core.root.index.session_ids`; in a dry run nothing is written)."""

    def __init__(self, root: Path, would_index: Mapping[str, Mapping[str, set[str]]] | None = None, *,
                 keep: bool = True) -> None:
        self.root = root
        self.would_index = would_index or {}
        self.keep = keep
        self._ids: dict[str, dict[str, set[str]]] = {}

    def _session(self, session: str) -> dict[str, set[str]]:
        cached = self._ids.get(session)
        if cached is None:
            try:
                directory = self.root / check_id(session, "session id")
            except RefusedId:
                directory = None
            if directory is not None and directory.is_dir():
                cached = session_ids(directory, keep=self.keep)
            else:
                cached = {CALL: set(), DIRECTORY: set()}
            for key, values in self.would_index.get(session, {}).items():
                cached.setdefault(key, set()).update(values)
            self._ids[session] = cached
        return cached

    def calls(self, session: str) -> set[str]:
        """The provider call ids (message ids) the session's landed records hold."""
        return self._session(session)[CALL]

    def directories(self, session: str) -> set[str]:
        """Slugs of the directories the session's transcripts sit under (empty: none named)."""
        return self._session(session)[DIRECTORY]
