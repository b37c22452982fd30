"""A ``run`` that finds nothing new (the run a timer makes again and again on idle agents) imports
only what it calls: not the landing machinery when no session is owed, not the parse and the
metrics derivation when nothing landed since they ran, not the push nor retention when they are
off, not the configuration's validation nor the entry points' lookup once those are cached, not
``shutil`` for the help it does not print. Nor does it build a dataclass in asz's own modules, nor
a named tuple in an adapter's: each compiles the methods it writes at every import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import orjson

SESSION = "0b6f3c2e-6a59-4a57-9d0e-1f2a3b4c5d6e"

#: modules such a run never calls, by what would call them
NOT_CALLED = (
    # landing: no session is owed
    "asz_core.collect", "asz_core.root.landing", "asz_core.sessiondata.writer", "asz_core.sessiondata.reader",
    "multiprocessing", "asz_adapters.claude_code_local.dialect", "asz_adapters.claude_code_provider.land",
    "asz_adapters.kiro.land",
    # the parse and the derivation that end a pass: nothing landed since they ran
    "asz_core.assembly.parse", "asz_core.metrics.derive",
    # the page and the views
    "asz_core.page.prices", "asz_core.view",
    # a push (no endpoint) and retention (off)
    "asz_plugins.otlp_push.config", "asz_plugins.otlp_push.push", "asz_core.redact",
    "asz_core.retention.policy", "asz_core.retention.step",
    # the configuration validated and the entry points listed by an earlier run, and cached
    "yaml", "jsonschema", "importlib.metadata",
    # argparse's formatter, told the width, asks shutil (and its archive modules) for none
    "shutil", "lzma", "bz2",
    # the removal step: it runs only over a scenario root
    "asz_core.removal.pass_end",
)

#: the named tuples an adapter's modules still build in such a run (``changes``, on by default)
NAMED_TUPLES_LEFT = frozenset({"asz_adapters.claude_code_changes.discover.ChangeFile",
                               "asz_adapters.claude_code_changes.discover.Refused",
                               "asz_adapters.claude_code_changes.record.Change"})

def _transcript(lines: int = 2) -> bytes:
    return b"".join(orjson.dumps({"type": "user", "uuid": f"00000000-0000-4000-8000-{n:012d}",
                                  "sessionId": SESSION, "timestamp": f"2026-01-01T00:00:{n:02d}Z",
                                  "message": {"role": "user", "content": f"line {n}"}}) + b"\n"
                    for n in range(1, lines + 1))


def test_a_run_that_finds_nothing_new_imports_nothing_it_does_not_call(tmp_path: Path) -> None:
    project = tmp_path / "projects" / "-work-a"
    project.mkdir(parents=True)
    (project / f"{SESSION}.jsonl").write_bytes(_transcript())
    (tmp_path / "bodies").mkdir()
    (tmp_path / "kiro").mkdir()
    config = tmp_path / "asz.yaml"
    config.write_text(f"storage:\n  root: {tmp_path / 'root'}\nadapters:\n"
                      f"  - name: claude-code-local\n    source_root: {tmp_path / 'projects'}\n    exclude: []\n"
                      f"  - name: claude-code-provider\n    source_root: {tmp_path / 'bodies'}\n"
                      f"  - name: kiro\n    source_root: {tmp_path / 'kiro'}\n", encoding="utf-8")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("ASZ_ROOT", None)
    code = ("import json, sys\n"
            "from asz_core.cli import main\n"
            "code = main(['run', '--json', '--config', sys.argv[1]])\n"
            f"print(json.dumps([code, sorted(m for m in {NOT_CALLED!r} if m in sys.modules)]))\n"
            "import dataclasses\n"
            "print(json.dumps(sorted(f'{n}.{k}' for n, m in list(sys.modules.items()) if n.startswith('asz_')\n"
            "                        for k, v in vars(m).items() if isinstance(v, type) and v.__module__ == n\n"
            "                        and dataclasses.is_dataclass(v))))\n"
            "print(json.dumps(sorted(f'{n}.{k}' for n, m in list(sys.modules.items()) if n.startswith('asz_adapters')\n"
            "                        for k, v in vars(m).items() if isinstance(v, type) and v.__module__ == n\n"
            "                        and issubclass(v, tuple) and hasattr(v, '_fields'))))\n")

    def run() -> tuple[dict[str, object], int, list[str], list[str], list[str]]:
        done = subprocess.run([sys.executable, "-c", code, str(config)], capture_output=True, text=True,
                              env=env, cwd=tmp_path, check=True)
        lines = done.stdout.splitlines()
        status, loaded = json.loads(lines[-3])
        return json.loads(lines[0]), status, loaded, json.loads(lines[-2]), json.loads(lines[-1])

    first, status, loaded, _, _ = run()  # lands the session, parses it, caches the configuration
    assert (first["landed"], status) == (1, 0)
    assert {"asz_core.root.landing", "asz_core.assembly.parse", "yaml"} <= set(loaded)  # the test can fail
    again, status, loaded, dataclasses, named_tuples = run()
    assert (again["sessions"], again["landed"], status) == (1, 0, 0)
    assert loaded == []
    assert dataclasses == []
    assert set(named_tuples) <= NAMED_TUPLES_LEFT, sorted(set(named_tuples) - NAMED_TUPLES_LEFT)
