"""Discovery names every directory it does not read: a link where a project, a session or a
session's ``subagents/`` would be is never followed (as a source file that is a link is never
read) and is counted unreadable with the reason; sessions ``exclude`` keeps out are counted."""

from __future__ import annotations

from pathlib import Path

import orjson

from asz_core.testing import PassRunner

MAIN = "0b6f3c2e-6a59-4a57-9d0e-1f2a3b4c5d6e"
LINKED = "1c7a4d3f-7b6a-4b68-8e1f-2a3b4c5d6e7f"
OTHER = "2d8b5e4a-8c7b-4c79-9f2a-3b4c5d6e7f8a"


def _transcript(session: str, lines: int = 2) -> bytes:
    return b"".join(orjson.dumps({"type": "user", "uuid": f"00000000-0000-4000-8000-{n:012d}",
                                  "sessionId": session, "timestamp": f"2026-01-01T00:00:{n:02d}Z",
                                  "message": {"role": "user", "content": f"line {n}"}}) + b"\n"
                    for n in range(1, lines + 1))


def _configure(asz_pass: PassRunner, projects: Path, **entry: object) -> None:
    asz_pass.configure(adapters=[{"name": "claude-code-local", "source_root": str(projects), **entry}])


def test_links_in_projects_are_counted_unreadable_with_the_reason(asz_pass: PassRunner, tmp_path: Path) -> None:
    projects = tmp_path / "projects"
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "-work-b").mkdir(parents=True)
    (elsewhere / "-work-b" / f"{OTHER}.jsonl").write_bytes(_transcript(OTHER))
    (elsewhere / LINKED / "subagents").mkdir(parents=True)
    (elsewhere / LINKED / "subagents" / "agent-abcdef1.jsonl").write_bytes(_transcript(LINKED))
    (elsewhere / "subagents").mkdir()
    (elsewhere / "subagents" / "agent-abcdef2.jsonl").write_bytes(_transcript(MAIN))
    project = projects / "-work-a"
    project.mkdir(parents=True)
    (project / f"{MAIN}.jsonl").write_bytes(_transcript(MAIN))
    (project / MAIN).mkdir()
    (project / MAIN / "subagents").symlink_to(elsewhere / "subagents")  # a session's subagents/
    (project / LINKED).symlink_to(elsewhere / LINKED)                  # a session's directory
    (projects / "-work-b").symlink_to(elsewhere / "-work-b")          # a project directory
    _configure(asz_pass, projects, exclude=[])
    summary = asz_pass.run()
    assert summary.totals.unreadable == 3
    warnings = "\n".join(asz_pass.reporter.warnings)
    for name in ("-work-b", LINKED, "subagents"):
        assert any(name in w and "link" in w for w in asz_pass.reporter.warnings), warnings
    assert {p.name for p in asz_pass.root.iterdir() if not p.name.startswith(".")} == {MAIN}
    assert [p.name for p in (asz_pass.root / MAIN / "streams").iterdir()] == ["main"]


def test_sessions_the_default_exclude_keeps_out_are_counted(asz_pass: PassRunner, tmp_path: Path) -> None:
    projects = tmp_path / "projects"
    for slug, session in (("-private-tmp-scratch", OTHER), ("-work-a", MAIN)):
        (projects / slug).mkdir(parents=True)
        (projects / slug / f"{session}.jsonl").write_bytes(_transcript(session))
    _configure(asz_pass, projects)
    summary = asz_pass.run()
    assert summary.totals.excluded == 1 and summary.totals.sessions == 1
    assert summary.fields()["sessions_excluded"] == 1
    assert summary.as_dict()["adapters"]["claude-code-local"]["excluded"] == 1
