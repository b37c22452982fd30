"""``asz-pipeline run`` answered from the last quiet pass, before anything else is imported.

A ``run`` of one pass (``--config``, ``--json``, ``-v`` and ``--wait`` allowed; ``--full``,
``--dry-run`` and ``--watch`` always run) asks :func:`asz_core.quietpass.replay` whether the
last pass of the same command line changed nothing and nothing it depends on has changed since.
If so, that pass's report is printed again, marked as repeated, with its exit status; else
(``None``) the command runs as always. This module and what it imports are all a repeated pass
costs, so it imports no more than :mod:`asz_core.quietpass` does.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from asz_core import quietpass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, NoReturn, TextIO

__all__ = ["print_warnings", "repeat_quiet_pass", "run_options"]

#: warnings printed after a pass line without ``-v``
SHOWN_WARNINGS = 20


def run_options(config: str | None) -> dict[str, Any]:
    """The options of a ``run`` that decide what it does (not how it prints): the key's part
    that comes from the command line."""
    return {"command": "run", "config": config}


def print_warnings(warnings: list[str], err: TextIO, *, verbose: bool) -> None:
    """The warnings after a pass line: all of them with ``-v``, else the first few."""
    shown = warnings if verbose else warnings[:SHOWN_WARNINGS]
    for warning in shown:
        print(f"warning: {warning}", file=err)
    if len(warnings) > len(shown):
        print(f"warning: … and {len(warnings) - len(shown)} more (-v shows all)", file=err)


class _NotThisCommand(Exception):
    """The command line is not one a repeated pass can answer."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _NotThisCommand(message)


def _one_pass(argv: Sequence[str]) -> argparse.Namespace | None:
    parser = _Parser(add_help=False, allow_abbrev=False)
    parser.add_argument("command", choices=["run"])
    parser.add_argument("--config")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("--wait", action="store_true")
    try:
        args, extra = parser.parse_known_args(argv)
    except _NotThisCommand:
        return None
    return None if extra else args


def repeat_quiet_pass(argv: Sequence[str], out: TextIO | None = None, err: TextIO | None = None) -> int | None:
    """Print the last quiet pass's report again and return its exit status, if ``argv`` is a
    one-pass ``run`` and nothing that pass depends on has changed; else ``None``."""
    started = time.perf_counter()
    args = _one_pass(argv)
    if args is None:
        return None
    try:
        quiet = quietpass.replay(quietpass.run_key(run_options(args.config)), time.time_ns())
    except OSError:  # a working directory gone, say: the check is never why a run fails
        return None
    if quiet is None:
        return None
    out, err = out or sys.stdout, err or sys.stderr
    report, elapsed = quiet.report, time.perf_counter() - started
    if args.json:
        print(json.dumps({**report["json"], "elapsed_s": round(elapsed, 3), "repeated": True}), file=out)
    else:
        since = time.strftime("%H:%M:%S", time.localtime(report["started_ns"] / 1e9))
        now = time.strftime("%H:%M:%S")
        print(f"[{now}] {report['fields']} ({elapsed:.3f}s; nothing changed since the pass of "
              f"{since}, whose counts these are; run --full to run every adapter)", file=out)
        print_warnings(report["json"]["warnings"], err, verbose=args.verbose)
    out.flush()
    return quiet.exit_code
