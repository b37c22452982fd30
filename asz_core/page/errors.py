"""What a request to the page can be refused for, each with the HTTP status it answers."""

from __future__ import annotations

__all__ = ["BadRequest", "Forbidden", "NotFound", "PageError"]


class PageError(Exception):
    """A request the page does not answer with what was asked; the message says why."""

    status = 500


class BadRequest(PageError):
    """400: the request does not parse, names a flag that cannot be withheld, or asks the files
    endpoint for a file that is not a provider body."""

    status = 400


class Forbidden(PageError):
    """403: a provider body asked for while anything is withheld (a body carries the system
    prompt and the tool schemas whole)."""

    status = 403


class NotFound(PageError):
    """404: no such conversation, sequence, row or path."""

    status = 404
