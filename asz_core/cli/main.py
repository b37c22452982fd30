"""``asz-pipeline``: parse the command line, run the subcommand, turn failures into exit codes.

Every command, the built-in ones included, comes from a plugin's ``asz_add_commands``
(:mod:`asz_core.cli.commands` is the built-in one). :func:`main` is the one place a failure
becomes a message and an exit status: an :class:`~asz_core.errors.AszError` carries its own; a
full file system is 3, as a pass that cannot start; another file system error is 3 with the path
and what to check; an interrupt is 130. With ``--json`` the message is one JSON object on stdout.
"""

from __future__ import annotations

import argparse
import errno
import gc
import json
import os
import signal
import sys
from functools import cache

from asz_core import __version__

TYPE_CHECKING = False  # not ``typing``'s: importing it costs every start-up
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, NoReturn, TextIO

    from asz_core.cli.app import App
    from asz_core.cli.commands import Subcommands

__all__ = ["build_parser", "main"]

_CONFIG_HELP = "asz.yaml to use (else $ASZ_CONFIG, ./asz.yaml, the user config dir); before or after COMMAND"


@cache
def _terminal_width() -> int:
    """The width help is wrapped to, found as ``shutil.get_terminal_size`` finds it
    (``$COLUMNS``, else the terminal's, else 80), once."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):  # no stdout, or not a terminal
            columns = 0
    return columns or 80


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter, given the terminal's width: argparse makes one for every argument
    added (to check its metavar), and, asked for none, it imports ``shutil`` (with its archive
    modules) and asks the terminal each time, on every command line, help or not."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position, width or _terminal_width() - 2)


class _Parser(argparse.ArgumentParser):
    """A command line that cannot be used is a ``UsageError`` (exit 2), reported by :func:`main`
    like every other failure, so that ``--json`` gets it as JSON. Its help is wrapped by
    :class:`_Formatter`, unless a command asks for another."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        from asz_core.errors import UsageError

        raise UsageError(f"{self.prog}: {message} (--help says how)")


def build_parser(app: App, named: str | None = None) -> argparse.ArgumentParser:
    """The whole command line, or, given the command it ``named``, one fit to parse it (the
    built-in commands other than that one are left out; all of them, for a plugin's command)."""
    from asz_core.cli.commands import NAMES, NO_COMMAND

    if named is not None and named != NO_COMMAND and named not in NAMES:
        # a plugin's command (``push``) needs none of the built-in ones, which are most of the
        # parser's cost; a name no plugin adds either is a typo, and argparse then names every
        # command
        parser, subcommands = _parser(app, NO_COMMAND)
        if named in subcommands.choices:
            return parser
        named = None
    return _parser(app, named)[0]


def _parser(app: App, named: str | None) -> tuple[argparse.ArgumentParser, Subcommands]:
    """The parser with the built-in commands :class:`~asz_core.cli.commands.Subcommands` builds
    for ``named``, and every plugin's; and its commands."""
    from asz_core import userdirs
    from asz_core.cli.commands import Subcommands

    parser = _Parser(
        prog="asz-pipeline",
        description="Collect AI coding agents' sessions into a storage root of Session Data.",
        epilog=f"The storage root is storage.root in asz.yaml, else $ASZ_ROOT, else {userdirs.data_dir()} "
               f"(`asz-pipeline config` prints the one in effect).")
    parser.add_argument("--version", action="version", version=f"asz {__version__}")
    parser.add_argument("--config", metavar="FILE", help=_CONFIG_HELP)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=_Parser,
                                action=Subcommands)
    assert isinstance(sub, Subcommands)
    sub.wanted = named
    app.host.add_commands(sub)
    for command in sub.choices.values():
        # --config after the command too; its default must not undo one given before it
        given = [a for a in command._actions if "--config" in a.option_strings]
        for action in given:
            action.default = argparse.SUPPRESS
        if not given:
            command.add_argument("--config", metavar="FILE", default=argparse.SUPPRESS, help=_CONFIG_HELP)
    return parser, sub


