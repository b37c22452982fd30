"""``asz-pipeline run``: one pass, or passes at an interval with ``--watch``."""

from __future__ import annotations

import argparse
import json
import time

from asz_core.cli.app import EXIT_FAILED, EXIT_OK, App
from asz_core.cli.console import ConsoleReporter, pass_line, print_warnings
from asz_core.cli.options import duration
from asz_core.config import parse_duration
from asz_core.context import PassSummary
from asz_core.pipeline import PassRefused, run_pass
from asz_core.removal.scenario_root import is_scenario_root

__all__ = ["add"]


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("run", help="run a pass: land what is new",
                       description="Run one pass over every enabled adapter, in the order "
                                   "asz.yaml lists them. Exit 1 on conflicts, pending or errors.")
    p.add_argument("--watch", action="store_true", help="keep running passes")
    p.add_argument("--interval", metavar="DURATION", type=duration,
                   help="time between passes with --watch (e.g. 30s, 10m); "
                        "default: the smallest collector.interval of the enabled adapters")
    p.add_argument("--dry-run", action="store_true",
                   help="read and count, land nothing (provider bodies whose transcripts this pass "
                        "would land first are counted as waiting)")
    # every pass runs in full now; scripts written when a quiet pass could be repeated still work
    p.add_argument("--full", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--json", action="store_true", help="print the pass line as one JSON object")
    p.add_argument("--wait", action="store_true",
                   help="if another pass holds the root, wait for it instead of failing")
    p.add_argument("-v", "--verbose", action="store_true", help="print every warning as it happens")
    p.set_defaults(func=run)


def _report(args: argparse.Namespace, app: App, summary: PassSummary, reporter: ConsoleReporter,
            shown_before: set[str] | None = None) -> None:
    """The pass line, its errors, and its warnings; with ``shown_before`` (``--watch``) only the
    warnings the last pass did not have, so a standing one is said once and again when it changes."""
    reporter.clear()
    if args.json:
        print(json.dumps({**summary.as_dict(), "warnings": reporter.warnings}),
              file=app.out)
    else:
        print(pass_line(summary), file=app.out)
        for error in summary.errors:
            print(f"error: {error}", file=app.err)
        if not args.verbose:  # with -v they were printed as they happened
            new = [w for w in reporter.warnings if shown_before is None or w not in shown_before]
            print_warnings(new, app.err, verbose=False)
    app.out.flush()


def _parse(args: argparse.Namespace, app: App) -> int:
    """Each pass ends with a parse, as upstream's collect does, of the sessions that landed
    since the last parse (:mod:`asz_core.root.owed`): a pass that landed nothing touches no
    session."""
    from asz_core.cli.commands.parse_cmd import parse_and_report

    if not app.config.root.is_dir():
        return EXIT_OK
    return parse_and_report(app, None, app.err, quiet=not args.verbose, owed_only=True)


def _interval(args: argparse.Namespace, app: App) -> float:
    if args.interval is not None:
        return float(args.interval)
    intervals = [parse_duration(a.options["collector"]["interval"])
                 for a in app.config.adapters if a.enabled]
    return min(intervals, default=600.0)


def run(args: argparse.Namespace, app: App) -> int:
    config = app.config
    app.require_plugins()
    if not config.root.exists() and not args.dry_run:
        print(f"asz: landing into a new storage root, {config.root}", file=app.err)
    if not args.dry_run and is_scenario_root(config.root):  # a scenario build's root
        from asz_core.removal.pass_end import promise

        said = promise(config, app.host.pm.hook)
        if said:
            print(f"scenario : {said}", file=app.err)
    if not args.watch:
        reporter = ConsoleReporter(app.err, verbose=args.verbose)
        summary = run_pass(app.host, config, reporter=reporter, dry_run=args.dry_run, wait=args.wait)
        _report(args, app, summary, reporter)
        code = EXIT_FAILED if summary.failed else EXIT_OK
        if not args.dry_run:
            code = max(code, _parse(args, app))
        return code
    interval = _interval(args, app)
    shown: set[str] = set()
    refused = ""
    while True:
        reporter = ConsoleReporter(app.err, verbose=args.verbose)
        try:
            summary = run_pass(app.host, config, reporter=reporter, dry_run=args.dry_run, wait=True)
            _report(args, app, summary, reporter, shown_before=shown)
            shown, refused = set(reporter.warnings), ""
            if not args.dry_run:
                _parse(args, app)
        except PassRefused as exc:
            if str(exc) != refused:  # said once, not every interval
                print(f"asz: {exc}; trying again every {interval:g}s", file=app.err)
            refused = str(exc)
        time.sleep(interval)
