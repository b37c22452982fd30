"""The page's packaged files (``static/``): the one HTML shell, its script and its style."""

from __future__ import annotations

from importlib import resources
from typing import Final

__all__ = ["ASSETS", "static_file"]

#: Every file the page serves, with its media type; nothing else under ``/static/`` exists.
ASSETS: Final = {"page.html": "text/html; charset=utf-8", "page.js": "text/javascript; charset=utf-8",
                 "page.css": "text/css; charset=utf-8"}


def static_file(name: str) -> bytes:
    """The bytes of the packaged file ``name`` (one of :data:`ASSETS`)."""
    if name not in ASSETS:
        raise KeyError(name)
    return resources.files("asz_core.page").joinpath("static", name).read_bytes()
