"""Where Kiro keeps what this adapter reads, per OS, and how ``source_root`` and options move it.

* Kiro's home (``~/.kiro`` on every OS, moved by ``$KIRO_HOME``) holds the CLI sessions
  (``sessions/cli/``) and the IDE ≥ 1.0 sessions (every other child of ``sessions/``).
  ``source_root`` replaces the home.
* kiro-cli's database lives outside the home, in a per-OS data directory (research notes §1):
  Linux ``$XDG_DATA_HOME/kiro-cli`` (``~/.local/share/kiro-cli``), macOS
  ``~/Library/Application Support/kiro-cli`` and ``~/.local/share/kiro-cli`` (readers disagree,
  so both are tried), Windows ``%LOCALAPPDATA%\\Kiro-Cli``. ``$KIRO_CLI_DB_PATH`` replaces them.
* The IDE's older stores live in its ``User/globalStorage/kiro.kiroagent`` folder (per OS).

How ``source_root`` relates to the two stores outside the home: when ``source_root`` is set the
adapter reads only beneath it, so a test or a copied tree never reaches the machine's own files.
The database is then read only where the option ``cli_database`` says, and the older IDE stores
only where ``ide_global_storage`` says (a relative option is relative to ``source_root``). When
``source_root`` is empty, an option that is set still wins; otherwise ``$KIRO_CLI_DB_PATH`` or
the per-OS defaults are used.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["KiroPaths", "resolve_paths"]

_DB_NAME = "data.sqlite3"
_AGENT_DIR = ("User", "globalStorage", "kiro.kiroagent")


class KiroPaths:
    """The resolved places, and where each came from (``asz-pipeline sources`` shows it).

    A plain class (docs/architecture.md, "Classes a pass imports")."""

    __slots__ = ("databases", "databases_from", "global_storage", "home", "home_from")

    def __init__(self, home: Path, databases: tuple[Path, ...], global_storage: tuple[Path, ...],
                 home_from: str = "", databases_from: str = "") -> None:
        self.home = home                      #: Kiro's home (``~/.kiro``, ``$KIRO_HOME`` or ``source_root``)
        self.databases = databases            #: kiro-cli databases to try, in order
        self.global_storage = global_storage  #: the IDE's ``kiro.kiroagent`` folders to look in
        self.home_from = home_from
        self.databases_from = databases_from

    @property
    def cli_sessions(self) -> Path:
        return self.home / "sessions" / "cli"

    @property
    def ide_sessions(self) -> Path:
        return self.home / "sessions"


def resolve_paths(source_root: str, options: Mapping[str, Any], *,
                  env: Mapping[str, str] | None = None, platform: str | None = None,
                  user_home: Path | None = None) -> KiroPaths:
    """Resolve every place for this pass. ``env``, ``platform`` and ``user_home`` are the
    process's own unless a test passes others."""
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    user = user_home if user_home is not None else Path(os.path.expanduser("~"))
    base = Path(source_root) if source_root else None

    if base is not None:
        home, home_from = base, "source_root"
    elif env.get("KIRO_HOME"):
        home, home_from = Path(os.path.expanduser(env["KIRO_HOME"])), "$KIRO_HOME"
    else:
        home, home_from = user / ".kiro", "default"

    databases: tuple[Path, ...]
    db_option = str(options.get("cli_database") or "")
    if db_option:
        databases, databases_from = (_option_path(db_option, base),), "option cli_database"
    elif base is not None:
        databases, databases_from = (), "source_root is set and cli_database is not"
    elif env.get("KIRO_CLI_DB_PATH"):
        databases = (Path(os.path.expanduser(env["KIRO_CLI_DB_PATH"])),)
        databases_from = "$KIRO_CLI_DB_PATH"
    else:
        databases, databases_from = _default_databases(env, platform, user), "default"

    storage_option = str(options.get("ide_global_storage") or "")
    if storage_option:
        storage: tuple[Path, ...] = (_option_path(storage_option, base),)
    elif base is not None:
        storage = ()
    else:
        storage = _default_global_storage(env, platform, user)
    return KiroPaths(home, _unique(databases), _unique(storage), home_from, databases_from)


def _option_path(value: str, base: Path | None) -> Path:
    path = Path(os.path.expanduser(value))
    if not path.is_absolute() and base is not None:
        path = base / path
    return Path(os.path.normpath(path.absolute()))


def _default_databases(env: Mapping[str, str], platform: str, user: Path) -> tuple[Path, ...]:
    if platform.startswith("win"):
        local = Path(env["LOCALAPPDATA"]) if env.get("LOCALAPPDATA") else user / "AppData" / "Local"
        return (local / "Kiro-Cli" / _DB_NAME,)
    xdg_data = Path(env["XDG_DATA_HOME"]) if env.get("XDG_DATA_HOME") else user / ".local" / "share"
    linux_style = xdg_data / "kiro-cli" / _DB_NAME
    if platform == "darwin":
        return (user / "Library" / "Application Support" / "kiro-cli" / _DB_NAME, linux_style)
    return (linux_style,)


def _default_global_storage(env: Mapping[str, str], platform: str, user: Path) -> tuple[Path, ...]:
    if platform.startswith("win"):
        roaming = Path(env["APPDATA"]) if env.get("APPDATA") else user / "AppData" / "Roaming"
        return (roaming.joinpath("Kiro", *_AGENT_DIR),)
    if platform == "darwin":
        return (user.joinpath("Library", "Application Support", "Kiro", *_AGENT_DIR),)
    config = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else user / ".config"
    return (config.joinpath("Kiro", *_AGENT_DIR),
            user.joinpath(".kiro-server", "data", *_AGENT_DIR))


def _unique(paths: tuple[Path, ...]) -> tuple[Path, ...]:
    seen: list[Path] = []
    for path in paths:
        if path not in seen:
            seen.append(path)
    return tuple(seen)
