"""A small hand-made session whose every text tries to run a script, for the escaping tests."""

from __future__ import annotations

import shutil
from pathlib import Path

from asz_core.assembly.parse import parse_root
from asz_core.sessiondata import Usage
from tests.core.view.view_helpers import SESSION, land, note, prompt, reply, result

#: Text a transcript could hold that a careless page would run.
HOSTILE = '<img src=x onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>'
PROMPT_WORD = "quokkaplan"


def hostile_session(root: Path) -> str:
    """One session: a prompt, a reply, a tool call and its result, and a system-prompt record,
    every text carrying :data:`HOSTILE`."""
    land(root, {"main": [
        note(f"SYSTEM {HOSTILE}", ["system_prompt"]),
        prompt("run-1", f"{PROMPT_WORD} **bold** {HOSTILE}"),
        reply("call-1", tools=("tool-1",), text=f"# Heading\n\n- item `code` {HOSTILE}",
              usage=Usage(10, 20, 30, 40)),
        result("tool-1", "run-1", text=f"result {HOSTILE}"),
    ]})
    assert not [p.message for p in parse_root(root) if p.outcome]  # the page draws the rounds
    return SESSION


#: Two small corpus transcripts: the first is there when serving starts, the second arrives later.
FIRST = ("-Users-ingo-projects-irrlicht--claude-worktrees-268--build-refresh-claudecode-shell-escape-command-"
         "20260517T222124-cwd", "63f74bc4-038c-47f5-8f64-2ce653aa0e70")
LATER = ("-Users-ingo-projects-irrlicht--claude-worktrees-268--build-refresh-claudecode-token-accounting-"
         "20260517T223050-cwd", "a69e350e-140e-489b-a707-94dac7b9ac1d")


def copy_transcript(corpus: Path, source: Path, which: tuple[str, str]) -> None:
    project, session = which
    (source / project).mkdir(parents=True, exist_ok=True)
    shutil.copy2(corpus / "claude-code" / "projects" / project / f"{session}.jsonl", source / project)
