"""The session filter: ``include``/``exclude`` judged by a session's working directory.

An entry starting with ``/`` names a working directory (``/**`` adds everything beneath it);
anything else is a glob on the directory's slug, the name Claude Code gives a project directory
(every character that is not a letter or a digit becomes ``-``). Entries are compared as slugs,
so ``/private/tmp/**`` matches the slug ``-private-tmp`` and every slug starting
``-private-tmp-``. The slug is lossy (``/a-b`` and ``/a/b`` share one), so a directory filter can
match a sibling whose name differs only in punctuation; a glob on the slug says exactly what it
matches.
"""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase
from typing import NamedTuple

__all__ = ["SessionFilter", "slug_of"]

_GLOB_CHARS = frozenset("*?[]")


def slug_of(directory: str) -> str:
    """Claude Code's project-directory name for a working directory."""
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in directory)


def _pattern(entry: str) -> tuple[str, ...]:
    if not entry.startswith("/"):
        return (entry,)
    beneath = entry.endswith("/**")
    base = entry[:-3] if beneath else entry.rstrip("/") or "/"
    slug = "".join(c if (c.isascii() and c.isalnum()) or c in _GLOB_CHARS else "-" for c in base)
    return (slug, slug + "-*") if beneath else (slug,)


class SessionFilter(NamedTuple):
    """Admits a session unless ``exclude`` matches it or a non-empty ``include`` does not.

    A named tuple, not a frozen dataclass: every pass imports it, and a dataclass compiles its
    generated methods at each import.
    """

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    @classmethod
    def of(cls, include: Sequence[str] = (), exclude: Sequence[str] = ()) -> SessionFilter:
        return cls(tuple(p for e in include for p in _pattern(e)),
                   tuple(p for e in exclude for p in _pattern(e)))

    @property
    def admits_every_slug(self) -> bool:
        """Whether no entry is set, so every session is admitted: a caller asking about many
        sessions asks this once, and :meth:`admits_slug` only when it is false."""
        return not (self.include or self.exclude)

    def admits_slug(self, slug: str) -> bool:
        if self.include and not any(fnmatchcase(slug, p) for p in self.include):
            return False
        return not self.exclude or not any(fnmatchcase(slug, p) for p in self.exclude)

    def admits_directory(self, directory: str) -> bool:
        return self.admits_slug(slug_of(directory))
