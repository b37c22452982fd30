"""``asz-pipeline run``: one pass, or passes at an interval with ``--watch``."""

from __future__ import annotations

import argparse
import json
import time

from asz_core.cli.app import EXIT_FAILED, EXIT_OK, App
from asz_core.cli.console import ConsoleReporter, pass_line, print_warnings
from asz_core.config import parse_duration
from asz_core.context import PassSummary
from asz_core.pipeline import PassRefused, run_pass

__all__ = ["add"]


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("run", parents=[common], help="run a pass: land what is new",
                       description="Run one pass over every enabled adapter, in the order "
                                   "asz.yaml lists them. Exit 1 on conflicts, pending or errors.")
    p.add_argument("--watch", action="store_true", help="keep running passes")
    p.add_argument("--interval", metavar="DURATION",
                   help="time between passes with --watch (e.g. 30s, 10m); "
                        "default: the smallest collector.interval of the enabled adapters")
    p.add_argument("--dry-run", action="store_true", help="read and count, land nothing")
    # every pass runs in full now; scripts written when a quiet pass could be repeated still work
    p.add_argument("--full", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--json", action="store_true", help="print the pass line as one JSON object")
    p.add_argument("--wait", action="store_true",
                   help="if another pass holds the root, wait for it instead of failing")
    p.add_argument("-v", "--verbose", action="store_true", help="print every warning as it happens")
    p.set_defaults(func=run)


def _report(args: argparse.Namespace, app: App, summary: PassSummary, reporter: ConsoleReporter) -> None:
    reporter.clear()
    if args.json:
        print(json.dumps({**summary.as_dict(), "warnings": reporter.warnings}),
              file=app.out)
    else:
        print(pass_line(summary), file=app.out)
        for error in summary.errors:
            print(f"error: {error}", file=app.err)
        if not args.verbose:  # with -v they were printed as they happened
            print_warnings(reporter.warnings, app.err, verbose=False)
    app.out.flush()


def _interval(args: argparse.Namespace, app: App) -> float:
    if args.interval:
        return parse_duration(args.interval)
    intervals = [parse_duration(a.options["collector"]["interval"])
                 for a in app.config.adapters if a.enabled]
    return min(intervals, default=600.0)


def run(args: argparse.Namespace, app: App) -> int:
    config = app.config
    if not args.watch:
        reporter = ConsoleReporter(app.err, verbose=args.verbose)
        summary = run_pass(app.host, config, reporter=reporter, dry_run=args.dry_run, wait=args.wait)
        _report(args, app, summary, reporter)
        return EXIT_FAILED if summary.failed else EXIT_OK
    interval = _interval(args, app)
    while True:
        reporter = ConsoleReporter(app.err, verbose=args.verbose)
        try:
            summary = run_pass(app.host, config, reporter=reporter, dry_run=args.dry_run, wait=True)
            _report(args, app, summary, reporter)
        except PassRefused as exc:
            print(f"asz: {exc}; trying again in {interval:g}s", file=app.err)
        time.sleep(interval)
