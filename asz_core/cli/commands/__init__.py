"""The built-in subcommands, one module each (``<name>_cmd``, each exposing
``add(subparsers)``), added to ``asz-pipeline`` through ``asz_add_commands`` as any plugin's
commands are.

A command line that names a built-in command needs only that command's parser, so only its
module is imported and only its parser built: a ``run`` does not load what ``conflicts``,
``serve`` or ``schedule`` need, which a pass that finds nothing new would pay for. A plugin's
command (``push``) gets none of them, and ``--version`` none; help, completion and a name no
plugin adds either (a typo, which argparse then reports with every choice) get every command, as
:func:`asz_core.cli.main.build_parser` asks when it cannot tell which one is wanted.
"""

from __future__ import annotations

import argparse
from importlib import import_module

from asz_core import hookimpl
from asz_core.host import PluginHost

__all__ = ["NAME", "NAMES", "NO_COMMAND", "Subcommands", "asz_add_commands", "register"]

#: the name the built-in commands are registered under, as a plugin of the host
NAME = "asz-pipeline"

#: the built-in commands, in the order help lists them; ``<name>_cmd`` is each one's module
NAMES = ("run", "parse", "sources", "verify", "view", "conversation", "show", "serve", "usage", "export", "conflicts",
         "plugins", "config", "schedule", "scenario", "completion", "glossary", "retain", "repack")

#: ``wanted`` for a command line answered before any command is read (``--version``): no
#: built-in command is built
NO_COMMAND = ""


TYPE_CHECKING = False
if TYPE_CHECKING:
    _Action = argparse._SubParsersAction[argparse.ArgumentParser]
else:  # not subscriptable at run time
    _Action = argparse._SubParsersAction


class Subcommands(_Action):
    """``asz-pipeline``'s commands: the one the command line names (``wanted``), when it can be
    told before parsing, so that built-in commands other than it need not be loaded."""

    wanted: str | None = None


@hookimpl(tryfirst=True)  # listed before any plugin's
def asz_add_commands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    wanted = subparsers.wanted if isinstance(subparsers, Subcommands) else None
    if wanted == NO_COMMAND:
        return
    for name in (wanted,) if wanted in NAMES else NAMES:
        import_module(f"{__name__}.{name}_cmd").add(subparsers)


def register(host: PluginHost) -> None:
    """Register the built-in commands with ``host`` (once)."""
    if NAME not in host.plugins:
        import sys

        host.register(NAME, sys.modules[__name__], adapter=False)
