"""asz: keep what AI coding agents actually did, as verifiable Session Data.

``asz_core`` is the host: the hook specifications, the plugin manager, configuration, the pass
context, the Session Data library, the storage root and cursors, verify, view and the CLI.
Adapters reach it only through entry points (``asz.adapters``), exactly as third-party ones do.
"""

from __future__ import annotations

# not ``typing.TYPE_CHECKING``: importing ``typing`` is most of what this package would cost
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from asz_core.plugin import hookimpl

__all__ = ["__version__", "hookimpl"]

#: The one place the version is written: the package's metadata takes it from here
#: (``[tool.hatch.version]``), so reading it costs no ``importlib.metadata`` at start-up.
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # ``hookimpl`` (and with it pluggy) is imported when a plugin first asks for it, not with the
    # package: a command that loads no plugin (``--version``) does not pay for it.
    if name == "hookimpl":
        from asz_core.plugin import hookimpl

        return hookimpl
    raise AttributeError(f"module 'asz_core' has no attribute {name!r}")
