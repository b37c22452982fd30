"""The ``asz-pipeline`` command line.

:func:`main` is the console script. Ctrl-C before the command has started anything (while
Python imports it) ends it quietly with status 130; from then on
:func:`asz_core.cli.main.main` answers an interrupt itself. So this module imports nothing
until it is called; called so, it first makes the methods ``dataclasses`` writes come compiled
from a cache (:mod:`asz_core.cli.generated_code`), which a process embedding asz does not get.
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
    own = argv is None  # the process's own command line: nothing has started yet
    if own:
        import signal

        from asz_core.cli import generated_code

        signal.signal(signal.SIGINT, _interrupted_before_start)
        generated_code.install()  # before any module defines a dataclass
    from asz_core.cli.main import main as run_command

    code = run_command(argv, app)
    if own:
        generated_code.save()
    return code
