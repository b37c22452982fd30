"""``asz-pipeline verify [SESSION…]``: check the root by the rules alone; non-zero on any problem."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

from asz_core.cli.app import EXIT_FAILED, EXIT_OK, App
from asz_core.cli.console import ConsoleReporter, plural
from asz_core.cli.rootcheck import require_root

__all__ = ["add"]


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("verify", help="check every landed file of the root",
                       description="Read every landed file strictly (digests, counts, types), check "
                                   "ord and byte chains per stream against the cursors, rebuild "
                                   "provider bodies, and let each adapter check its own tables "
                                   "against the landed files. Reads only the root; exit 1 on any "
                                   "problem.")
    p.add_argument("sessions", nargs="*", metavar="SESSION", help="only these sessions")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def _progress(app: App) -> Callable[[int, int], None]:
    """``verify: 120/2000 sessions`` on a terminal, for a verify longer than a second."""
    reporter = ConsoleReporter(app.err)

    def show(done: int, total: int) -> None:
        reporter.progress("verify", done, total)
        if done == total:
            reporter.clear()
    return show


def run(args: argparse.Namespace, app: App) -> int:
    from asz_core.verify import verify_root  # loaded by this command only, not by every start-up

    root = app.config.root
    require_root(root, "verify")
    reports = verify_root(root, args.sessions or None, progress=_progress(app), host=app.host)
    problems = [p for r in reports for p in r.problems]
    empty = not reports
    ok = not problems and not empty
    if args.json:
        print(json.dumps({
            "root": str(root), "ok": ok, "empty": empty,
            "sessions": [{"session": r.session, "files": r.files, "records": r.records,
                          "repeats": r.repeats, "counts": dict(r.counts), "notes": r.notes,
                          "problems": [{"kind": p.kind, "path": p.path, "message": p.message}
                                       for p in r.problems]} for r in reports]}), file=app.out)
    else:
        for problem in problems:
            print(str(problem), file=app.out)
        for report in reports:
            for note in report.notes:
                print(f"{report.session}: note: {note}", file=app.out)
        files = sum(r.files for r in reports)
        records = sum(r.records for r in reports)
        if empty:
            verdict = "nothing to check (no session has landed here)"
        else:
            verdict = "ok" if not problems else plural(len(problems), "problem")
        print(f"verify: root={root} sessions={len(reports)} files={files} records={records} {verdict}",
              file=app.out)
    return EXIT_OK if ok else EXIT_FAILED
