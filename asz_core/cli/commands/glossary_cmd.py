"""``asz-pipeline glossary [--dialect D] [--json]``: each name the model uses, what a runtime
calls it and where it records it, as each installed adapter declares it."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from asz_core.cli.app import EXIT_CONFIG, EXIT_OK, App

__all__ = ["add"]


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("glossary", help="what each runtime calls the model's names",
                       description="Print each name the model uses, what the runtime calls it and "
                                   "where the runtime records it, one table per dialect, as the "
                                   "installed adapters declare them. Reads no configuration.")
    p.add_argument("--dialect", metavar="D", help="only this dialect (e.g. claude-code/1)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, app: App) -> int:
    from asz_core.glossary import gather

    glossaries = gather(app.host)
    if args.dialect is not None:
        glossaries = [g for g in glossaries if g.dialect == args.dialect]
        if not glossaries:
            known = ", ".join(g.dialect for g in gather(app.host)) or "none"
            print(f"glossary: no installed adapter declares a glossary for dialect {args.dialect!r} "
                  f"(declared: {known})", file=app.err)
            return EXIT_CONFIG
    if args.json:
        print(json.dumps({"glossaries": [asdict(g) for g in glossaries]}), file=app.out)
        return EXIT_OK
    for n, glossary in enumerate(glossaries):
        if n:
            print(file=app.out)
        print(f"{glossary.dialect} ({glossary.runtime}): {len(glossary.terms)} names", file=app.out)
        rows = [("model", glossary.runtime, "where", "note")]
        rows += [(t.model, t.native, t.where, t.note) for t in glossary.terms]
        widths = [max(len(r[i]) for r in rows) for i in range(3)]
        for row in rows:
            cells = [row[i].ljust(widths[i]) for i in range(3)] + [row[3]]
            print("  ".join(cells).rstrip(), file=app.out)
    return EXIT_OK
