"""Session-first discovery: every project directory scanned, a session's files grouped by its id.

Claude Code names a project directory after the working directory a session started in, and
files a session's transcript there (``<id>.jsonl``) with its children beside it (``<id>/``). A
session's files are not confined to one project directory: a workflow script is filed under the
working directory the agent had when it wrote it, and a person can copy a session's files under a
second directory. So discovery scans every project directory for entries named like a session id
(a ``.jsonl`` file or a directory), and groups what it finds by that id across directories.

What counts as a source of a session, exactly where Claude Code writes it (nothing deeper)::

    <id>.jsonl                                           the main transcript      → streams/main
    <id>/subagents/agent-<agent>.jsonl (+ .meta.json)    a child and its sidecar  → streams/<agent>
    <id>/subagents/workflows/<run>/agent-<agent>.jsonl   a workflow child (+ .meta.json)
    <id>/subagents/workflows/<run>/journal.jsonl         the run's journal        → runs/<run>
    <id>/workflows/wf_<run>.json                         the run's manifest       → runs/<run>
    <id>/workflows/scripts/<name>-wf_<run>.js            the run's script         → runs/<run>

Everything else (``memory/``, ``tool-results/``, ``sessions-index.json``, the rest of
``~/.claude``) is not a session and is not read. A file named like a source whose id is not in
Claude Code's shape is refused: it is listed with the reason, and the claim counts it unreadable.

One landing place (a stream or run directory and a file kind) takes one source. When a session's
files sit under several project directories, its primary directory is the one whose main
transcript holds the most (of equal copies, the one already landed from, else the first by
name), and each place takes the file from the primary directory if it has one, else from the
first directory that does; the others are copies and are not read. A copy followed after another
landed must continue what landed: the append cursor's tail digest checks it. Two different files of one
directory that would land in the same place are a collision: the first (in name order) is read
and the others are refused as conflicts, rather than mixing two files behind one cursor.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable
from functools import cached_property
from operator import attrgetter
from pathlib import Path

from asz_adapters.claude_code_local.ids import RefusedId, agent_id, is_session_id, run_id, script_run_id
from asz_core.root.cursors import AppendCursor
from asz_core.root.layout import cursor_file

__all__ = [
    "AGENT_META",
    "JOURNAL",
    "MANIFEST",
    "LoneTranscript",
    "SCRIPT",
    "TRANSCRIPT",
    "Projects",
    "Refused",
    "Scan",
    "SessionSources",
    "SourceFile",
    "default_source_root",
    "list_projects",
    "lone_transcript",
    "scan",
    "session_sources",
]

TRANSCRIPT = "transcript"
AGENT_META = "agent_meta"
JOURNAL = "journal"
MANIFEST = "workflow_manifest"
SCRIPT = "workflow_script"

#: The order a session's files land in: the main transcript, children, then runs.
_ROLE_ORDER = {TRANSCRIPT: 0, AGENT_META: 1, JOURNAL: 2, MANIFEST: 3, SCRIPT: 4}


def default_source_root() -> Path:
    """Where Claude Code keeps transcripts: ``projects/`` under its configuration directory.

    ``CLAUDE_CONFIG_DIR`` when set; else ``$XDG_CONFIG_HOME/claude`` when that directory
    exists (Claude Code uses it only then); else ``~/.claude``.
    """
    explicit = os.environ.get("CLAUDE_CONFIG_DIR")
    if explicit:
        return Path(explicit).expanduser() / "projects"
    xdg = os.environ.get("XDG_CONFIG_HOME")
    if xdg and (Path(xdg) / "claude").is_dir():
        return Path(xdg) / "claude" / "projects"
    return Path.home() / ".claude" / "projects"


class SourceFile:
    """One source file of a session and where it lands. Nothing changes one after discovery.

    This module's classes are plain classes, not dataclasses: every pass imports them, and a
    dataclass compiles its generated methods at each import.
    """

    __slots__ = ("directory", "kind", "location", "run", "src", "stream")

    def __init__(self, kind: str, location: str, src: str, directory: str, stream: str | None,
                 run: str | None) -> None:
        self.kind = kind              #: the landed file kind: transcript, agent_meta, journal, ...
        self.location = location      #: its path, as listed (a ``Path`` is made only to land it)
        self.src = src                #: relative to the source root, forward slashes
        self.directory = directory    #: the project directory (slug) it was found under
        self.stream = stream          #: ``main`` or the agent id, for transcripts and sidecars
        self.run = run                #: the workflow run it belongs to, if any

    def __repr__(self) -> str:
        return f"SourceFile({self.kind!r}, {self.location!r})"

    @property
    def path(self) -> Path:
        return Path(self.location)

    @property
    def subdir(self) -> str:
        """Where it lands under the session: ``streams/<stream>`` or ``runs/<run>``."""
        if self.stream is not None:
            return f"streams/{self.stream}"
        return f"runs/{self.run}"

    @property
    def place(self) -> tuple[str, str]:
        """One source per place: the landing directory and the file kind."""
        return self.subdir, self.kind

    def order(self) -> tuple[int, int, str, str]:
        main_first = 0 if self.stream == "main" else 1
        return main_first, _ROLE_ORDER[self.kind], self.subdir, self.src


class Refused:
    """A file named like a source that is not read, and why."""

    __slots__ = ("conflict", "directory", "path", "reason")

    def __init__(self, path: Path, reason: str, directory: str, conflict: bool = False) -> None:
        self.path = path
        self.reason = reason
        self.directory = directory
        self.conflict = conflict  #: a collision of two sources in one place (counted as a conflict)

    def __repr__(self) -> str:
        return f"Refused({str(self.path)!r}, {self.reason!r})"


class SessionSources:
    """Everything one session holds across project directories, and which files are read."""

    __slots__ = ("copies", "directory", "files", "main", "refused", "root", "session")

    def __init__(self, session: str, root: Path, directory: str | None = None, files: list[SourceFile] | None = None,
                 refused: list[Refused] | None = None, copies: int = 0, main: SourceFile | None = None) -> None:
        self.session = session
        self.root = root                    #: the source root the paths are under
        self.directory = directory          #: the primary project directory (slug)
        self.files: list[SourceFile] = [] if files is None else files
        self.refused: list[Refused] = [] if refused is None else refused
        self.copies = copies                #: files not read because another directory's are
        self.main = main

    @property
    def streams(self) -> int:
        return len({f.stream for f in self.files if f.kind == TRANSCRIPT})

    @property
    def runs(self) -> int:
        return len({f.run for f in self.files if f.run is not None})


class Scan:
    """What one scan of a source root found."""

    __slots__ = ("errors", "refused", "sessions")

    def __init__(self, refused: list[Refused] | None = None, errors: list[str] | None = None) -> None:
        self.sessions: dict[str, SessionSources] = {}
        self.refused: list[Refused] = [] if refused is None else refused  #: not placeable in any session
        self.errors: list[str] = [] if errors is None else errors  #: directories that could not be listed


_NAME = attrgetter("name")


def _entries(directory: str | Path) -> list[os.DirEntry[str]]:
    """A directory's entries by name; each keeps the type its listing gave (no stat)."""
    with os.scandir(directory) as it:
        return sorted(it, key=_NAME)


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


