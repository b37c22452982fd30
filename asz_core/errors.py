"""The one family of errors a command ends with, each carrying the exit status it means.

Every failure a person must act on is an :class:`AszError`; :func:`asz_core.cli.main.main` is
the one place that turns one into its message and exit status (and into JSON under ``--json``).
The statuses are the README's table:

- 0 done, nothing wrong;
- 1 ran, and found something that needs you (conflicts, pending, errors, damage);
- 2 the configuration or the command line cannot be used;
- 3 could not start: the root is held by another pass, cannot be written, or its file system is full.
"""

from __future__ import annotations

__all__ = ["EXIT_CONFIG", "EXIT_FAILED", "EXIT_OK", "EXIT_REFUSED", "AszError", "ConfigError",
           "NotStarted", "Failed", "UsageError"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_CONFIG = 2
EXIT_REFUSED = 3


class AszError(Exception):
    """A failure with a message that says what to do; ``exit_code`` is what it ends a command with."""

    exit_code = EXIT_FAILED
    kind = "failed"

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        self.message = message
        self.problems = problems or []
        super().__init__("\n".join([message, *self.problems]))


class Failed(AszError):
    """The command ran and found something wrong (exit 1)."""


class UsageError(AszError):
    """The command line cannot be used (exit 2)."""

    exit_code = EXIT_CONFIG
    kind = "usage"


class ConfigError(AszError):
    """The configuration cannot be used; ``problems`` lists each problem (exit 2)."""

    exit_code = EXIT_CONFIG
    kind = "config"

    def __init__(self, problems: list[str]) -> None:
        super().__init__("the configuration cannot be used:", problems)


class NotStarted(AszError):
    """The command could not start: the root is held, cannot be written, or is full (exit 3)."""

    exit_code = EXIT_REFUSED
    kind = "refused"
