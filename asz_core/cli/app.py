"""What every subcommand starts from: the loaded plugins, and the configuration on demand."""

from __future__ import annotations

import contextlib
import sys
from typing import TextIO

from asz_core.config import Config, load_config
from asz_core.errors import EXIT_CONFIG, EXIT_FAILED, EXIT_OK, EXIT_REFUSED, ConfigError
from asz_core.host import PluginHost

__all__ = ["EXIT_CONFIG", "EXIT_FAILED", "EXIT_OK", "EXIT_REFUSED", "App"]


class App:
    """The host with its entry points loaded, and the configuration the user pointed at.

    A plain class, not a dataclass: every command builds one, and a dataclass is built at import
    by compiling the methods it writes, which a command that does little notices."""

    __slots__ = ("_config", "config_path", "err", "host", "out")

    def __init__(self, config_path: str | None = None, host: PluginHost | None = None,
                 out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.config_path = config_path
        #: every installed plugin loaded, and every adapter noted (imported when first asked for)
        self.host = host if host is not None else PluginHost().load_entry_points()
        self.out = out if out is not None else sys.stdout
        self.err = err if err is not None else sys.stderr
        self._config: Config | None = None

    def printing_to(self, out: TextIO, err: TextIO) -> App:
        """This app (its host, its configuration once loaded) printing to ``out`` and ``err``."""
        other = App(self.config_path, self.host, out, err)
        other._config = self._config
        return other

    @property
    def config(self) -> Config:
        """The validated configuration; raises ``ConfigError`` (turned into exit 2 by ``main``).
        Its warnings are printed once, and the plugins it switches off are let go. Its storage
        root is entered as soon as it is resolved, where it exists (a pass makes a new one, and
        enters it then): every command reads the root through here, so nothing it opens below
        the root follows a link, whichever reader opens it first
        (:func:`~asz_core.root.confined.enter`)."""
        if self._config is None:
            self._config = load_config(self.host, self.config_path)
            from asz_core.root import confined  # here: a command that reads no configuration never needs it

            with contextlib.suppress(OSError):  # a root that cannot be opened: the command says so
                confined.enter(self._config.root)
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
