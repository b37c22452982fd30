"""Kiro's own id forms. Anything else is refused before it can name a directory in the root.

A CLI session and a database conversation are named by a UUID; an IDE session by ``sess_``
and a UUID (its directory name, equal to ``session.json``'s ``id``). Each accepted id is also
put through the host's :func:`~asz_core.root.layout.check_id`, the last line for every adapter.
"""

from __future__ import annotations

import re

from asz_core.root.layout import RefusedId, check_id

__all__ = ["RefusedId", "cli_session_id", "ide_session_id", "is_cli_session_id", "is_ide_session_id"]

_UUID = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_CLI_ID = re.compile(_UUID)  # matched whole: ``$`` would take a trailing newline
_IDE_ID = re.compile(f"sess_{_UUID}")


def is_cli_session_id(value: object) -> bool:
    return isinstance(value, str) and _CLI_ID.fullmatch(value) is not None


def is_ide_session_id(value: object) -> bool:
    return isinstance(value, str) and _IDE_ID.fullmatch(value) is not None


def cli_session_id(value: object, what: str = "Kiro CLI session id") -> str:
    """``value`` if it is a UUID (a CLI session or a database conversation); else ``RefusedId``."""
    if not is_cli_session_id(value):
        raise RefusedId(f"{what} {value!r} is not a UUID")
    return check_id(str(value), what)


def ide_session_id(value: object, what: str = "Kiro IDE session id") -> str:
    """``value`` if it is ``sess_<uuid>``; else ``RefusedId``."""
    if not is_ide_session_id(value):
        raise RefusedId(f"{what} {value!r} is not sess_ followed by a UUID")
    return check_id(str(value), what)
