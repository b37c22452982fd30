"""A session's derived index: the ids its landed files hold, for other adapters to look up.

``<session>/index/ids`` holds ``key value`` lines, appended after files land: ``call`` (a
provider call id a transcript records, such as Claude Code's message id), ``request`` (a
provider request id), ``directory`` (the slug of the working directory the session's main
source sits under). It is derived and disposable: ids only, never text; losing it costs a
rebuild from the landed files (:func:`rebuild_calls`), and readers never trust it over them.
"""

from __future__ import annotations

import os
import re
import stat
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from asz_core.root import confined
from asz_core.root.durable import make_dirs_text, open_private, read_small
from asz_core.root.storage import landed_files

__all__ = ["SessionIndex", "rebuild_calls"]

_SPACE = re.compile(r"\s")


class SessionIndex:
    """The ids index of one session directory."""

    def __init__(self, session_dir: Path | str) -> None:
        #: a string: it is only ever opened, and an index is loaded and added to per session
        self.path = os.path.join(session_dir, "index", "ids")

    def exists(self) -> bool:
        try:
            return stat.S_ISREG(os.lstat(self.path).st_mode)
        except OSError:
            return False

    def add(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Append ``(key, value)`` pairs; values with whitespace are refused (ids only)."""
        lines = []
        for key, value in pairs:
            if not value or _SPACE.search(key) or _SPACE.search(value):
                continue
            lines.append(f"{key} {value}\n")
        if not lines:
            return
        make_dirs_text(confined.split(self.path)[0])
        fd = open_private(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, "".join(lines).encode("utf-8"))
        finally:
            os.close(fd)

    def load(self) -> dict[str, set[str]]:
        """Every key's values; empty when there is no index (yet)."""
        out: dict[str, set[str]] = defaultdict(set)
        try:
            data = read_small(self.path)
        except OSError:  # a link, a directory: derived, so as if there were none
            return out
        if data is None:
            return out
        text = data.decode("utf-8", errors="replace")
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key and value:
                out[key].add(value)
        return out


def rebuild_calls(session_dir: Path) -> set[str]:
    """The ``call`` ids of every landed record of the session, read from the files themselves."""
    from asz_core.sessiondata.errors import SessionDataError  # the reader: only when rebuilding
    from asz_core.sessiondata.reader import open_file

    calls: set[str] = set()
    for _, path in sorted(landed_files(session_dir)):
        try:
            for record in open_file(path):
                if record.call:
                    calls.add(record.call)
        except SessionDataError:
            continue
    return calls
