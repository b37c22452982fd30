"""The built-in subcommands, one module each (each exposes ``add(subparsers)``), added to
``asz-pipeline`` through ``asz_add_commands`` as any plugin's commands are."""

from __future__ import annotations

import argparse

from asz_core import hookimpl
from asz_core.cli.commands import (
    completion_cmd,
    config_cmd,
    conflicts_cmd,
    conversation_cmd,
    export_cmd,
    glossary_cmd,
    parse_cmd,
    plugins_cmd,
    repack_cmd,
    retain_cmd,
    run_cmd,
    scenario_cmd,
    schedule_cmd,
    serve_cmd,
    sources_cmd,
    usage_cmd,
    verify_cmd,
    view_cmd,
)
from asz_core.host import PluginHost

__all__ = ["NAME", "asz_add_commands", "register"]

#: the name the built-in commands are registered under, as a plugin of the host
NAME = "asz-pipeline"

_COMMANDS = (run_cmd, parse_cmd, sources_cmd, verify_cmd, view_cmd, conversation_cmd, serve_cmd, usage_cmd,
             export_cmd, conflicts_cmd, plugins_cmd, config_cmd, schedule_cmd, scenario_cmd, completion_cmd,
             glossary_cmd, retain_cmd, repack_cmd)


@hookimpl(tryfirst=True)  # listed before any plugin's
def asz_add_commands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    for module in _COMMANDS:
        module.add(subparsers)


def register(host: PluginHost) -> None:
    """Register the built-in commands with ``host`` (once)."""
    if NAME not in host.plugins:
        import sys

        host.register(NAME, sys.modules[__name__], adapter=False)
