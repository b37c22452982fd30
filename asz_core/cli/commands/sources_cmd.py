"""``asz-pipeline sources``: what each enabled adapter sees, without landing anything."""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from typing import Any

from asz_core.cli.app import EXIT_FAILED, EXIT_OK, App
from asz_core.cli.console import plural
from asz_core.context import AdapterContext, PassContext
from asz_core.pipeline import describe_failure
from asz_core.plugin import Found
from asz_core.root.storage import StorageRoot

__all__ = ["add"]


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("sources", help="show what each adapter finds",
                       description="Ask each enabled adapter what it finds (directories, counts, "
                                   "sessions named), without reading sources whole or landing.")
    p.add_argument("--json", action="store_true")
    p.add_argument("--sessions", action="store_true", help="list every unit found, not just counts")
    p.set_defaults(func=run)


def _excluded(actx: AdapterContext, found: Found) -> dict[str, bool]:
    """``excluded``, for a unit whose directory ``include``/``exclude`` leave out (the pass
    leaves it out before the adapter claims)."""
    if found.directory is None or actx.session_filter.admits_directory(found.directory):
        return {}
    return {"excluded": True}


def run(args: argparse.Namespace, app: App) -> int:
    config = app.config
    now = time.time_ns()
    ctx = PassContext(root=StorageRoot(config.root, pass_started_ns=now, dry_run=True),
                      dry_run=True, started_ns=now, adapter_info=app.host.adapter_info)
    report: list[dict[str, Any]] = []
    status = EXIT_OK
    for entry in config.adapters:
        if not entry.enabled:
            continue
        record = app.host.adapter(entry.name)
        actx = AdapterContext(entry.name, dict(entry.options), ctx,
                              version=record.info.version if record.info else "0")
        try:
            found = list(app.host.discover(entry.name, actx))
        except Exception as exc:  # noqa: BLE001 - report, go on with the next adapter
            report.append({"adapter": entry.name, "error": describe_failure(exc)})
            status = EXIT_FAILED
            continue
        kinds = Counter(f.kind for f in found)
        report.append({
            "adapter": entry.name,
            "source_dirs": actx.source_dirs or [actx.source_root or "(default)"],
            "found": dict(kinds),
            "sources": sum(f.sources for f in found),
            "units": [{"kind": f.kind, "key": f.key, "session": f.session, "sources": f.sources,
                       "path": f.path, **f.detail, **_excluded(actx, f)} for f in found],
        })
    if args.json:
        print(json.dumps({"adapters": report}), file=app.out)
        return status
    for item in report:
        if "error" in item:
            print(f"{item['adapter']}: error: {item['error']}", file=app.out)
            continue
        counts = ", ".join(plural(n, k) for k, n in sorted(item["found"].items())) or "nothing"
        where = ", ".join(item["source_dirs"])
        print(f"{item['adapter']} ({where}): {counts}; {plural(item['sources'], 'source file')}", file=app.out)
        for unit in item["units"] if args.sessions else []:
            extra = " ".join(f"{k}={v}" for k, v in unit.items()
                             if k not in ("kind", "key", "session", "path") and v not in (None, "", {}))
            print(f"  {unit['kind']} {unit['key']} {extra}".rstrip(), file=app.out)
    return status
