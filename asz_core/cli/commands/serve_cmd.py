"""``asz-pipeline serve [ADDR] [--watch]``: the page over the root, read-only, on loopback by default.

The list of conversations at ``/``, one conversation at ``/c/{id}``, upstream's JSON API under
``/api/``. ``view.hide`` is withheld from every reader. An address that is not loopback is
refused unless ``--allow-remote`` says so: the page shows whole sessions to whoever reaches it.

With ``--watch`` the same process also runs a pass and its parse on the collector interval
(upstream's ``server``; :mod:`asz_core.page.watch`): the page is up before the first pass, shows
when data was last collected and why a pass failed, and Ctrl-C lets a pass under way finish.
"""

from __future__ import annotations

import argparse
import io
import threading

from asz_core.cli.app import EXIT_CONFIG, EXIT_FAILED, EXIT_OK, App
from asz_core.cli.options import duration
from asz_core.page.watch import Collected

__all__ = ["add", "collect_pass"]


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("serve", help="serve the root as a local web page (read-only)",
                       description="Serve the root's conversations as a page: the list at /, one "
                                   "conversation at /c/ID, upstream's JSON API under /api/. Reads "
                                   "only; withholds what view.hide names from every reader. With "
                                   "--watch, also runs a pass and a parse on the collector interval.")
    p.add_argument("addr", nargs="?", default="127.0.0.1:8787", metavar="ADDR",
                   help="HOST:PORT to listen on (default 127.0.0.1:8787)")
    p.add_argument("--allow-remote", action="store_true",
                   help="listen on an address that is not loopback (anyone who reaches it reads every session)")
    p.add_argument("--watch", action="store_true",
                   help="also run passes (and parses) on the collector interval; the page shows the last one")
    p.add_argument("--interval", metavar="DURATION", type=duration,
                   help="time between passes with --watch (e.g. 30s, 10m); "
                        "default: the smallest collector.interval of the enabled adapters")
    p.set_defaults(func=run)


def collect_pass(app: App) -> Collected:
    """One pass and its parse, as ``asz-pipeline run`` does, as the page reports it."""
    from asz_core.cli.commands.parse_cmd import parse_and_report
    from asz_core.cli.console import pass_line
    from asz_core.context import QuietReporter
    from asz_core.page.watch import now_ms
    from asz_core.pipeline import PassRefused, run_pass

    started = now_ms()
    try:
        summary = run_pass(app.host, app.config, reporter=QuietReporter())
    except PassRefused as exc:
        return Collected(started, now_ms(), False, f"no pass: {exc}", (str(exc),))
    problems = [f"error: {error}" for error in summary.errors]
    totals = summary.totals
    if totals.conflicts or totals.pending:
        problems.append(f"{totals.conflicts} conflict(s), {totals.pending} pending: "
                        f"`asz-pipeline conflicts` lists them")
    if app.config.root.is_dir():
        # the parse that ends `run`: the sessions landed since the last parse; what it refuses,
        # one line each, is kept for the page (and logged with the pass)
        said = io.StringIO()
        if parse_and_report(app.printing_to(said, said), None, said, quiet=True,
                            owed_only=True) != EXIT_OK:
            problems += [line for line in said.getvalue().splitlines() if line.strip()] or ["the parse failed"]
    return Collected(started, now_ms(), not summary.failed and not problems, pass_line(summary),
                     tuple(problems), summary.fields())


def run(args: argparse.Namespace, app: App) -> int:
    from asz_core.cli.commands.run_cmd import _interval
    from asz_core.glossary import gather
    from asz_core.page.catalogue import Catalogue
    from asz_core.page.prices import PriceTable
    from asz_core.page.server import PageServer, parse_addr
    from asz_core.page.watch import Watcher

    try:
        host, port = parse_addr(args.addr, allow_remote=args.allow_remote)
        hide = app.config.section("view").get("hide", [])
        catalogue = Catalogue(app.config.root, hide)
    except ValueError as exc:
        print(f"asz: {exc}", file=app.err)
        return EXIT_CONFIG
    watcher = None
    if args.watch:
        app.require_plugins()
        interval = _interval(args, app)
        watcher = Watcher(lambda: collect_pass(app), interval, app.err, collected=catalogue.refresh)
    elif not catalogue.session_ids():
        # As upstream: an empty page would look like a broken one.
        print(f"asz: no sessions in {app.config.root}: run `asz-pipeline run` first, "
              f"or serve with --watch", file=app.err)
        return EXIT_FAILED
    try:
        server = PageServer(catalogue, host, port, log=True, glossaries=gather(app.host), watcher=watcher,
                            prices=PriceTable.of_config(app.config.section("usage")))
    except OSError as exc:
        print(f"asz: cannot listen on {args.addr}: {exc}", file=app.err)
        return EXIT_FAILED
    every = "" if watcher is None else f"; a pass every {watcher.interval:g}s"
    print(f"serving {app.config.root} on {server.url}/ (read-only{every}; Ctrl-C stops)", file=app.out, flush=True)
    if watcher is not None:
        watcher.start()  # after the address is printed: the page is up before the first pass
    else:
        # The list is read while the first visitor's browser starts, not after it asks.
        threading.Thread(target=catalogue.digests, name="asz-page-list", daemon=True).start()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    if watcher is not None:
        if watcher.busy:
            print("asz: letting the pass under way finish (Ctrl-C again stops at once; "
                  "the next pass picks up what this one did not land)", file=app.err, flush=True)
        try:
            watcher.stop()
        except KeyboardInterrupt:
            print("asz: stopped during a pass", file=app.err)
            return EXIT_FAILED
    print("stopped", file=app.out, flush=True)
    return EXIT_OK