class _Collector:
    """Gathers candidate files per session while the directories are walked."""

    def __init__(self) -> None:
        self.candidates: dict[str, list[SourceFile]] = defaultdict(list)
        self.refused: dict[str, list[Refused]] = defaultdict(list)

    def add(self, session: str, kind: str, path: Path | str, src: str, directory: str,
            stream: str | None, run: str | None) -> None:
        self.candidates[session].append(SourceFile(kind, str(path), src, directory, stream, run))

    def refuse(self, session: str, path: Path | str, reason: str, directory: str) -> None:
        self.refused[session].append(Refused(Path(path), reason, directory))

    def checked_id(self, session: str, path: str, slug: str, parse: Callable[[str], str],
                   text: str) -> str | None:
        """The id ``parse`` reads from ``text`` (a file's name, or part of it); ``None``, with
        the file refused for the reason, when it holds no id in its runtime's form."""
        try:
            return parse(text)
        except RefusedId as exc:
            self.refuse(session, path, str(exc), slug)
            return None

    def listing(self, session: str, directory: Path | str, slug: str) -> list[os.DirEntry[str]]:
        """The entries of a session's directory: none when it is absent, and none, refused with
        the reason, when it is there but cannot be listed or is a link (a link is never followed,
        as no source file that is a link is read)."""
        if os.path.islink(directory):
            self.refuse(session, directory, "a link; it is not followed", slug)
            return []
        try:
            return _entries(directory)
        except FileNotFoundError:
            return []
        except OSError as exc:
            self.refuse(session, directory, f"cannot be listed: {exc.strerror or exc}", slug)
            return []


