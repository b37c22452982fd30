"""What every subcommand starts from: the loaded plugins, and the configuration on demand."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TextIO

from asz_core.config import Config, load_config
from asz_core.errors import EXIT_CONFIG, EXIT_FAILED, EXIT_OK, EXIT_REFUSED, ConfigError
from asz_core.host import PluginHost

__all__ = ["EXIT_CONFIG", "EXIT_FAILED", "EXIT_OK", "EXIT_REFUSED", "App"]


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
        """The validated configuration; raises ``ConfigError`` (turned into exit 2 by ``main``).
        Its warnings are printed once, and the plugins it switches off are let go."""
        if self._config is None:
            self._config = load_config(self.host, self.config_path)
            for warning in self._config.warnings:
                print(f"warning: {warning}", file=self.err)
            for name in list(self.host.plugins):
                if not self._config.plugin_enabled(name):
                    self.host.disable_plugin(name)
        return self._config

    def require_plugins(self) -> None:
        """``ConfigError`` naming every plugin that failed to load and is not switched off: a
        pass without an observer the user installed (an export, say) must not look like one
        with it."""
        config = self.config
        failed = [record for name, record in self.host.plugins.items()
                  if not record.loaded and config.plugin_enabled(name)]
        if failed:
            raise ConfigError([
                f"plugin {r.name!r} ({r.entry_point}{', ' + r.distribution if r.distribution else ''}) "
                f"failed to load: {r.error}; fix or uninstall it, or switch it off in asz.yaml "
                f"(plugins: {{{r.name}: {{enabled: false}}}})" for r in failed])
