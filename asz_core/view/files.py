"""A session's landed files as the view, the page and ``show`` list them: every landed file of
the session, by seq, with where it lies; where a skeleton (``.sk``) stands beside its landed file
(a removal in progress), the landed file. Reading them is the caller's
(:mod:`asz_core.view.landed` reads each once, for its digest and its records).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from asz_core.root.layout import PLACE_GROUPS, parse_file_name
from asz_core.root.storage import landed_files

__all__ = ["PROVIDER_BODY", "LandedFile", "session_files"]

PROVIDER_BODY = "provider_body"


@dataclass
class LandedFile:
    """One landed file of a session, and where it lies."""

    seq: int
    path: Path
    rel: str                 #: root-relative path, forward slashes
    kind: str
    group: str               #: ``streams``, ``runs`` or ``provider_body``
    owner: str | None        #: the stream or run the file is under (``None`` for provider bodies)
    skeleton: bool


def session_files(session_dir: Path) -> list[LandedFile]:
    """The session's landed files by seq, a landed file preferred to its skeleton."""
    chosen: dict[int, LandedFile] = {}
    session = session_dir.name
    for seq, path in landed_files(session_dir):
        name = parse_file_name(path.name)
        if name is None:
            continue
        rel_parts = path.relative_to(session_dir).parts
        group = rel_parts[0]
        owner = rel_parts[1] if group in PLACE_GROUPS and len(rel_parts) == 3 else None
        entry = LandedFile(seq=seq, path=path, rel="/".join((session, *rel_parts)), kind=name.kind,
                           group=group, owner=owner, skeleton=name.skeleton)
        held = chosen.get(seq)
        if held is None or (held.skeleton and not entry.skeleton):
            chosen[seq] = entry
    return [chosen[seq] for seq in sorted(chosen)]
