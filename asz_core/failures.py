"""The message a person reads for an exception a pass met: what went wrong and what to do."""

from __future__ import annotations

import errno

from asz_core.root.layout import RefusedId

__all__ = ["describe_failure"]


def describe_failure(exc: BaseException) -> str:
    """A message that says what went wrong and what to do about it."""
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return (f"no space left on the device ({exc.filename or 'while landing'}): nothing landed "
                f"before was changed; free some space and run the pass again")
    if isinstance(exc, PermissionError):
        return f"permission denied: {exc.filename or exc}; check the owner and mode of that path"
    if isinstance(exc, RefusedId):
        return f"refused: {exc}"
    return f"{type(exc).__name__}: {exc}"
