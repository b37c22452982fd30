"""The built-in subcommands, one module each; each exposes ``add(subparsers, common)``."""

from __future__ import annotations

import argparse

from asz_core.cli.commands import (
    config_cmd,
    plugins_cmd,
    run_cmd,
    scenario_cmd,
    sources_cmd,
    verify_cmd,
    view_cmd,
)

__all__ = ["add_all"]

_COMMANDS = (run_cmd, sources_cmd, verify_cmd, view_cmd, plugins_cmd, config_cmd, scenario_cmd)


def add_all(sub: argparse._SubParsersAction[argparse.ArgumentParser],
            common: argparse.ArgumentParser) -> None:
    for module in _COMMANDS:
        module.add(sub, common)