def _scan_children(col: _Collector, session: str, slug: str, session_dir: Path, base: str) -> None:
    """The children, workflow runs and scripts under one ``<project>/<id>/`` directory."""
    subagents = session_dir / "subagents"
    _scan_agents(col, session, slug, subagents, f"{base}/subagents", run=None)
    runs = [e for e in col.listing(session, subagents / "workflows", slug) if e.is_symlink() or _is_dir(e)]
    for entry in runs:
        run = col.checked_id(session, entry.path, slug, run_id, entry.name)
        if run is not None:
            _scan_agents(col, session, slug, entry.path, f"{base}/subagents/workflows/{entry.name}", run=run)
    _scan_workflows(col, session, slug, session_dir / "workflows", f"{base}/workflows")


def _scan_agents(col: _Collector, session: str, slug: str, directory: Path | str, base: str,
                 run: str | None) -> None:
    for entry in col.listing(session, directory, slug):
        name = entry.name
        path = entry.path
        src = f"{base}/{name}"
        if run is not None and name == "journal.jsonl":
            col.add(session, JOURNAL, path, src, slug, None, run)
            continue
        if not name.startswith("agent-"):
            continue
        if name.endswith(".meta.json"):
            kind, agent = AGENT_META, name[6:-10]
        elif name.endswith(".jsonl"):
            kind, agent = TRANSCRIPT, name[6:-6]
        else:
            continue
        stream = col.checked_id(session, path, slug, agent_id, agent)
        if stream is not None:
            # upstream files a workflow's child under no run (header and records name none): only
            # the run's journal, manifest and script are the run's; the child is joined by them
            col.add(session, kind, path, src, slug, stream, None)


def _scan_workflows(col: _Collector, session: str, slug: str, directory: Path, base: str) -> None:
    for entry in col.listing(session, directory, slug):
        name = entry.name
        path = entry.path
        if name == "scripts" and (entry.is_symlink() or _is_dir(entry)):
            _scan_scripts(col, session, slug, path, f"{base}/scripts")
        elif name.startswith("wf_") and name.endswith(".json"):
            run = col.checked_id(session, path, slug, run_id, name[:-5])
            if run is not None:
                col.add(session, MANIFEST, path, f"{base}/{name}", slug, None, run)


def _scan_scripts(col: _Collector, session: str, slug: str, directory: Path | str, base: str) -> None:
    for entry in col.listing(session, directory, slug):
        if not entry.name.endswith(".js"):
            continue
        run = col.checked_id(session, entry.path, slug, script_run_id, entry.name)
        if run is not None:
            col.add(session, SCRIPT, entry.path, f"{base}/{entry.name}", slug, None, run)


class Projects:
    """What listing the project directories found, before any session's own directory is read:
    per session, only where it sits (a small key each), so a scan holds one session whole at a
    time however many there are."""

    def __init__(self, root: Path) -> None:
        self.root = root
        #: session id → ``(slug, has <id>/, has <id>.jsonl)`` per project directory, by slug
        self.places: dict[str, list[tuple[str, bool, bool]]] = {}
        self.refused: list[Refused] = []  #: not placeable in any session
        self.errors: list[str] = []       #: directories that could not be listed

    @cached_property
    def root_prefix(self) -> str:
        """The root as text with one separator after it: what a name in it is joined to."""
        return os.path.join(self.root, "")


