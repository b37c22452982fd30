"""Where asz keeps things of the user's by default: the platform's directories for an application.

- data (the default storage root): ``~/Library/Application Support/asz`` on macOS, else
  ``$XDG_DATA_HOME/asz``, else ``~/.local/share/asz`` — never the working directory, so private
  sessions do not land inside whatever project a command happens to run from;
- configuration: ``$XDG_CONFIG_HOME/asz``, else ``~/.config/asz``;
- cache: :func:`asz_core.configcache.cache_base`.

An XDG variable that is not an absolute path is ignored, as the XDG specification says.
"""

from __future__ import annotations

import os
import sys

__all__ = ["config_dir", "data_dir"]

APP = "asz"


def _xdg(variable: str, fallback: str) -> str:
    value = os.environ.get(variable, "")
    return value if os.path.isabs(value) else os.path.join(os.path.expanduser("~"), fallback)


def data_dir() -> str:
    """The default storage root."""
    if sys.platform == "darwin":
        return os.path.join(os.path.expanduser("~"), "Library", "Application Support", APP)
    return os.path.join(_xdg("XDG_DATA_HOME", os.path.join(".local", "share")), APP)


def config_dir() -> str:
    """The directory of the user's ``asz.yaml``."""
    return os.path.join(_xdg("XDG_CONFIG_HOME", ".config"), APP)
