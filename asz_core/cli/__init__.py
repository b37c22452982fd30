"""The ``asz-pipeline`` command line.

:func:`main` is the console script. Ctrl-C before the command has started anything (while
Python imports it and its plugins, and reads the command line) ends it quietly with status 130;
from the command on, :func:`asz_core.cli.main.main` answers an interrupt itself, and once the command has
ended it ignores one, so the exit status stands. So this module imports nothing until it is called.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from asz_core.cli.app import App

__all__ = ["main"]


def _interrupted_before_start(signum: int, frame: object) -> None:
    import os

    os.write(2, b"asz: interrupted before anything started\n")
    os._exit(130)


def main(argv: Sequence[str] | None = None, app: App | None = None) -> int:
    if argv is None:  # the process's own command line: nothing has started yet
        import gc
        import signal

        signal.signal(signal.SIGINT, _interrupted_before_start)
        # Start-up (Python's imports, the plugins', the command line) builds objects that live
        # as long as the process and makes next to no garbage, so the collections it would set
        # off only walk them again and again. The collector is back on, with what start-up
        # built frozen out of its walks, as the command starts (asz_core.cli.main._main).
        gc.disable()
    from asz_core.cli.main import main as run_command

    return run_command(argv, app)