def list_projects(root: Path) -> Projects:
    """List ``root`` (Claude Code's ``projects/``) and each project directory in it, noting where
    each session id has a transcript or a directory."""
    out = Projects(root)
    places = out.places
    try:
        projects = [e for e in _entries(root) if e.is_symlink() or _is_dir(e)]
    except FileNotFoundError:
        return out
    for project in projects:
        if project.is_symlink():
            out.refused.append(Refused(Path(project.path), "a link to a project directory; links are not "
                                       "followed (point source_root at where it lies)", project.name))
            continue
        slug = project.name
        try:
            entries = _entries(project.path)
        except FileNotFoundError:
            continue  # removed while the root was scanned: Claude Code's directories are live
        except OSError as exc:
            out.errors.append(f"cannot list {project.path}: {exc.strerror or exc}; "
                              f"its sessions are not collected this pass")
            continue
        for entry in entries:
            name = entry.name
            if name.endswith(".jsonl") and not _is_dir(entry):
                stem = name[:-6]
                if not is_session_id(stem):
                    out.refused.append(Refused(Path(entry.path), f"{stem!r} is not a session id "
                                               f"(a UUID), so the file cannot be placed", slug))
                elif stem not in places:  # most sessions: a transcript, met once (noted inline: a call
                    places[stem] = [(slug, False, True)]  # with keywords per session is felt here)
                else:
                    _note(places, stem, slug, transcript=True)
            elif is_session_id(name) and _is_dir(entry):
                _note(places, name, slug, directory=True)
            elif is_session_id(name) and entry.is_symlink():
                out.refused.append(Refused(Path(entry.path), "a link to a session's directory; links are "
                                           "not followed", slug))
    return out


def _note(places: dict[str, list[tuple[str, bool, bool]]], session: str, slug: str, *,
          directory: bool = False, transcript: bool = False) -> None:
    held = places.setdefault(session, [])
    if held and held[-1][0] == slug:
        _, had_dir, had_transcript = held[-1]
        held[-1] = (slug, had_dir or directory, had_transcript or transcript)
    else:
        held.append((slug, directory, transcript))


class LoneTranscript:
    """A session that is a main transcript alone, in one project directory, and no more: most
    sessions. Its sources follow from the listing alone (:meth:`sources`), so a pass that finds
    it settled need not build them. A plain class: a no-op pass makes one per session, and a
    named tuple's constructor costs half as much again."""

    __slots__ = ("location", "root", "slug")

    def __init__(self, root: Path, slug: str, location: str) -> None:
        self.root = root            #: the source root
        self.slug = slug            #: the project directory
        self.location = location    #: the transcript's path, joined as text

    def __repr__(self) -> str:
        return f"LoneTranscript({self.slug!r}, {self.location!r})"

    def sources(self, session: str) -> SessionSources:
        """What :func:`session_sources` gives for it (what the rules give a lone transcript)."""
        name = f"{session}.jsonl"
        main = SourceFile(TRANSCRIPT, self.location, f"{self.slug}/{name}", self.slug, "main", None)
        return SessionSources(session, self.root, directory=self.slug, files=[main], main=main)


def lone_transcript(projects: Projects, session: str) -> LoneTranscript | None:
    """``session`` as a :class:`LoneTranscript`, when the listing found it as one."""
    places = projects.places.get(session, ())
    if len(places) == 1 and places[0][2] and not places[0][1]:
        slug = places[0][0]  # the path joined as text: a Path object per session is felt in a no-op pass
        return LoneTranscript(projects.root, slug, f"{projects.root_prefix}{slug}/{session}.jsonl")
    return None


