"""``asz-pipeline parse [SESSION…]``: append to each session's round chain what is newly landed."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, TextIO

from asz_core.cli.app import EXIT_FAILED, EXIT_OK, App

if TYPE_CHECKING:
    from asz_core.assembly.parse import SessionParse

__all__ = ["add", "parse_and_report"]


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("parse", help="assemble landed sessions into conversation rounds",
                       description="Assemble every session (or those named) from its landed files and append "
                                   "a round to its chain under _conversations/<id>/rounds/ when evidence "
                                   "advanced. A session with nothing new is not read. Exit 1 when a chain "
                                   "is refused or held by another parser.")
    p.add_argument("sessions", nargs="*", metavar="SESSION", help="only these sessions")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def parse_and_report(app: App, sessions: list[str] | None, out: TextIO, *, as_json: bool = False,
                     quiet: bool = False, owed_only: bool = False) -> int:
    """Parse and print one line per session that wrote a round or could not; the exit code.

    With ``owed_only`` (the parse that ends ``run``) only the sessions the passes' log says
    landed since the last parse (:mod:`asz_core.root.owed`); every session when it says so, or
    when there is no such log. A parse of every session settles the log the same way."""
    from asz_core.root.owed import read_owed, settle_owed

    root = app.config.root
    owed = read_owed(root) if sessions is None else None
    if owed_only and owed is not None and owed.sessions is not None:
        sessions = sorted(owed.sessions)
    results = _parse(app, sessions) if sessions is None or sessions else []
    failed = [r for r in results if r.outcome]
    if owed is not None:
        settle_owed(root, owed, (r.session for r in failed))
    if as_json:
        print(json.dumps({"sessions": [{"session": r.session, "rounds": [p.name for p in r.rounds],
                                        "through_seq": r.through_seq, "outcome": r.outcome or "ok",
                                        "message": r.message} for r in results]}), file=out)
    else:
        for r in results:
            if r.outcome:
                print(f"parse: {r.outcome}: {r.message}", file=app.err)
            elif r.rounds and not quiet:
                print(f"parse: {r.session}: {len(r.rounds)} round(s) through seq {r.through_seq} "
                      f"({', '.join(p.name for p in r.rounds)})", file=out)
        if not quiet:
            written = sum(len(r.rounds) for r in results)
            print(f"parse: sessions={len(results)} rounds={written} refused={len(failed)}", file=out)
    return EXIT_FAILED if failed else EXIT_OK


def _parse(app: App, sessions: list[str] | None) -> list[SessionParse]:
    from asz_core.assembly.parse import parse_root  # loaded only when a session is to be parsed

    budget = int(app.config.section("parse").get("max_round_bytes") or 2 << 20)
    return parse_root(app.config.root, sessions, max_round_bytes=budget)


def run(args: argparse.Namespace, app: App) -> int:
    return parse_and_report(app, args.sessions or None, app.out, as_json=args.json)
