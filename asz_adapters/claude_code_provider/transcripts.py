"""What the landed transcripts say about a session: the call ids they hold, the directories
they name.

The ``claude-code-local`` adapter runs first in a pass and appends to each session's derived
index (:class:`~asz_core.root.index.SessionIndex`): ``call <message id>``, ``directory <slug>``.
A session that has landed files but no index has its call ids read from the files themselves;
one whose index names no directory is judged by the directories its landed transcripts'
headers name (``src`` starts with the project directory), as for a session whose transcripts
were pruned since they landed. In a dry run nothing is appended to an index; the lines the
pass would have appended (``PassContext.would_index``) are read beside the landed ones, so a dry
run places the bodies the real pass would.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from asz_core.root.index import SessionIndex, rebuild_calls
from asz_core.root.layout import RefusedId, check_id, parse_file_name
from asz_core.root.storage import landed_files

__all__ = ["Transcripts"]

_TRANSCRIPT = "transcript"


class Transcripts:
    """Lookups into a root's sessions, each session read at most once per pass."""

    def __init__(self, root: Path, would_index: Mapping[str, Mapping[str, set[str]]] | None = None) -> None:
        self.root = root
        self.would_index = would_index or {}
        self._index: dict[str, dict[str, set[str]]] = {}
        self._calls: dict[str, set[str]] = {}
        self._dirs: dict[str, set[str]] = {}

    def _session_dir(self, session: str) -> Path | None:
        try:
            return self.root / check_id(session, "session id")
        except RefusedId:
            return None

    def _ids(self, session: str, index: SessionIndex | None = None) -> dict[str, set[str]]:
        cached = self._index.get(session)
        if cached is None:
            if index is None:
                directory = self._session_dir(session)
                index = SessionIndex(directory) if directory is not None else None
            cached = index.load() if index is not None else {}
            for key, values in self.would_index.get(session, {}).items():
                cached.setdefault(key, set()).update(values)
            self._index[session] = cached
        return cached

    def calls(self, session: str) -> set[str]:
        """The provider call ids (message ids) the session's landed records hold."""
        cached = self._calls.get(session)
        if cached is None:
            cached = self._landed_calls(session)
            cached |= self.would_index.get(session, {}).get("call", set())
            self._calls[session] = cached
        return cached

    def _landed_calls(self, session: str) -> set[str]:
        # Every pass asks this of each session with a request near a waiting response: an
        # index found says its directory is there too, so the index is looked for first.
        directory = self._session_dir(session)
        if directory is None:
            return set()
        index = SessionIndex(directory)
        if index.exists():
            return set(self._ids(session, index).get("call", ()))
        if not directory.is_dir():
            return set()
        return rebuild_calls(directory)

    def directories(self, session: str) -> set[str]:
        """Slugs of the directories the session's transcripts sit under (empty: none named)."""
        cached = self._dirs.get(session)
        if cached is None:
            cached = set(self._ids(session).get("directory", ()))
            if not cached:
                cached = self._header_directories(session)
            self._dirs[session] = cached
        return cached

    def _header_directories(self, session: str) -> set[str]:
        from asz_core.sessiondata import SessionDataError, open_file  # only for an index without directories

        directory = self._session_dir(session)
        out: set[str] = set()
        if directory is None:
            return out
        for _, path in landed_files(directory):
            name = parse_file_name(path.name)
            if name is None or name.kind != _TRANSCRIPT:
                continue
            try:
                with open_file(path) as landed:
                    src = landed.header.get("src")
            except SessionDataError:
                continue
            if isinstance(src, str) and "/" in src:
                out.add(src.split("/", 1)[0])
        return out
