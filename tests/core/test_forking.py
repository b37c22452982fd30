"""A forked child's first step (:func:`asz_core.forking.follow_the_pass`): it never outlives the
pass that forked it, whether or not the pass looked up what that step needs before forking."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="PR_SET_PDEATHSIG is Linux's")

# A pass in miniature: fork a child that follows the pass and then outlives it by far unless
# it dies with it; print the child's pid, then wait to be killed.
_PASS = textwrap.dedent("""
    import os, sys, time
    from asz_core import forking
    if sys.argv[1] == "ready":
        forking.ready_to_fork()
    child = os.fork()
    if child == 0:
        forking.follow_the_pass()
        time.sleep(60)
        os._exit(0)
    print(child, flush=True)
    time.sleep(60)
""")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has died
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("ready", ["ready", "not-ready"])
def test_a_forked_child_dies_when_the_pass_is_killed(tmp_path: Path, ready: str) -> None:
    script = tmp_path / "pass.py"
    script.write_text(_PASS, "utf-8")
    the_pass = subprocess.Popen([sys.executable, str(script), ready], stdout=subprocess.PIPE, text=True)
    assert the_pass.stdout is not None
    child = int(the_pass.stdout.readline())
    try:
        time.sleep(0.2)  # let the child take its first step
        assert _alive(child)
        the_pass.send_signal(signal.SIGKILL)
        the_pass.wait()
        deadline = time.monotonic() + 10
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not _alive(child), "the child outlived the pass"
    finally:
        if _alive(child):
            os.kill(child, signal.SIGKILL)
        the_pass.kill()
