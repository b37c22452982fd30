"""A small hand-made session whose every text tries to run a script, for the escaping tests."""

from __future__ import annotations

from pathlib import Path

from asz_core.sessiondata import Usage
from tests.view.view_helpers import SESSION, land, note, prompt, reply, result

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
    return SESSION
