"""``asz-pipeline``: parse the command line, run the subcommand, turn failures into exit codes."""

from __future__ import annotations

import argparse
import gc
import os
import sys

from asz_core import __version__

TYPE_CHECKING = False  # not ``typing``'s: importing it costs every start-up
if TYPE_CHECKING:
    from collections.abc import Sequence

    from asz_core.cli.app import App

__all__ = ["build_parser", "main"]


def build_parser(app: App) -> argparse.ArgumentParser:
    from asz_core.cli import commands

    parser = argparse.ArgumentParser(
        prog="asz-pipeline",
        description="Collect AI coding agents' sessions into a storage root of Session Data.")
    parser.add_argument("--version", action="version", version=f"asz {__version__}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", metavar="FILE",
                        help="asz.yaml to use (else $ASZ_CONFIG, ./asz.yaml, the user config dir)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    commands.add_all(sub, common)
    app.host.add_commands(sub)
    for action in sub.choices.values():  # plugin commands take --config too
        if not any("--config" in a.option_strings for a in action._actions):
            action.add_argument("--config", metavar="FILE", help="asz.yaml to use")
    return parser


def main(argv: Sequence[str] | None = None, app: App | None = None) -> int:
    from asz_core.cli.app import App

    app = app or App()
    parser = build_parser(app)
    args = parser.parse_args(argv)
    app.config_path = args.config
    code = _run(args, app)
    if argv is None:
        # The process's own command line, so the process ends now: what is alive lives until
        # exit, and the interpreter's finalization would walk all of it again in its last
        # collections (3 % of the instructions of a no-op pass over 2,000 sessions). Frozen, it
        # is simply let go with the process. (A caller passing ``argv``, as the tests do, keeps
        # its objects collectable.)
        gc.freeze()
    return code


def _run(args: argparse.Namespace, app: App) -> int:
    from asz_core.cli.app import EXIT_CONFIG, EXIT_REFUSED
    from asz_core.config import ConfigError
    from asz_core.pipeline import PassRefused

    try:
        return int(args.func(args, app))
    except ConfigError as exc:
        print("asz: the configuration cannot be used:", file=app.err)
        for problem in exc.problems:
            print(f"  {problem}", file=app.err)
        return EXIT_CONFIG
    except PassRefused as exc:
        print(f"asz: {exc}", file=app.err)
        return EXIT_REFUSED
    except KeyboardInterrupt:
        print("asz: interrupted; what landed is complete, the rest lands next pass", file=app.err)
        return 130
    except BrokenPipeError:
        # the reader went away (``asz-pipeline sources | head``): not an error of ours, and
        # Python must not complain again when it flushes stdout on exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
