"""``asz-pipeline conflicts``: every source collection has stopped on, and what to do about it.

A source whose landed bytes changed (cut short, or rewritten before its cursor) is a conflict: its
cursor says so, nothing more lands from it, and every pass counts it and exits 1 (upstream keeps
it so too). A pass names the file only when it first meets it; this lists them all, from the
cursors alone, reading no source and changing nothing.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from asz_core.cli.app import EXIT_FAILED, EXIT_OK, App
from asz_core.cli.console import plural
from asz_core.cli.rootcheck import require_root
from asz_core.root.cursors import CONFLICT, AppendCursor, parse_pairs, read_small

__all__ = ["add", "find_conflicts"]

WHAT_TO_DO = ("put the source's bytes back (a backup, or the copy the tool keeps) and the next pass "
              "goes on where it stopped; nothing landed from it is lost meanwhile")


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("conflicts", help="list the sources collection stopped on, and what to do",
                       description="List every source whose landed bytes changed (cut short or "
                                   "rewritten), from the root's cursors; exit 1 when there is one.")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def find_conflicts(root: Path) -> list[dict[str, object]]:
    """Each cursor of the root in conflict: its session, file, source and how far it had landed."""
    found: list[dict[str, object]] = []
    for session in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))):
        for path in sorted(session.rglob("*.cursor")):
            raw = read_small(path)
            if raw is None:
                continue
            state = dict(parse_pairs(raw.decode("utf-8", "replace"))).get("state")
            if state != CONFLICT:
                continue
            cursor = AppendCursor.load(path)
            found.append({"session": session.name, "cursor": path.relative_to(root).as_posix(),
                          "source": cursor.source if cursor else "", "landed_bytes": cursor.offset if cursor else 0})
    return found


def run(args: argparse.Namespace, app: App) -> int:
    root = app.config.root
    require_root(root, "conflicts")
    found = find_conflicts(root)
    if args.json:
        print(json.dumps({"root": str(root), "conflicts": found, "what_to_do": WHAT_TO_DO}), file=app.out)
    else:
        for item in found:
            print(f"{item['session']}: {item['source']} (landed up to byte {item['landed_bytes']}; "
                  f"{item['cursor']})", file=app.out)
        print(f"conflicts: root={root} {plural(len(found), 'source')}", file=app.out)
        if found:
            print(f"asz: {WHAT_TO_DO}", file=app.err)
    return EXIT_FAILED if found else EXIT_OK
