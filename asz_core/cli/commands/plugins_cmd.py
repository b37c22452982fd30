"""``asz-pipeline plugins``: what is installed, what loaded, and the order adapters run in."""

from __future__ import annotations

import argparse
import json
from typing import Any

from asz_core.cli.app import EXIT_FAILED, EXIT_OK, App
from asz_core.cli.console import plural
from asz_core.config import ConfigError

__all__ = ["add"]


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("plugins", help="list adapters and plugins",
                       description="List installed adapters and plugins: version, distribution, "
                                   "entry point, whether asz.yaml enables them and in which order.")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def _rows(app: App) -> tuple[list[dict[str, Any]], str]:
    order: dict[str, tuple[int, bool]] = {}
    note = ""
    switched_off: set[str] = set()
    try:
        config = app.config
        for index, entry in enumerate(config.adapters, start=1):
            order[entry.name] = (index, entry.enabled)
        switched_off = {name for name in app.host.plugins if not config.plugin_enabled(name)}
    except ConfigError as exc:
        note = (f"the configuration cannot be used ({plural(len(exc.problems), 'problem')}); "
                f"`asz-pipeline config` lists them")
    rows = []
    for record in app.host.all_plugins():
        is_adapter = record.group == "asz.adapters"
        position, enabled = order.get(record.name, (None, False))
        off = record.name in switched_off or (is_adapter and position is not None and not enabled)
        status = "switched off" if off else "loaded" if record.loaded else f"failed: {record.error}"
        rows.append({
            "name": record.name,
            "type": "adapter" if is_adapter else "plugin",
            "version": record.info.version if record.info else record.version,
            "distribution": f"{record.distribution} {record.version}".strip(),
            "entry_point": record.entry_point,
            "enabled": enabled if is_adapter else record.loaded and not off,
            "order": position,
            "status": status,
        })
    rows.sort(key=lambda r: (r["type"] != "adapter", r["order"] is None, r["order"] or 0, r["name"]))
    return rows, note


def run(args: argparse.Namespace, app: App) -> int:
    rows, note = _rows(app)
    if args.json:
        print(json.dumps({"plugins": rows, "note": note or None}), file=app.out)
    else:
        heads = ("order", "type", "name", "version", "distribution", "entry point", "enabled", "status")
        table = [(str(r["order"] or "-"), r["type"], r["name"], r["version"], r["distribution"],
                  r["entry_point"], "yes" if r["enabled"] else "no", r["status"])
                 for r in rows]
        widths = [max(len(h), *(len(t[i]) for t in table)) if table else len(h)
                  for i, h in enumerate(heads)]
        print("  ".join(h.ljust(w) for h, w in zip(heads, widths, strict=False)).rstrip(), file=app.out)
        for t in table:
            print("  ".join(c.ljust(w) for c, w in zip(t, widths, strict=False)).rstrip(), file=app.out)
        if note:
            print(f"note: {note}", file=app.err)
    return EXIT_FAILED if any(r["status"].startswith("failed") for r in rows) else EXIT_OK
