"""Helpers for the claude-code-provider tests.

The provider adapter claims responses through what ``claude-code-local`` lands before it in the
same pass: each session's landed transcripts, and the derived index of their ids
(``call <message id>``, ``directory <slug of the main transcript's project directory>``). These
helpers write what a test needs of that without running the other adapter: the index lines, read
from the corpus's real transcripts, and a landed transcript file made with the core writer.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from asz_core.root.storage import StorageRoot
from asz_core.sessiondata import Header, Part, Record
from asz_core.sessiondata.writer import record_line
from asz_core.testing import PassRunner

ADAPTER = "claude-code-provider"
MINUTE_NS = 60 * 10**9


@dataclass
class TranscriptIds:
    """What one session's transcripts (main and subagents) record."""

    session: str
    directory: str
    calls: set[str] = field(default_factory=set)


def transcript_ids(projects: Path) -> dict[str, TranscriptIds]:
    """Every session of a ``projects/`` tree: its directory slug and the call ids its assistant
    lines carry (``message.id``); a fresh mapping each call."""
    transcripts = tuple((path, st.st_size, st.st_mtime_ns)
                        for project in sorted(p for p in projects.iterdir() if p.is_dir())
                        for path in sorted(project.rglob("*.jsonl")) for st in [path.stat()])
    return {session: TranscriptIds(ids.session, ids.directory, set(ids.calls))
            for session, ids in _transcript_ids(projects, transcripts).items()}


@functools.cache
def _transcript_ids(projects: Path, transcripts: tuple[tuple[Path, int, int], ...]) -> dict[str, TranscriptIds]:
    # parsing every line of the corpus's transcripts is a third of a second, and many provider
    # tests ask for the same tree's ids: read once per process and state of the tree's files
    # (their paths, sizes and mtimes; the corpus never changes)
    out: dict[str, TranscriptIds] = {}
    for path, _, _ in transcripts:
        project = next(parent for parent in path.parents if parent.parent == projects)
        rel = path.relative_to(project).parts
        session = rel[0] if len(rel) > 1 else path.stem
        ids = out.setdefault(session, TranscriptIds(session, project.name))
        with path.open("rb") as fh:
            for raw in fh:
                try:
                    line = json.loads(raw)
                except ValueError:
                    continue
                if not isinstance(line, dict) or line.get("type") != "assistant":
                    continue
                message = line.get("message") or {}
                if isinstance(message, dict) and isinstance(message.get("id"), str):
                    ids.calls.add(message["id"])
    return out


def land_ids(root: Path, ids: TranscriptIds) -> None:
    """Land in ``<root>/<session>`` a transcript holding ``ids``' calls under its directory, as
    claude-code-local lands the session's transcripts before the provider adapter reads them."""
    land_transcript(root, ids.session, ids.directory, ids.calls)


def land_transcript(root: Path, session: str, directory: str, calls: Iterable[str]) -> None:
    """Land a small transcript file through the core writer, as claude-code-local would: one
    record per call id, header ``src`` under the project directory."""
    store = StorageRoot(root, pass_started_ns=1_700_000_000 * 10**9)
    with store.open_session(session) as handle:
        landing = handle.begin("streams/main", Header(kind="transcript", session=session,
                                                       src=f"{directory}/{session}.jsonl",
                                                       dialect="claude-code/1", adapter="claude-code-local/0",
                                                       stream="main"))
        off = 0
        for n, call in enumerate(sorted(calls), start=1):
            landing.write(*record_line(Record(ord=n, off=off, bytes=10, sha="0" * 12, call=call,
                                 parts=[Part.text_part("x")])))
            off += 11
        handle.commit(landing)


def bodies_by_session(bodies: Path) -> dict[str, list[Path]]:
    """Request files by the session their ``metadata.user_id`` names (a fresh mapping each call)."""
    out: dict[str, list[Path]] = defaultdict(list)
    for session, paths in _requests_by_session(bodies, bodies.stat().st_mtime_ns).items():
        out[session] = list(paths)
    return out


@functools.cache
def _requests_by_session(bodies: Path, _mtime_ns: int) -> dict[str, tuple[Path, ...]]:
    # parsing every request body of the corpus whole is the most of what many provider tests
    # spend before they land: read once per process and directory state (adding or removing a
    # file changes the directory's mtime; the corpus never changes)
    out: dict[str, list[Path]] = defaultdict(list)
    for path in sorted(bodies.glob("*.request.json")):
        value = json.loads(path.read_bytes())
        out[json.loads(value["metadata"]["user_id"])["session_id"]].append(path)
    return {session: tuple(paths) for session, paths in out.items()}


