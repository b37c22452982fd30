"""``asz-pipeline config``: validate the configuration and print it as it takes effect."""

from __future__ import annotations

import argparse
import json

from asz_core.cli.app import EXIT_OK, App

__all__ = ["add"]


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("config", parents=[common], help="validate and print the effective configuration",
                       description="Validate asz.yaml (every problem with its file, line and key) "
                                   "and print the configuration in effect, defaults filled in.")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, app: App) -> int:
    config = app.config  # raises ConfigError with every problem listed
    effective = dict(config.data)
    effective["adapters"] = [e.options for e in config.adapters]
    if args.json:
        print(json.dumps({"source": config.source, "config": effective}), file=app.out)
    else:
        import yaml  # only to print: a pass never loads it when the configuration is cached

        print(f"# effective configuration, from {config.source}", file=app.out)
        print(yaml.safe_dump(effective, sort_keys=False, default_flow_style=False).rstrip(), file=app.out)
    return EXIT_OK
