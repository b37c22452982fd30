"""A scenario session's marker: ``<source>/.asz-scenario/<session>.json``.

A ``claude-code`` build writes it after every other file of the session, so it proves the build
finished the session. It names the removal policy and lists every file the build wrote for the
session, with its size and SHA-256: the only files a removal may delete, and only while each
still holds those bytes. The rules a marker is read by, in order:

1. It is a JSON object of schema 1, named for the session it names.
2. Its policy is ``immediately``, or ``retain`` with a duration longer than zero.
3. Its state is ``written`` (as the build leaves it) or ``removing`` (a pass has begun to remove
   the session, and the next one finishes without deciding again).
4. Every path is relative, clean, inside the source directory and listed once, with a size and
   a SHA-256: a path that leaves the source could name a file the build never wrote.

A marker that breaks a rule is :class:`MarkerError`, whose message names the marker and the rule.
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from asz_core.root.durable import write_replace

__all__ = ["IMMEDIATELY", "MARKER_DIR", "REMOVING", "RETAIN", "SCHEMA", "WRITTEN", "Marker", "MarkerError",
           "MarkerFile", "marker_path", "parse_policy", "read_marker"]

MARKER_DIR: Final = ".asz-scenario"
SCHEMA: Final = 1
IMMEDIATELY: Final = "immediately"
RETAIN: Final = "retain"
WRITTEN: Final = "written"
REMOVING: Final = "removing"

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_SESSION = re.compile(r"^[0-9A-Za-z][0-9A-Za-z_-]{0,127}$")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h|d)")
_UNIT_NS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000, "m": 60_000_000_000,
            "h": 3_600_000_000_000, "d": 86_400_000_000_000}


class MarkerError(ValueError):
    """A marker that does not read, or breaks a rule; the message says which and what to do."""


@dataclass(frozen=True)
class MarkerFile:
    path: str       #: relative to the source directory, forward slashes
    size: int
    sha256: str


@dataclass
class Marker:
    session: str
    policy: str = IMMEDIATELY
    retain: str = ""
    state: str = WRITTEN
    files: list[MarkerFile] = field(default_factory=list)

    @property
    def retain_ns(self) -> int:
        """How long after its last record the session stays once sent (0: not at all)."""
        return 0 if self.policy == IMMEDIATELY else parse_retain_ns(self.retain)

    def encode(self) -> bytes:
        body: dict[str, Any] = {"schema": SCHEMA, "session": self.session, "policy": self.policy}
        if self.policy == RETAIN:
            body["retain"] = self.retain
        body["state"] = self.state
        body["files"] = [{"path": f.path, "size": f.size, "sha256": f.sha256} for f in self.files]
        return json.dumps(body, indent=1).encode("utf-8") + b"\n"

    def save(self, path: Path) -> None:
        """Replace the marker in one rename (it stays writable: a pass rewrites it to ``removing``)."""
        write_replace(path, self.encode())


def marker_path(source: Path, session: str) -> Path:
    return source / MARKER_DIR / f"{session}.json"


def parse_retain_ns(text: str) -> int:
    """A duration as ``--remove`` takes one (``30m``, ``24h``, ``7d``, ``1h30m``); ``ValueError``
    for anything else, zero or negative included."""
    value, pos, total = text.strip(), 0, 0
    while pos < len(value):
        m = _DURATION.match(value, pos)
        if m is None:
            raise ValueError(f"{text!r} is not a duration such as 30m, 24h or 7d")
        total += int(float(m.group(1)) * _UNIT_NS[m.group(2)])
        pos = m.end()
    if not value or total <= 0:
        raise ValueError(f"{text!r} is not a duration longer than zero, such as 30m, 24h or 7d")
    return total


def parse_policy(text: str) -> tuple[str, str]:
    """``--remove``'s value as a marker writes it: ``(policy, retain)``; ``ValueError`` if bad."""
    if text.strip() == IMMEDIATELY:
        return IMMEDIATELY, ""
    parse_retain_ns(text)
    return RETAIN, text.strip()


def read_marker(path: Path, data: bytes) -> Marker:
    """Rules 1 to 4 over a marker's bytes (read by the caller, without following a link)."""
    def bad(why: str) -> MarkerError:
        return MarkerError(f"marker {path}: {why}; a build writes markers, so build the session again "
                           f"or remove the session's files yourself")
    try:
        body = json.loads(data)
    except ValueError as exc:
        raise bad(f"not JSON ({exc})") from None
    if not isinstance(body, dict) or body.get("schema") != SCHEMA:
        raise bad(f"the schema is {body.get('schema') if isinstance(body, dict) else None!r}, not {SCHEMA}")
    session = body.get("session")
    if not isinstance(session, str) or not _SESSION.match(session) or path.name != f"{session}.json":
        raise bad(f"it names the session {session!r}, not the one its file name says")
    policy, retain = body.get("policy"), body.get("retain", "")
    if policy == RETAIN:
        try:
            parse_retain_ns(str(retain))
        except ValueError as exc:
            raise bad(f"the retention: {exc}") from None
    elif policy != IMMEDIATELY:
        raise bad(f"the policy {policy!r} is not {IMMEDIATELY} or {RETAIN}")
    state = body.get("state")
    if state not in (WRITTEN, REMOVING):
        raise bad(f"the state {state!r} is not {WRITTEN} or {REMOVING}")
    files, seen = [], set()
    for entry in body.get("files") or []:
        rel = entry.get("path") if isinstance(entry, dict) else None
        if (not isinstance(rel, str) or not rel or "\\" in rel or "\0" in rel or rel.startswith("/")
                or posixpath.normpath(rel) != rel or rel.split("/")[0] == ".."):
            raise bad(f"the path {rel!r} is not inside the source directory")
        if rel in seen:
            raise bad(f"the path {rel!r} is listed twice")
        seen.add(rel)
        size, digest = entry.get("size"), entry.get("sha256")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0 or not isinstance(digest, str) \
                or not _HEX64.match(digest):
            raise bad(f"the path {rel!r} has no size or no SHA-256")
        files.append(MarkerFile(rel, size, digest))
    return Marker(session, str(policy), str(retain) if policy == RETAIN else "", str(state), files)
