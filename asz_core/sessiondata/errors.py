"""The one error type a Session Data reader raises, so callers catch exactly it."""

from __future__ import annotations

__all__ = ["NotEncodable", "SessionDataError"]


class SessionDataError(ValueError):
    """A file, line or value that is not valid Session Data, with where and why.

    ``path`` and ``line`` (1-based, the header is line 1) are set when known.
    """

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        self.reason = message
        self.path = path
        self.line = line
        where = ""
        if path is not None:
            where = f"{path}: "
        if line is not None:
            where += f"line {line}: "
        super().__init__(where + message)


class NotEncodable(ValueError):
    """A record no writer can land, however often it is tried (upstream's ``ErrNotEncodable``):
    an integer past 64 bits, data nested too deep to read back inside a record."""
