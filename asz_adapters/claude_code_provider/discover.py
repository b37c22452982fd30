"""Finding the body files: list and stat the directory, read only what is new or changed.

A file whose size and mtime are those ``seen.state`` holds is not read. Any other is read
once, to take its digest and the ids it carries; a landed file whose bytes are no longer the
landed ones is a conflict. The bytes are not kept: landing reads the file again and checks it
is still what was read here.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from pathlib import Path
from typing import Final

from asz_adapters.claude_code_local.discover import default_source_root
from asz_adapters.claude_code_provider import names
from asz_adapters.claude_code_provider.seen import (
    CHANGED,
    CONFLICT,
    LANDED,
    UNREADABLE,
    Seen,
    SeenTable,
    digest_prefix,
    same_digest,
)
from asz_core.context import AdapterContext
from asz_core.plugin import Found
from asz_core.sessiondata.jsonbytes import NotJSON, loads_strict

__all__ = ["BodyFile", "ProviderPass", "claude_dir", "discover", "pass_state", "read_ids", "source_dir"]

_SUBPATH: Final = ("asz", "provider-bodies")
#: The most a body may be: ``asz_core.providerbody.store.MAX_BYTES`` (upstream's bound), written
#: again so that a pass with nothing to land does not load the provider-body package (a test
#: holds the two equal). A larger file is unreadable, and never read.
MAX_BYTES: Final = 256 * 1024 * 1024


def source_dir(ctx: AdapterContext) -> Path:
    """``source_root``, else ``asz/provider-bodies`` under Claude Code's directory, found by the
    same rule as ``claude-code-local``'s transcripts (``CLAUDE_CONFIG_DIR``, else
    ``XDG_CONFIG_HOME/claude`` when that directory exists, else ``~/.claude``), so that the two
    never read two Claude Code directories."""
    return source_dir_of(ctx.source_root)


def source_dir_of(source_root: str) -> Path:
    """:func:`source_dir` for a configured ``source_root`` (empty: the default)."""
    if source_root:
        return Path(source_root).expanduser()
    return claude_dir().joinpath(*_SUBPATH)


def claude_dir() -> Path:
    """Claude Code's directory."""
    return default_source_root().parent


class BodyFile:
    """One body file this pass: its stat, and what is known of it (``seen``, updated here).

    This and :class:`ProviderPass` are plain classes, not dataclasses: every pass imports them,
    and a dataclass compiles its generated methods at each import.
    """

    __slots__ = ("location", "problem", "read_now", "seen")

    def __init__(self, location: str, seen: Seen, read_now: bool = False, problem: str = "") -> None:
        #: the file's path as the listing gave it: a ``Path`` is made only for a file that is read
        #: or named, where a pass that finds every file as it was would make one for each
        self.location = location
        self.seen = seen
        self.read_now = read_now  #: read this pass (new, or changed since last seen)
        self.problem = problem    #: why a request names no session it can go to

    @property
    def path(self) -> Path:
        return Path(self.location)


class ProviderPass:
    """What one pass of the adapter carries from discovery to landing."""

    __slots__ = ("directory", "files", "table", "to_land")

    def __init__(self, directory: Path, table: SeenTable) -> None:
        self.directory = directory
        self.table = table
        self.files: dict[str, BodyFile] = {}
        self.to_land = 0   #: claims not landed yet; at 0 the table is saved whole


def pass_state(ctx: AdapterContext) -> ProviderPass | None:
    """The pass's :class:`ProviderPass`, which discovery kept (``AdapterContext.keep``)."""
    return ctx.kept(ProviderPass)


