"""``asz-pipeline bodies [--retire FILE…]``: the body files no pass has placed, and the way out
for one that never will be.

Without ``--retire`` it lists, from ``seen.state`` alone (no source is read), every body file
that waits, is unreadable or changed after it landed (a conflict), with why, and marks those
retired. ``--retire FILE`` records each file as it is now in ``_provider/retired``
(:mod:`.retired`), so that passes stop counting it waiting or in conflict; the file itself is
never changed or deleted, nor is anything landed, and a landed file is refused.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from asz_adapters.claude_code_provider import names
from asz_adapters.claude_code_provider.discover import source_dir_of
from asz_adapters.claude_code_provider.retired import RetiredBodies
from asz_adapters.claude_code_provider.seen import CONFLICT, LANDED, UNREADABLE, WAITING, SeenTable
from asz_core.cli.app import EXIT_OK, App
from asz_core.cli.rootcheck import require_root
from asz_core.errors import UsageError
from asz_core.pipeline import hold_root
from asz_core.root.storage import StorageRoot

__all__ = ["add_bodies_command"]

NAME = "claude-code-provider"


def add_bodies_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("bodies", help="list the provider body files not placed; retire one that never will be",
                       description="List the provider body files that wait or are unreadable (from "
                                   "_provider/seen.state). --retire FILE records a file, as it is now, as "
                                   "given up: passes count it bodies_retired instead of waiting (or in conflict, "
                                   "when it changed after it landed), until its "
                                   "size or mtime change. The file is never changed or deleted.")
    p.add_argument("--retire", nargs="+", metavar="FILE", default=[],
                   help="a body file (its path, or its name in the configured body directory)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def _source_dir(app: App) -> Path:
    for entry in app.config.adapters:
        if entry.name == NAME:
            return source_dir_of(str(entry.options.get("source_root") or ""))
    return source_dir_of("")


def _resolve(given: str, directory: Path) -> Path:
    path = Path(given).expanduser()
    if not path.exists() and "/" not in given:
        path = directory / given
    if names.body_file(path.name) is None:
        raise UsageError(f"{given}: not a provider body file name (<id>.request.json or <id>.response.json)")
    if not path.is_file():
        raise UsageError(f"{given}: no such body file (looked in {directory} too)")
    return path


def run(args: argparse.Namespace, app: App) -> int:
    root = app.config.root
    require_root(root, "bodies")
    store = StorageRoot(root)
    with hold_root(store, wait=True, doing="bodies"):
        table = SeenTable.load(store)
        retired = RetiredBodies.load(root)
        if args.retire:
            directory = _source_dir(app)
            paths = [_resolve(given, directory) for given in args.retire]
            for path in paths:
                entry = table.get(path.name)
                if entry is not None and entry.state == LANDED:
                    raise UsageError(f"{path}: it has landed, so there is nothing to retire")
            for path in paths:
                retired.retire(path)
            retired.save()
    stuck = [e for _, e in sorted(table.entries.items()) if e.state in (WAITING, UNREADABLE, CONFLICT)]
    rows = [{"file": e.name, "state": e.state, "why": e.why,
             "retired": retired.holds(e.name, e.size, e.mtime)} for e in stuck]
    if args.json:
        print(json.dumps({"root": str(root), "bodies": rows, "retired_now": [Path(g).name for g in args.retire]}),
              file=app.out)
    else:
        for row in rows:
            mark = " (retired)" if row["retired"] else ""
            print(f"{row['file']}: {row['state']} ({row['why'] or '-'}){mark}", file=app.out)
        for given in args.retire:
            print(f"retired {Path(given).name}: passes count it bodies_retired until it changes; "
                  f"the file is kept as it is", file=app.out)
        print(f"bodies: root={root} {len(rows)} not placed, {sum(1 for r in rows if r['retired'])} retired",
              file=app.out)
    return EXIT_OK
