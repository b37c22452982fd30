"""Finding the plugin's change files: the plugin's own layout, and nothing else.

The plugin writes under Claude Code's plugin data directory (``source_root``; by default
``plugins/data`` beside ``projects/``, under the directory Claude Code itself uses)::

    <source_root>/file-changes[-<marketplace>]/output/<session>/<stream>.jsonl

The rules, in the order they are applied:

1. a directory named as the plugin is or was named (``file-changes``, earlier ``asz-changes``),
   alone or followed by ``-`` and the marketplace it came from, is the plugin's; every other
   entry belongs to another plugin and is passed over;
2. under its ``output/``, a directory named as a Claude Code session id (a UUID) is a session;
   anything else there is passed over, so a file the plugin did not write is never landed;
3. in a session, ``main.jsonl`` and ``<agent-id>.jsonl`` (an agent id in one of Claude Code's
   shapes) are the change files of that stream; other names are passed over;
4. a link where rule 1, 2 or 3 expects a directory or a file is never followed, and a directory
   that cannot be listed is not read: each is **unreadable**, named with its path;
5. two plugin directories holding a file for one stream of one session would land behind one
   cursor: both are a **conflict** and neither lands until one is moved;
6. a session's workspace is the ``root.path`` of the first record of its first file (in the
   order of their paths), which ``include``/``exclude`` judge; a session with no complete record
   yet names none, and is collected (nothing lands from it until a record is complete).

Only rule 6 reads a file, its first line, when the pass comes to that session.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final, NamedTuple

import orjson

from asz_adapters.claude_code_changes.about import PLUGIN_NAMES
from asz_adapters.claude_code_changes.record import workspace_of
from asz_adapters.claude_code_local.discover import default_source_root
from asz_adapters.claude_code_local.ids import agent_id as checked_agent_id
from asz_adapters.claude_code_local.ids import is_session_id
from asz_core.root.layout import RefusedId

__all__ = ["ChangeFile", "Listing", "PluginSession", "Refused", "default_plugin_data", "is_plugin_dir",
           "list_plugin_data", "workspace"]

_SUFFIX: Final = ".jsonl"
#: the most of a first line read for its workspace; a longer one names none
_FIRST_LINE_LIMIT: Final = 1 << 20
#: read a piece at a time: a first line is most often a few kilobytes
_CHUNK: Final = 1 << 16


def is_plugin_dir(name: str) -> bool:
    """Rule 1: the plugin's data directory, under any name it has had."""
    return any(name == plugin or name.startswith(plugin + "-") for plugin in PLUGIN_NAMES)


def default_plugin_data() -> Path:
    """``plugins/data`` beside Claude Code's ``projects/``."""
    return default_source_root().parent / "plugins" / "data"


class Refused(NamedTuple):
    """A path the plugin's layout names that is not read, and why.

    This module's objects are named tuples or plain classes, not dataclasses: every pass imports
    them, and a dataclass compiles its generated methods at each import.
    """

    path: str
    reason: str
    conflict: bool = False  #: two files behind one cursor (counted as a conflict, not unreadable)


class ChangeFile(NamedTuple):
    """One change file: the records of one stream of one session, appended line by line."""

    location: str  #: its path, as listed
    src: str       #: relative to the source root, forward slashes: the landed header's ``src``
    stream: str    #: ``main`` or the agent id

    @property
    def subdir(self) -> str:
        return f"streams/{self.stream}"

    @property
    def path(self) -> Path:
        return Path(self.location)


class PluginSession:
    """Every change file of one session, and what of it was refused."""

    __slots__ = ("files", "refused", "session")

    def __init__(self, session: str) -> None:
        self.session = session
        self.files: list[ChangeFile] = []
        self.refused: list[Refused] = []


class Listing:
    """What listing the plugin's directories found."""

    __slots__ = ("refused", "sessions")

    def __init__(self) -> None:
        self.sessions: dict[str, PluginSession] = {}
        #: refused before any session could be named (a plugin directory, its ``output/``)
        self.refused: list[Refused] = []


def _entries(directory: str, refused: list[Refused]) -> list[os.DirEntry[str]]:
    """A directory's entries by name; none when it is absent, and none, refused, when it is a
    link or cannot be listed (rule 4)."""
    if os.path.islink(directory):
        refused.append(Refused(directory, "a link; it is not followed"))
        return []
    try:
        with os.scandir(directory) as it:
            return sorted(it, key=lambda e: e.name)
    except FileNotFoundError:
        return []
    except OSError as exc:
        refused.append(Refused(directory, f"cannot be listed: {exc.strerror or exc}"))
        return []


def _is_agent_id(name: str) -> bool:
    try:
        checked_agent_id(name)
    except RefusedId:
        return False
    return True


def list_plugin_data(root: Path) -> Listing:
    """Rules 1 to 5 over ``root``."""
    out = Listing()
    for plugin in _entries(str(root), out.refused):
        if not is_plugin_dir(plugin.name):
            continue  # rule 1
        if plugin.is_symlink() or not plugin.is_dir(follow_symlinks=False):
            if plugin.is_symlink():
                out.refused.append(Refused(plugin.path, "a link; it is not followed"))
            continue
        for entry in _entries(os.path.join(plugin.path, "output"), out.refused):
            if not is_session_id(entry.name):
                continue  # rule 2
            session = out.sessions.setdefault(entry.name, PluginSession(entry.name))
            if entry.is_symlink():
                session.refused.append(Refused(entry.path, "a link; it is not followed"))
                continue
            if not entry.is_dir(follow_symlinks=False):
                continue
            for file in _entries(entry.path, session.refused):
                stream = file.name.removesuffix(_SUFFIX)
                if stream == file.name or (stream != "main" and not _is_agent_id(stream)):
                    continue  # rule 3
                if file.is_symlink():
                    session.refused.append(Refused(file.path, "a link; it is not followed"))
                    continue
                if not file.is_file(follow_symlinks=False):
                    continue
                src = f"{plugin.name}/output/{entry.name}/{file.name}"
                session.files.append(ChangeFile(file.path, src, stream))
    for session in out.sessions.values():
        _refuse_shared_streams(session)
        session.files.sort(key=lambda f: f.src)
    return out


def _refuse_shared_streams(session: PluginSession) -> None:
    """Rule 5."""
    by_stream: dict[str, list[ChangeFile]] = {}
    for f in session.files:
        by_stream.setdefault(f.stream, []).append(f)
    for stream, files in by_stream.items():
        if len(files) < 2:
            continue
        others = ", ".join(f.src for f in files)
        for f in files:
            session.refused.append(Refused(f.location, f"{others} all hold stream {stream}'s records and would "
                                                       f"land behind one cursor", conflict=True))
    session.files = [f for f in session.files if len(by_stream[f.stream]) == 1]


def workspace(session: PluginSession) -> str:
    """Rule 6: the workspace the first record of the session's first file names, or ``""``."""
    if not session.files:
        return ""
    try:
        fd = os.open(session.files[0].location, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return ""
    head = b""
    try:
        while b"\n" not in head and len(head) < _FIRST_LINE_LIMIT:
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                break
            head += chunk
    except OSError:
        return ""
    finally:
        os.close(fd)
    line, newline, _ = head.partition(b"\n")
    if not newline and len(head) >= _FIRST_LINE_LIMIT:
        return ""
    try:
        return workspace_of(orjson.loads(line.rstrip(b"\r")))
    except orjson.JSONDecodeError:
        return ""
