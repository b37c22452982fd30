"""``asz-pipeline usage``: tokens (in, out, cache read, cache write) and cost, from the root alone.

Grouped ``--by`` day (the default), month, session, model or project; ``--since``/``--until``
(dates, UTC, inclusive) keep the calls in range. Cost is where the model's price is known: the
packaged table, ``usage.prices`` in ``asz.yaml``, then ``--prices FILE`` laid over it
(:mod:`asz_core.page.prices`). Every unpriced model is named, and every price used is printed
with its source and the date it was checked.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
from pathlib import Path

from asz_core.cli.app import EXIT_CONFIG, EXIT_OK, App
from asz_core.page.prices import KINDS

__all__ = ["add"]


def _date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date (YYYY-MM-DD)") from None


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("usage", help="tokens and cost by day, month, session, model or project",
                       description="Sum the token usage every model call reported (a call counted "
                                   "once), and its cost where the model's price is known.")
    p.add_argument("--by", choices=("day", "month", "session", "model", "project"), default="day")
    p.add_argument("--since", type=_date, metavar="DATE", help="only calls on or after DATE (UTC)")
    p.add_argument("--until", type=_date, metavar="DATE", help="only calls on or before DATE (UTC)")
    p.add_argument("--prices", type=Path, metavar="FILE",
                   help="JSON or YAML: model name -> {in, out, cache_read, cache_write, source, date}, "
                        "US dollars per million tokens, laid over the packaged table and asz.yaml's usage.prices")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, app: App) -> int:
    from asz_core.page.catalogue import Catalogue
    from asz_core.page.prices import PriceTable
    from asz_core.page.usage import usage_report

    try:
        prices = PriceTable.of_config(app.config.section("usage"), args.prices)
    except (OSError, ValueError) as exc:
        print(f"asz: --prices: {exc}", file=app.err)
        return EXIT_CONFIG
    catalogue = Catalogue(app.config.root)
    calls = [c for d in catalogue.digests() for c in d.calls]
    report = usage_report(calls, args.by, prices, since=args.since, until=args.until)
    if args.json:
        print(json.dumps(report), file=app.out)
        return EXIT_OK
    head = (f"{args.by.upper():<40} {'CALLS':>7} {'IN':>12} {'OUT':>12} {'CACHE READ':>14} "
            f"{'CACHE WRITE':>14} {'COST USD':>10}")
    print(head, file=app.out)
    for row in (*report["rows"], report["total"]):
        cost = f"{row['cost']:.2f}" + ("*" if row["unpriced_calls"] else "")
        print(f"{row['key'][:40]:<40} {row['calls']:>7} {row['in']:>12} {row['out']:>12} "
              f"{row['cache_read']:>14} {row['cache_write']:>14} {cost:>10}", file=app.out)
    if report["unpriced"]:
        names = ", ".join(f"{model} ({n} call{'s' if n != 1 else ''})" for model, n in report["unpriced"].items())
        print(f"* not in the cost, no price known: {names}; add one under usage.prices in asz.yaml "
              f"or with --prices FILE", file=app.out)
    unreported = report["total"]["unreported_calls"]
    if unreported:
        print(f"{unreported} call(s) reported no token counts: their tokens are not known", file=app.out)
    for price in report["prices"]:
        rates = ", ".join(f"{kind.replace('_', ' ')} {price[kind]:g}" for kind in KINDS)
        checked = f" (checked {price['date']})" if price["date"] else ""
        print(f"priced {price['model']}: {rates} USD per million tokens; {price['source']}{checked}",
              file=app.out)
    return EXIT_OK
