"""What every subcommand starts from: the loaded plugins, and the configuration on demand."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TextIO

from asz_core.config import Config, load_config
from asz_core.host import PluginHost

__all__ = ["EXIT_CONFIG", "EXIT_FAILED", "EXIT_OK", "EXIT_REFUSED", "App"]

EXIT_OK = 0        #: done, nothing wrong
EXIT_FAILED = 1    #: ran, and found something wrong (conflicts, pending, errors, damage)
EXIT_CONFIG = 2    #: the configuration or the command line cannot be used
EXIT_REFUSED = 3   #: could not start: the root is locked by another pass or cannot be written


@dataclass
class App:
    """The host with its entry points loaded, and the configuration the user pointed at."""

    config_path: str | None = None
    host: PluginHost = field(default_factory=lambda: PluginHost().load_entry_points())
    out: TextIO = field(default_factory=lambda: sys.stdout)
    err: TextIO = field(default_factory=lambda: sys.stderr)
    _config: Config | None = None

    @property
    def config(self) -> Config:
        """The validated configuration; raises ``ConfigError`` (caught by ``main``)."""
        if self._config is None:
            self._config = load_config(self.host, self.config_path)
        return self._config