def session_sources(projects: Projects, session: str, landed_root: Path | None = None) -> SessionSources | None:
    """Read the directories of one session ``list_projects`` found and group its files; ``None``
    when they hold nothing named like a source.

    ``landed_root`` is the storage root: when a session's main transcript has several copies, or
    none is left, the one its landed cursor names decides the primary directory.
    """
    lone = lone_transcript(projects, session)
    if lone is not None:
        return lone.sources(session)
    root = projects.root
    places = projects.places.get(session, ())
    col = _Collector()
    for slug, directory, transcript in places:
        project = root / slug
        if directory:  # "<id>" sorts before "<id>.jsonl", as the listing had them
            _scan_children(col, session, slug, project / session, f"{slug}/{session}")
        if transcript:
            name = f"{session}.jsonl"
            col.add(session, TRANSCRIPT, project / name, f"{slug}/{name}", slug, "main", None)
    candidates, refused = col.candidates.get(session, []), col.refused.get(session, [])
    if not candidates and not refused:
        return None
    return _choose(SessionSources(session, root, refused=refused), candidates, landed_root)


def scan(root: Path, landed_root: Path | None = None) -> Scan:
    """Scan ``root`` (Claude Code's ``projects/``) and group every session's files, all at once
    (``list_projects`` and ``session_sources`` do it one session at a time)."""
    projects = list_projects(root)
    result = Scan(refused=projects.refused, errors=projects.errors)
    for session in sorted(projects.places):
        sources = session_sources(projects, session, landed_root)
        if sources is not None:
            result.sessions[session] = sources
    return result


def _landed_main_directory(landed_root: Path | None, session: str) -> str | None:
    """The project directory the session's landed main transcript came from, if any."""
    if landed_root is None:
        return None
    try:
        cursor = AppendCursor.load(cursor_file(landed_root / session, "streams/main", TRANSCRIPT))
    except (OSError, ValueError):
        return None
    if cursor is None or not cursor.source:
        return None
    return cursor.source.split("/", 1)[0]


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return -1


def _choose(out: SessionSources, candidates: list[SourceFile], landed_root: Path | None) -> SessionSources:
    if len(candidates) == 1 and candidates[0].kind == TRANSCRIPT and candidates[0].stream == "main":
        # most sessions: a main transcript alone, in one directory (what the rules below give)
        out.directory = candidates[0].directory
        out.files.append(candidates[0])
        out.main = candidates[0]
        return out
    session = out.session
    mains = [f for f in candidates if f.kind == TRANSCRIPT and f.stream == "main"]
    landed_dir = _landed_main_directory(landed_root, session) if len(mains) != 1 else None
    if mains:
        # The copy that holds the most has been written to last: follow it (the append cursor's
        # tail digest then says whether it continues what landed). Of equal copies, keep the one
        # that landed, else the first by name.
        out.directory = mains[0].directory if len(mains) == 1 else min(
            mains, key=lambda f: (-_size(f.path), f.directory != landed_dir, f.directory)).directory
    else:
        # No main transcript (pruned, or not written yet): the directory its landed copy came
        # from, else one holding the session's own directory; a script travels with the agent's
        # working directory, so it names the session's directory last.
        held = sorted(candidates, key=lambda f: (f.kind == SCRIPT, f.directory))
        out.directory = landed_dir or (held[0].directory if held else None)
    by_place: dict[tuple[str, str], list[SourceFile]] = defaultdict(list)
    for f in candidates:
        by_place[f.place].append(f)
    for group in by_place.values():
        dirs = sorted({f.directory for f in group})
        chosen_dir = out.directory if out.directory in dirs else dirs[0]
        here = sorted((f for f in group if f.directory == chosen_dir), key=lambda f: f.src)
        out.copies += len(group) - len(here)
        out.files.append(here[0])
        for other in here[1:]:
            out.refused.append(Refused(other.path, f"{here[0].src} already lands in {here[0].subdir}; "
                                       f"two files cannot share one cursor", chosen_dir, conflict=True))
    out.files.sort(key=SourceFile.order)
    out.main = next((f for f in out.files if f.kind == TRANSCRIPT and f.stream == "main"), None)
    return out
