"""A root upstream's ``asz`` wrote resumes here with no conflict and nothing landed twice.

The root is built in the shape ``formats/storage-root.md`` gives: cursors with their keys padded
into a column (``offset        62230163``) and upstream's own keys (``schema``, ``kind``), ``mtime``
in seconds, ``session.state`` with ``liveness``, the session's ``index/`` (``index.state``,
``entries.bin``), ``metrics/`` receipts and ``_metrics/``. The landed files are this
project's (the format is the same), landed from the same sources; everything around them is
rewritten as upstream writes it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import orjson

from asz_core.root.cursors import parse_pairs
from asz_core.sessiondata import open_file
from asz_core.testing import PassRunner, run_sdcheck
from asz_core.verify import verify_root
from tests.helpers import records_of

SESSION = "0b6f3c2e-6a59-4a57-9d0e-1f2a3b4c5d6e"
AGENT = "abcdef1"
SLUG = "-work-project"
#: upstream's column: every key padded to this width (``tail_sha256   98eb…``)
_COLUMN = 14


def _line(n: int, session: str = SESSION) -> bytes:
    return orjson.dumps({"type": "user", "uuid": f"00000000-0000-4000-8000-{n:012d}", "sessionId": session,
                         "timestamp": f"2026-01-01T00:00:{n % 60:02d}Z",
                         "message": {"role": "user", "content": f"line {n}"}}) + b"\n"


def _sources(projects: Path) -> tuple[Path, Path]:
    project = projects / SLUG
    subagents = project / SESSION / "subagents"
    subagents.mkdir(parents=True)
    main = project / f"{SESSION}.jsonl"
    main.write_bytes(b"".join(_line(n) for n in range(1, 11)))
    child = subagents / f"agent-{AGENT}.jsonl"
    child.write_bytes(b"".join(_line(n) for n in range(1, 4)))
    (subagents / f"agent-{AGENT}.meta.json").write_bytes(b'{"agentType":"general-purpose"}\n')
    return main, child


def _as_upstream_cursor(path: Path) -> None:
    """Rewrite one cursor as upstream writes it: ``schema`` and ``kind`` first, keys padded into
    a column, ``mtime`` in seconds."""
    pairs = dict(parse_pairs(path.read_text("utf-8")))
    kind = "snapshot" if "content_sha256" in pairs else "append"
    pairs["mtime"] = str(int(pairs.get("mtime", "0")) // 10**9)
    order = ["schema", "kind", "source", "dev", "ino", "offset", "ord", "last_uuid", "tail_sha256",
             "content_sha256", "size", "mtime", "last_seq", "updated_at", "state"]
    pairs = {"schema": "1", "kind": kind, **pairs}
    lines = [f"{key.ljust(_COLUMN - 1)} {pairs[key]}\n" for key in order if key in pairs]
    os.chmod(path, 0o600)
    path.write_text("".join(lines), "utf-8")


def _as_upstream_root(root: Path) -> None:
    session = root / SESSION
    cursors = sorted(session.glob("*/*/*.cursor"))
    assert len(cursors) == 3  # the main transcript, the child's transcript and its sidecar
    for cursor in cursors:
        _as_upstream_cursor(cursor)
    highest = max(int(p.name.rsplit("-", 1)[1][:-3]) for p in session.rglob("*.sd"))
    (session / "session.state").write_text(f"next_seq      {highest + 1}\nliveness      unknown\n"
                                           f"last_scan     2026-09-06T15:02:49.496762Z\n")
    shutil.rmtree(session / "index", ignore_errors=True)
    (session / "index").mkdir(mode=0o700)
    (session / "index" / "entries.bin").write_bytes(b"\x00upstream index\x00")
    (session / "index" / "index.state").write_text(f"schema        3\nindexed_seq   {highest}\n")
    (session / "metrics").mkdir(mode=0o700)  # upstream's receipt for file 1, which counted nothing
    first = next(p for p in session.rglob("*-000001.sd"))
    digest = hashlib.sha256(first.read_bytes()).hexdigest()
    (session / "metrics" / "000001.json").write_bytes(b'{"schema":1,"digest":"%s"}\n' % digest.encode())
    (root / "_metrics").mkdir(mode=0o700)  # the metrics spool beside the sessions, its state JSON
    (root / "_metrics" / "metrics.state").write_text('{"schema": 1, "derived": {}, "sessions": {}}\n')
    for table in root.glob(".settled-*.state"):  # this project's own; upstream has none
        table.unlink()


def test_a_root_upstream_wrote_resumes_without_a_conflict_or_a_record_twice(
        asz_pass: PassRunner, tmp_path: Path) -> None:
    projects = tmp_path / "projects"
    main, child = _sources(projects)
    asz_pass.configure(adapters=[{"name": "claude-code-local", "source_root": str(projects), "exclude": []}])
    first = asz_pass.run()
    assert not first.failed and first.totals.records == 14
    _as_upstream_root(asz_pass.root)
    landed = sorted(p.name for p in asz_pass.root.rglob("*.sd"))

    resumed = asz_pass.run()
    assert (resumed.totals.conflicts, resumed.totals.landed, resumed.totals.errors) == (0, 0, 0)
    assert sorted(p.name for p in asz_pass.root.rglob("*.sd")) == landed
    assert (asz_pass.root / SESSION / "index" / "index.state").exists()  # nothing added: kept

    with main.open("ab") as fh:
        fh.write(b"".join(_line(n) for n in range(11, 14)))
    with child.open("ab") as fh:
        fh.write(_line(4))
    grown = asz_pass.run()
    assert (grown.totals.conflicts, grown.totals.records) == (0, 4)
    assert not (asz_pass.root / SESSION / "index" / "index.state").exists()  # removed, as the format says
    assert not (asz_pass.root / SESSION / "index" / "entries.bin").exists()
    assert (asz_pass.root / SESSION / "metrics" / "000001.json").exists()
    assert len(records_of(asz_pass.root, SESSION)) == 18
    problems = [str(p) for r in verify_root(asz_pass.root) for p in r.problems]
    assert not problems, problems
    verdict = run_sdcheck(asz_pass.root)
    assert verdict is None or verdict["ok"], verdict


def test_each_stream_of_a_resumed_upstream_root_runs_on_without_a_repeat(
        asz_pass: PassRunner, tmp_path: Path) -> None:
    projects = tmp_path / "projects"
    main, _ = _sources(projects)
    asz_pass.configure(adapters=[{"name": "claude-code-local", "source_root": str(projects), "exclude": []}])
    asz_pass.run()
    _as_upstream_root(asz_pass.root)
    with main.open("ab") as fh:
        fh.write(b"".join(_line(n) for n in range(11, 16)))
    assert asz_pass.run().totals.records == 5
    by_stream: dict[str, list[int]] = {}
    for path in sorted(asz_pass.root.rglob("transcript-*.sd")):
        by_stream.setdefault(path.parent.name, []).extend(r.ord for r in open_file(path))
    assert by_stream == {"main": list(range(1, 16)), AGENT: [1, 2, 3]}
