"""What a landing process builds and imports before it reads a line: a landing in a process of
its own (as ``benchmarks/children.py`` lands, and as a worker's parent does) pays for each class
and module at every start. The dataclasses it still builds are the Session Data shapes readers
compare and replace, and the append source the collector replaces; every other class it imports
is plain or a named tuple. It builds no argument parser, so it imports no ``argparse``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import orjson

SESSION = "0b6f3c2e-6a59-4a57-9d0e-1f2a3b4c5d6e"

#: the dataclasses a landing still builds, each compiling its generated methods as it is imported
DATACLASSES_LEFT = frozenset({
    # the Session Data shapes: readers compare them, ``reduce`` replaces them
    "asz_core.sessiondata.model.Dropped", "asz_core.sessiondata.model.Header", "asz_core.sessiondata.model.Part",
    "asz_core.sessiondata.model.Record", "asz_core.sessiondata.model.Usage",
    # a source the collector replaces as it follows an accepted rewrite
    "asz_core.collect.append.AppendSource",
})

_LAND = """\
import dataclasses, json, sys
from asz_core.config import load_config
from asz_core.host import PluginHost
from asz_core.pipeline import run_pass
host = PluginHost().load_entry_points()
landed = run_pass(host, load_config(host, sys.argv[1])).as_dict()["landed"]
built = sorted(f"{n}.{k}" for n, m in list(sys.modules.items()) if n.startswith("asz_")
               for k, v in vars(m).items() if isinstance(v, type) and v.__module__ == n and dataclasses.is_dataclass(v))
print(json.dumps([landed, built, "argparse" in sys.modules]))
"""


def test_a_landing_process_builds_only_the_record_shapes_dataclasses_and_imports_no_argparse(tmp_path: Path) -> None:
    project = tmp_path / "projects" / "-work-a"
    project.mkdir(parents=True)
    lines = [{"type": "user", "uuid": f"00000000-0000-4000-8000-{n:012d}", "sessionId": SESSION,
              "timestamp": f"2026-01-01T00:00:{n:02d}Z", "message": {"role": "user", "content": f"line {n}"}}
             for n in (1, 2)]
    (project / f"{SESSION}.jsonl").write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    config = tmp_path / "asz.json"
    config.write_text(json.dumps({
        "storage": {"root": str(tmp_path / "root")},
        "adapters": [{"name": "claude-code-local", "source_root": str(tmp_path / "projects"), "exclude": []},
                     {"name": "claude-code-provider", "enabled": False}, {"name": "kiro", "enabled": False}],
        "metrics": {"enabled": False}}), encoding="utf-8")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("ASZ_ROOT", None)
    done = subprocess.run([sys.executable, "-c", _LAND, str(config)], capture_output=True, text=True, env=env,
                          cwd=tmp_path, check=True)
    landed, built, with_argparse = json.loads(done.stdout.splitlines()[-1])
    assert landed == 1  # the session landed, so its whole path was imported
    assert "asz_core.sessiondata.model.Record" in built  # the test can fail
    assert set(built) <= DATACLASSES_LEFT, sorted(set(built) - DATACLASSES_LEFT)
    assert not with_argparse
