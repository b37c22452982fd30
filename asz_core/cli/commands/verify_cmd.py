"""``asz-pipeline verify [SESSION…]``: check the root by the rules alone; non-zero on any problem."""

from __future__ import annotations

import argparse
import json

from asz_core.cli.app import EXIT_FAILED, EXIT_OK, App

__all__ = ["add"]


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("verify", parents=[common], help="check every landed file of the root",
                       description="Read every landed file strictly (digests, counts, types), check "
                                   "ord and byte chains per stream against the cursors, rebuild "
                                   "provider bodies. Reads only the root; exit 1 on any problem.")
    p.add_argument("sessions", nargs="*", metavar="SESSION", help="only these sessions")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, app: App) -> int:
    from asz_core.verify import verify_root  # loaded by this command only, not by every start-up

    root = app.config.root
    reports = verify_root(root, args.sessions or None) if root.is_dir() else []
    problems = [p for r in reports for p in r.problems]
    if args.json:
        print(json.dumps({
            "root": str(root), "ok": not problems,
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
        verdict = "ok" if not problems else f"{len(problems)} problem(s)"
        print(f"verify: sessions={len(reports)} files={files} records={records} {verdict}", file=app.out)
    return EXIT_FAILED if problems else EXIT_OK
