"""``asz-pipeline retain [--dry-run] [SESSION…]``: apply ``storage.retention`` now."""

from __future__ import annotations

import argparse
import json
import time

from asz_core.cli.app import EXIT_FAILED, EXIT_OK, EXIT_REFUSED, App

__all__ = ["add"]


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("retain", help="replace old, sent landed files by skeletons",
                       description="Apply storage.retention now, as the end of every pass does: "
                                   "each landed file whose session's last record is old enough and "
                                   "that the receiver of export.otlp accepted (or any, with "
                                   "local_only) gives way to its skeleton. --dry-run lists what "
                                   "would go and the bytes it frees, and changes nothing.")
    p.add_argument("sessions", nargs="*", metavar="SESSION", help="only these sessions")
    p.add_argument("--dry-run", action="store_true", help="list what would go; remove nothing")
    p.add_argument("--json", action="store_true")
    p.add_argument("--wait", action="store_true",
                   help="if a pass holds the root, wait for it instead of failing")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, app: App) -> int:
    from asz_core.pipeline import PassRefused, hold_root
    from asz_core.retention.step import retain_configured
    from asz_core.root.storage import StorageRoot

    config = app.config
    if not config.root.is_dir():
        print(f"retain: no storage root at {config.root}; nothing to do", file=app.err)
        return EXIT_OK
    try:
        with hold_root(StorageRoot(config.root), wait=args.wait, doing="retain"):
            result = retain_configured(app.host.pm.hook, config, time.time_ns(), dry_run=args.dry_run,
                                       sessions=args.sessions or None)
    except PassRefused as exc:
        print(f"retain: {exc}", file=app.err)
        return EXIT_REFUSED
    files = result.plan.remove if args.dry_run else result.removed
    if args.json:
        print(json.dumps({
            "dry_run": args.dry_run, "freed": result.freed, "skeleton_bytes": result.skeleton_bytes,
            "files": [{"session": c.session, "path": c.relpath, "bytes": c.size, "receiver": c.receipt,
                       "finishing": c.finishing} for c in files],
            "kept": dict(result.plan.kept), "kept_bytes": result.plan.kept_bytes,
            "errors": result.errors}), file=app.out)
    else:
        for c in files:
            print(f"{c.relpath}\t{c.size}\t{c.receipt}", file=app.out)
        for error in result.errors:
            print(f"retain: {error}", file=app.err)
        print(result.line(), file=app.out)
    return EXIT_FAILED if result.errors else EXIT_OK
