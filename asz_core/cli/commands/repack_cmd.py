"""``asz-pipeline repack DEST [SESSION…]``: copy the root into ``DEST`` cut to a file size."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from asz_core.cli.app import EXIT_CONFIG, EXIT_FAILED, EXIT_OK, EXIT_REFUSED, App
from asz_core.config import RENAMED_ADAPTERS

__all__ = ["add"]

_DEFAULT_BUDGET = 2097152


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("repack", help="copy the root into DEST, re-cut to a file size",
                       description="Copy the storage root, or some sessions, into the new or empty "
                                   "directory DEST with no file larger than the adapter's "
                                   "collector.max_delta_bytes (or --max-delta-bytes): every record "
                                   "keeps its bytes and order, cursors are carried so collection "
                                   "continues into DEST, and the conversations are parsed again "
                                   "there. Use it after changing max_delta_bytes.")
    p.add_argument("dest", metavar="DEST", help="a new or empty directory")
    p.add_argument("sessions", nargs="*", metavar="SESSION", help="only these sessions")
    p.add_argument("--max-delta-bytes", type=int, metavar="N",
                   help="the largest file, whatever adapter landed it (at least 4096)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--wait", action="store_true",
                   help="if a pass holds the root, wait for it instead of failing")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, app: App) -> int:
    from asz_core.pipeline import PassRefused, hold_root
    from asz_core.repack import RepackRefused, repack_root
    from asz_core.root.storage import StorageRoot

    config = app.config
    if args.max_delta_bytes is not None and args.max_delta_bytes < 4096:
        print("repack: --max-delta-bytes must be at least 4096", file=app.err)
        return EXIT_CONFIG
    budgets = {entry.name: int(entry.options.get("collector", {}).get("max_delta_bytes", _DEFAULT_BUDGET))
               for entry in config.adapters}

    def budget(header: dict[str, Any]) -> int:
        if args.max_delta_bytes is not None:
            return int(args.max_delta_bytes)
        name = str(header.get("adapter", "")).partition("/")[0]
        return budgets.get(RENAMED_ADAPTERS.get(name, name), _DEFAULT_BUDGET)

    try:
        with hold_root(StorageRoot(config.root), wait=args.wait, doing="repack"):
            rows = repack_root(config.root, Path(args.dest), budget, time.time_ns(),
                               sessions=args.sessions or None,
                               max_round_bytes=int(config.section("parse").get("max_round_bytes") or 2 << 20))
    except PassRefused as exc:
        print(f"repack: {exc}", file=app.err)
        return EXIT_REFUSED
    except RepackRefused as exc:
        print(f"repack: {exc}", file=app.err)
        return EXIT_FAILED
    if args.json:
        print(json.dumps({"dest": args.dest, "sessions": [vars(r) for r in rows]}), file=app.out)
    else:
        print(f"{'session':<40} {'in':>5} {'out':>5} {'records':>8} {'bytes':>10} {'rounds':>6}", file=app.out)
        for r in rows:
            line = f"{r.session:<40} {r.files_in:>5} {r.files_out:>5} {r.records:>8} {r.bytes:>10} {r.rounds:>6}"
            print(line + (f"  refused: {r.refused}" if r.refused else ""), file=app.out)
    return EXIT_FAILED if any(r.refused for r in rows) else EXIT_OK