def main(argv: Sequence[str] | None = None, app: App | None = None) -> int:
    args_in = list(sys.argv[1:] if argv is None else argv)
    out, err = (app.out, app.err) if app is not None else (sys.stdout, sys.stderr)
    try:
        code = _main(args_in, app, owns_process=argv is None)
    except BaseException as exc:  # noqa: BLE001 - the one place a failure becomes an exit status
        code = _failure(exc, json_wanted="--json" in args_in, out=out, err=err)
    if argv is None:
        # The process's own command line, so the process ends now: what is alive lives until
        # exit, and the interpreter's finalization would walk all of it again in its last
        # collections, a share a no-op pass notices (benchmarks/README.md). Frozen, it
        # is simply let go with the process. (A caller passing ``argv``, as the tests do, keeps
        # its objects collectable.)
        gc.freeze()
        # The exit status is decided: an interrupt now changes nothing. Answered, it would print
        # a traceback from an exit handler, or, once finalization has put the default handler
        # back, kill the process, which then reports no status at all.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    return code


def _main(argv: list[str], app: App | None, *, owns_process: bool = False) -> int:
    """Load the host and its plugins, read the command line, run the command.

    Until the command runs, an interrupt in the process's own command line still ends it
    quietly (the console script's handler, :mod:`asz_core.cli`): loading plugins imports extension modules,
    and an exception raised inside one's initialization can crash the interpreter instead of
    unwinding. From the command on, an interrupt is a ``KeyboardInterrupt`` that :func:`main`
    answers, whatever it stops.
    """
    from asz_core.cli import commands
    from asz_core.cli.app import App

    app = app or App()
    commands.register(app.host)
    args = build_parser(app, _command_named(argv)).parse_args(argv)
    app.config_path = args.config
    if owns_process:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        # the collector, off while the process started (asz_core.cli.__init__.main), back on for the
        # command; what start-up built stays out of its walks (benchmarks/README.md)
        gc.freeze()
        gc.enable()
    return int(args.func(args, app))


def _command_named(argv: list[str]) -> str | None:
    """The command ``argv`` names: its first word that is neither an option nor ``--config``'s
    value. :data:`~asz_core.cli.commands.NO_COMMAND` when that option is ``--version``, which
    argparse answers before reading a command. ``None`` when another option other than
    ``--config`` comes first (``--help``, or one argparse will refuse): the whole command line
    is built then."""
    from asz_core.cli.commands import NO_COMMAND

    words = iter(argv)
    for word in words:
        if word == "--config":
            next(words, None)
        elif word == "--version":
            return NO_COMMAND
        elif not word.startswith("--config="):
            return None if word.startswith("-") else word
    return None


def _failure(exc: BaseException, *, json_wanted: bool, out: TextIO, err: TextIO) -> int:
    """The message and exit status of a command that ended with ``exc``."""
    from asz_core.errors import EXIT_REFUSED, AszError

    if isinstance(exc, SystemExit):  # --help, --version
        return exc.code if isinstance(exc.code, int) else 0
    if isinstance(exc, BrokenPipeError):
        # the reader went away (``asz-pipeline sources | head``): not an error of ours, and
        # Python must not complain again when it flushes stdout on exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    if isinstance(exc, KeyboardInterrupt):
        kind, code, problems = "interrupted", 130, []
        message = "interrupted; what landed is complete, the rest lands next pass"
    elif isinstance(exc, AszError):
        kind, code, message, problems = exc.kind, exc.exit_code, exc.message, exc.problems
    elif isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        kind, code, problems = "full", EXIT_REFUSED, []
        message = (f"no space left on the device ({exc.filename or 'the storage root'}): nothing landed "
                   f"was changed; free some space and run again")
    elif isinstance(exc, OSError):
        kind, code, problems = "unreadable", EXIT_REFUSED, []
        where = f" {exc.filename}" if exc.filename else ""
        message = (f"cannot use{where}: {exc.strerror or exc}; check that it exists and that its owner "
                   f"and mode let you read it")
    else:
        raise exc
    if json_wanted:
        print(json.dumps({"error": {"kind": kind, "exit": code, "message": message, "problems": problems}}),
              file=out)
    else:
        print(f"asz: {message}", file=err)
        for problem in problems:
            print(f"  {problem}", file=err)
    return code


if __name__ == "__main__":
    sys.exit(main())
