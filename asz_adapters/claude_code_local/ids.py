"""The identifier shapes Claude Code gives its files, and the only ones this adapter accepts.

An id read from a file name becomes a directory in the storage root (``<session>/``,
``streams/<agent>/``, ``runs/<run>/``), so each is accepted only in the form Claude Code itself
writes, and then passed through the host's :func:`~asz_core.root.layout.check_id` as a last
line. Anything else is refused, never reshaped: a refused id is the caller's to count as
unreadable, with the path named.

* session: a UUID, in either case. Claude Code has written upper-case session ids, so the case is
  kept as found and never folded: two spellings are two sessions.
* agent: ``<7 hex>`` (2.1.3x), ``a<16 hex>`` (later), ``acompact-<hex>`` (a compaction agent).
* workflow run: ``wf_<hex and dashes>`` (``wf_6ce8adcf-32f``).
"""

from __future__ import annotations

import re
from typing import Final

from asz_core.root.layout import RefusedId, check_id

__all__ = ["RefusedId", "agent_id", "is_session_id", "run_id", "script_run_id", "session_id"]

_SESSION: Final = re.compile(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")
_AGENT: Final = re.compile(r"[0-9a-f]{7}|a[0-9a-f]{16}|acompact-[0-9a-f]{1,64}")
_RUN: Final = re.compile(r"wf_[0-9a-f][0-9a-f-]{0,62}")


def is_session_id(name: str) -> bool:
    """Whether ``name`` has a session id's shape (a UUID in either case)."""
    return _SESSION.fullmatch(name) is not None


def session_id(name: str) -> str:
    """``name`` if it is a session id; ``RefusedId`` if not."""
    if not is_session_id(name):
        raise RefusedId(f"session id {name!r} is not a UUID")
    return check_id(name, "session id")


def agent_id(name: str) -> str:
    """``name`` if it is an agent id in one of Claude Code's shapes; ``RefusedId`` if not."""
    if _AGENT.fullmatch(name) is None:
        raise RefusedId(f"agent id {name!r} is not one of Claude Code's shapes "
                        f"(7 hex, 'a' and 16 hex, or 'acompact-' and hex)")
    return check_id(name, "agent id")


def run_id(name: str) -> str:
    """``name`` if it is a workflow run id (``wf_…``); ``RefusedId`` if not."""
    if _RUN.fullmatch(name) is None:
        raise RefusedId(f"workflow run id {name!r} is not of the form wf_<hex>")
    return check_id(name, "workflow run id")


def script_run_id(file_name: str) -> str:
    """The run id of a workflow script ``<name>-wf_<run>.js``, split on the last ``-wf_``.

    A run id holds dashes itself (``wf_afa31e47-f6c``), so only the last ``-wf_`` can start it.
    """
    stem = file_name[:-3] if file_name.endswith(".js") else file_name
    head, sep, tail = stem.rpartition("-wf_")
    if not sep or not head:
        raise RefusedId(f"workflow script {file_name!r} is not named <name>-wf_<run>.js")
    return run_id("wf_" + tail)