def read_ids(entry: Seen, body: bytes) -> str:
    """Fill ``entry`` with the digest and ids of ``body``. For a request that names no session
    it can go to, ``why`` becomes ``refused`` or ``no-session`` and the detail is returned.

    A body that is JSON but for a byte that is not UTF-8 is read as upstream reads it (the byte
    as U+FFFD): it names its session, and lands whole."""
    entry.sha = digest_prefix(names.sha256_hex(body))
    entry.session = entry.prompt = entry.prev = entry.call = entry.why = ""
    try:
        value: object = loads_strict(body)
    except NotJSON:
        value = names.parse_lenient(body)
        if value is None:
            entry.json = 0
            return ""
    entry.json = 1
    keys = names.lift(entry.name, value)
    if entry.role == names.RESPONSE:
        entry.call = names.response_call(keys) or ""
        return ""
    ids = names.request_names(keys)
    entry.session = ids.session or ""
    entry.prompt = ids.prompt or ""
    entry.prev = ids.previous_request or ""
    if ids.session is None:
        entry.why = "refused" if ids.refused else "no-session"
    return ids.session_problem or ""


def _look(bf: BodyFile, st: os.stat_result, ctx: AdapterContext) -> None:
    """Bring ``bf.seen`` up to date with the file, reading it only when its stat moved."""
    entry = bf.seen
    if ((entry.size, entry.mtime) == (st.st_size, st.st_mtime_ns) and entry.state != CHANGED
            and entry.why != "cannot-read"):
        return
    if st.st_size > MAX_BYTES and entry.state not in (LANDED, CONFLICT):
        entry.size, entry.mtime, entry.state, entry.why = st.st_size, st.st_mtime_ns, UNREADABLE, "too-large"
        return
    try:
        body = bf.path.read_bytes()
    except OSError as exc:
        ctx.warn(f"cannot read {bf.path}: {exc.strerror or exc}; tried again next pass")
        if entry.state not in (LANDED, CONFLICT):
            entry.state, entry.why = UNREADABLE, "cannot-read"
        return
    bf.read_now = True
    entry.size, entry.mtime = len(body), st.st_mtime_ns
    if entry.state in (LANDED, CONFLICT):
        now = names.sha256_hex(body)
        entry.state = LANDED if same_digest(now, entry.sha) else CONFLICT  # sha stays the landed digest
        if entry.state == LANDED:
            entry.sha = digest_prefix(now)  # upstream's table holds a shorter prefix
        return
    bf.problem = read_ids(entry, body)


def discover(ctx: AdapterContext, table: SeenTable) -> tuple[ProviderPass, list[Found]]:
    """Every body file in the source directory, and one unit per session the requests name."""
    directory = source_dir(ctx)
    ctx.source_dirs.append(str(directory))
    state = ProviderPass(directory, table)
    try:
        listing = list(os.scandir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return state, []
    found: list[Found] = []
    for item in sorted(listing, key=lambda e: e.name):
        parsed = names.body_file(item.name)
        if parsed is None:
            continue
        role, stem = parsed
        try:
            st = item.stat(follow_symlinks=False)
        except FileNotFoundError:
            continue
        known = table.get(item.name)
        entry = known if known is not None and known.role == role else Seen(item.name, role=role)
        bf = BodyFile(item.path, entry)
        if not names.is_file_id(stem):
            entry.state, entry.why = UNREADABLE, "name"  # kept out of seen.state: one token per name
        elif not stat.S_ISREG(st.st_mode):
            entry.state, entry.why = UNREADABLE, "not-a-file"  # a symlink is never followed
            table.put(entry)
        else:
            table.put(entry)
            _look(bf, st, ctx)
        state.files[item.name] = bf
        # positional: one per body file every pass, and keywords cost twice the call
        found.append(Found(role, item.name, entry.session or None, 1, item.path,
                           {"state": entry.state, "bytes": entry.size}, bf))
    named = Counter(bf.seen.session for bf in state.files.values()
                    if bf.seen.role == names.REQUEST and bf.seen.session)
    for session, count in sorted(named.items()):
        found.append(Found(kind="session", key=session, session=session, sources=0,
                           detail={"requests": count}))
    return state, found
