"""``asz-pipeline config``: validate the configuration and print it as it takes effect."""

from __future__ import annotations

import argparse
import copy
import json
from typing import Any

from asz_core.cli.app import EXIT_OK, App
from asz_core.redact import redact_headers, redact_url

__all__ = ["add"]


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("config", help="validate and print the effective configuration",
                       description="Validate asz.yaml (every problem with its file, line and key) "
                                   "and print the configuration in effect, defaults filled in.")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def _shown(data: dict[str, Any]) -> dict[str, Any]:
    """The configuration as it may be printed: header values and URL passwords redacted."""
    shown = copy.deepcopy(data)
    otlp = shown.get("export", {}).get("otlp")
    if isinstance(otlp, dict):
        if isinstance(otlp.get("headers"), dict):
            otlp["headers"] = redact_headers(otlp["headers"])
        if isinstance(otlp.get("endpoint"), str):
            otlp["endpoint"] = redact_url(otlp["endpoint"])
    return shown


def run(args: argparse.Namespace, app: App) -> int:
    config = app.config  # raises ConfigError with every problem listed
    effective = _shown({**config.data, "adapters": [e.options for e in config.adapters]})
    if args.json:
        print(json.dumps({"source": config.source, "root": str(config.root), "config": effective}), file=app.out)
    else:
        import yaml  # only to print: a pass never loads it when the configuration is cached

        print(f"# effective configuration, from {config.source}", file=app.out)
        print(f"# storage root: {config.root}{'' if config.root.is_dir() else ' (does not exist yet)'}",
              file=app.out)
        print(yaml.safe_dump(effective, sort_keys=False, default_flow_style=False).rstrip(), file=app.out)
    return EXIT_OK
