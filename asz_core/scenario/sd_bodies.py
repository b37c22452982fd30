"""An ``sd`` build's provider bodies: the same bodies, landed in the same order, by the same code.

A provider body lands as ``provider_body/1`` whatever runtime sent it: cut against what the
session holds, so its record depends on every body before it. An ``sd`` build therefore does not
encode bodies itself; it hands them to the installed ``claude-code-provider`` adapter, through
one ordinary pass, exactly as a ``claude-code`` build's collect does:

1. The bodies are written to a scratch directory in the root (``_scenario-bodies``, a name no
   session can have), each stamped with when it was written.
2. One pass over a configuration that enables only that adapter, reading the scratch directory,
   with the build's clock. The adapter claims each body by the session its request names, or by
   the call ids of the transcripts the build landed just before.
3. The scratch directory is removed: an ``sd`` build leaves no source behind. A later
   checkpoint writes every body again, and the adapter lands only the new ones.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from asz_core.root.durable import OWNER_FILE, make_dirs
from asz_core.scenario.bodies import provider_bodies
from asz_core.scenario.plan import Plan

__all__ = ["SCRATCH", "land_bodies"]

SCRATCH = "_scenario-bodies"


def land_bodies(p: Plan, root: Path, clock_ns: int) -> list[str]:
    """Land the plan's bodies the root does not hold; returns the pass's errors."""
    bodies = provider_bodies(p)
    if not bodies:
        return []
    from asz_core.config import load_config
    from asz_core.context import QuietReporter
    from asz_core.host import PluginHost
    from asz_core.pipeline import run_pass

    scratch = root / SCRATCH
    if scratch.exists():
        shutil.rmtree(scratch)
    make_dirs(scratch / "bodies")
    try:
        for body in bodies:
            path = scratch / "bodies" / body.name
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, OWNER_FILE)
            with os.fdopen(fd, "wb") as f:
                f.write(body.data)
            os.utime(path, ns=(body.at * 1_000_000, body.at * 1_000_000))
        config = scratch / "asz.yaml"
        config.write_text(f"storage:\n  root: {root}\nadapters:\n  - name: claude-code-provider\n"
                          f"    source_root: {scratch / 'bodies'}\n    exclude: []\n"
                          # the other built-in adapters stay on unless switched off: never the machine's own
                          "  - name: claude-code-local\n    enabled: false\n  - name: kiro\n    enabled: false\n",
                          "utf-8")
        host = PluginHost().load_entry_points()
        summary = run_pass(host, load_config(host, str(config)), clock=lambda: clock_ns, reporter=QuietReporter())
        problems = [str(e) for e in summary.errors]
        waiting = summary.totals.waiting
        if waiting:
            problems.append(f"{waiting} provider body(ies) found no session")
        return problems
    finally:
        shutil.rmtree(scratch)
