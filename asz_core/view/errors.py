"""What can go wrong reading a session for the view, by name, so the CLI can say what to do."""

from __future__ import annotations

__all__ = ["BodyWithheld", "NoRounds", "NotABody", "UnknownSession", "ViewError"]


class ViewError(Exception):
    """Something the view cannot hand out; the message says what and what to do."""


class UnknownSession(ViewError, LookupError):
    """No session of that id in the root (or an id that cannot name one)."""


class NotABody(ViewError, LookupError):
    """The ``{seq, row}`` asked for is not a provider body record of the session."""


class BodyWithheld(ViewError):
    """``view.hide`` is set, and a provider body carries what it withholds (the system prompt and
    the tool schemas are in every request), so no body is handed out."""


class NoRounds(ViewError, LookupError):
    """The conversation has no round that folds: there is nothing to show until a parse writes one."""