def copy_bodies(paths: Iterable[Path], target: Path, *, mtime_ns: int | None = None) -> None:
    """Copy body files (keeping their mtimes unless ``mtime_ns`` is given)."""
    target.mkdir(parents=True, exist_ok=True)
    for path in paths:
        dest = target / path.name
        shutil.copyfile(path, dest)
        st = path.stat()
        stamp = mtime_ns if mtime_ns is not None else st.st_mtime_ns
        os.utime(dest, ns=(stamp, stamp))


def provider_config(source: Path, **extra: object) -> dict[str, object]:
    return {"name": ADAPTER, "source_root": str(source), **extra}


def landed_provider_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.glob("*/provider_body/*.sd"))


def response_files(bodies: Path, calls: set[str]) -> list[Path]:
    """Response files whose message id is one of ``calls``."""
    return [p for p in sorted(bodies.glob("*.response.json")) if json.loads(p.read_bytes()).get("id") in calls]


def prev_requests(requests: Iterable[Path]) -> set[str]:
    """The request ids these requests name as the previous request of their chain."""
    out = set()
    for path in requests:
        text = json.loads(path.read_bytes())["system"][0]["text"]
        if "cc_prev_req=" in text:
            out.add(text.split("cc_prev_req=", 1)[1].split(";", 1)[0])
    return out


def seen_states(root: Path) -> dict[str, str]:
    """File name → state, as ``_provider/seen.state`` holds them."""
    out = {}
    for line in (root / "_provider" / "seen.state").read_text("utf-8").splitlines():
        words = line.split()
        if words and not words[0].startswith("#"):
            out[words[0]] = next(w[6:] for w in words if w.startswith("state="))
    return out


#: a session of seven provider bodies, small enough for the hostile-input and link tests
SMALL = "8f4d493a-14e9-4f80-b905-a5af06d253c2"


def land_small_session(corpus: Path, runner: PassRunner, work: Path) -> Path:
    """One pass lands :data:`SMALL`'s bodies (copied under ``work/bodies``) into ``runner.root``,
    its transcript's ids indexed first; returns the bodies' directory."""
    ids = transcript_ids(corpus / "claude-code" / "projects")[SMALL]
    land_ids(runner.root, ids)
    src = work / "bodies"
    bodies = corpus / "provider-bodies"
    copy_bodies([*bodies_by_session(bodies)[SMALL], *response_files(bodies, ids.calls)], src)
    runner.configure(adapters=[provider_config(src, exclude=[])])
    first = runner.run()
    assert first.totals.records == 7 and not first.failed
    return src


#: the small corpus's main project: five sessions, one with twelve subagents
SMALL_PROJECT = "-Users-ingo-projects-irrlicht"
#: and beside it the smallest projects of one session each, so it has more sessions than workers
SMALL_OTHERS = 10


def build_small_corpus(corpus: Path, target: Path) -> None:
    """A corpus shaped like the shared one, for tests whose rule a few sessions show: under
    ``target``, ``claude-code/projects/`` holds :data:`SMALL_PROJECT` and the
    :data:`SMALL_OTHERS` smallest one-session projects of the same user, and ``provider-bodies/``
    the bodies of their sessions (with their mtimes)."""
    source = corpus / "claude-code" / "projects"

    def size(project: Path) -> int:
        return sum(p.stat().st_size for p in project.rglob("*") if p.is_file())

    singles = [p for p in sorted(source.glob("-Users-*"))
               if p.name != SMALL_PROJECT and len(list(p.glob("*.jsonl"))) == 1]
    chosen = [source / SMALL_PROJECT, *sorted(singles, key=lambda p: (size(p), p.name))[:SMALL_OTHERS]]
    projects = target / "claude-code" / "projects"
    for project in chosen:
        shutil.copytree(project, projects / project.name)
    ids = transcript_ids(projects)
    bodies = corpus / "provider-bodies"
    by_session = bodies_by_session(bodies)
    calls = {c for s in ids.values() for c in s.calls}
    copy_bodies([*(p for s in sorted(ids) for p in by_session.get(s, [])), *response_files(bodies, calls)],
                target / "provider-bodies")
