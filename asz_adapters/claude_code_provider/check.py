"""What ``verify`` checks of this adapter's own table (``asz_verify``): every body
``_provider/seen.state`` says landed is held by a ``provider_body`` file of its session.

The core reads every landed file, but a session's provider-body files deleted together with its
``index/`` (where the core's summary names them) leave nothing it can miss them by, while the
table goes on saying they landed, so no pass lands them again. The rules:

1. The table is read first, then each session's files: an entry says ``landed`` only once its
   file is durable under its name, so a pass landing meanwhile never makes a body look gone.
2. A body is held when a record of its session's ``provider_body`` files (or of a skeleton that
   stands for one) names it as its manifest's ``src``. A session with a file that does not read
   is not searched further: verify names that file, and its bodies may be in it.
3. Nothing is locked, written or rebuilt, and no link is followed: a link at ``_provider/``,
   ``seen.state`` or ``seen.log`` is a ``link`` problem and the table is not read through it; a
   linked ``provider_body/`` is left to the core's checks of the session.
4. A table that does not read says nothing (the next pass rebuilds it, with a warning).
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from asz_adapters.claude_code_provider.seen import CONFLICT, DIRECTORY, LANDED, SeenTable, landed_bodies
from asz_core.providerbody.landing import SUBDIR
from asz_core.root import confined
from asz_core.session_report import Problem

__all__ = ["check_root"]


def check_root(root: Path, sessions: Collection[str] | None) -> list[Problem]:
    """Each body the table says landed that no landed file of its session holds (``gone``),
    and a link where the table is (``link``)."""
    confined.enter(root)
    try:
        table = SeenTable.read_only(root)
    except confined.LinkRefused as exc:
        return [Problem(DIRECTORY, "link", str(exc.filename or root / DIRECTORY), str(exc))]
    except (OSError, UnicodeDecodeError):
        return []
    landed: dict[str, list[str]] = {}
    for entry in table.entries.values():
        if entry.state in (LANDED, CONFLICT) and entry.session and (sessions is None or entry.session in sessions):
            landed.setdefault(entry.session, []).append(entry.name)
    problems = []
    for session, names in sorted(landed.items()):
        held = _held(root / session)
        if held is None:
            continue
        for name in sorted(set(names) - held):
            problems.append(Problem(
                session, "gone", str(root / session / SUBDIR),
                f"{DIRECTORY}/seen.state says the provider body {name} landed in this session; no "
                f"provider_body file of it holds it. Restore the session's files from a copy, or remove "
                f"{DIRECTORY}/seen.state (it is rebuilt from the landed files) and run a pass: the body "
                f"lands again while its source file is there"))
    return problems


def _held(session_dir: Path) -> set[str] | None:
    """The bodies the session's landed files hold, by source name; ``None`` when one of its
    files does not read or its ``provider_body/`` is a link (the core reports either)."""
    held: set[str] = set()
    try:
        for _, bodies in landed_bodies(session_dir):
            if bodies is None:
                return None
            held.update(manifest.src for _, manifest in bodies if manifest is not None)
    except confined.LinkRefused:
        return None
    except (NotADirectoryError, FileNotFoundError):
        return held
    return held
