"""The garbage collector in a command's own process: off while the process starts (imports make
objects that live as long as it and next to no garbage), on for the command, with what start-up
built frozen out of its walks. A caller that passes its own command line (the tests) keeps its
collector as it was."""

from __future__ import annotations

import gc
import json
import subprocess
import sys

from asz_core.cli.main import main

#: Runs ``asz-pipeline plugins`` as the console script does, the command itself replaced by one
#: that says how the collector stands; a callback counts the collections start-up made before it
#: (the plugins, the configuration's sections, the command line).
_OBSERVED = """
import gc, json, sys
collections = []
gc.callbacks.append(lambda phase, info: phase == "stop" and collections.append(info["generation"]))
from asz_core.cli.commands import plugins_cmd
def observed(args, app):
    print(json.dumps({"before_command": len(collections), "enabled": gc.isenabled(),
                      "frozen": gc.get_freeze_count()}))
    return 0
plugins_cmd.run = observed
from asz_core.cli import main
collections.clear()  # what importing the command above set off is not the process's start-up
sys.argv = ["asz-pipeline", "plugins"]
code = main()
print(json.dumps({"code": code, "enabled": gc.isenabled()}))
"""


def test_a_commands_own_process_starts_without_collections_and_runs_the_command_with_them() -> None:
    done = subprocess.run([sys.executable, "-c", _OBSERVED], capture_output=True, text=True, check=True)
    during, after = map(json.loads, done.stdout.splitlines())
    assert during["before_command"] == 0  # no collection while the process started
    assert during["enabled"] is True
    assert during["frozen"] > 10_000  # the modules, classes and functions start-up built
    assert after == {"code": 0, "enabled": True}


def test_a_caller_passing_its_own_command_line_keeps_its_collector_as_it_was() -> None:
    frozen = gc.get_freeze_count()
    assert main(["--version"]) == 0
    assert gc.isenabled()
    assert gc.get_freeze_count() <= frozen  # nothing more frozen (what was may have been freed)
