"""The generated part of the README's "Performance" section, rewritten in place by ``pass.py --table --readme``.

The README's figures are the benchmark's, so the benchmark writes them; the explanation around
them is a person's, so it never does:

1. the generated part lies between two HTML comment lines, :data:`BEGIN` and :data:`END`, each
   exactly once and in that order, or nothing is written (a README without them is refused
   before anything is measured, so no run is wasted);
2. everything outside them, the markers included, stays byte for byte; between them goes the
   new block, which ends with a newline, so rewriting with the same block changes nothing;
3. the file is replaced whole (a temporary file beside it, renamed over it, its mode kept), so a
   crash leaves the old README or the new one, never half of each.
"""

from __future__ import annotations

import os
import platform
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

BEGIN = "<!-- pass.py --table: begin -->"
END = "<!-- pass.py --table: end -->"


class MarkersMissing(ValueError):
    """The README has no single pair of markers, in order, to rewrite between."""


def _span(text: str, where: str) -> tuple[int, int]:
    """Where the generated part starts (after BEGIN's line) and ends (at END's line)."""
    counts = {marker: text.count(marker) for marker in (BEGIN, END)}
    if counts[BEGIN] != 1 or counts[END] != 1:
        raise MarkersMissing(f"{where} needs the lines {BEGIN} and {END} exactly once each around the "
                             f"generated table (found {counts[BEGIN]} and {counts[END]}); add them to its "
                             f"Performance section, then run again")
    begin, end = text.index(BEGIN), text.index(END)
    if end < begin:
        raise MarkersMissing(f"{where} has {END} before {BEGIN}; put the begin marker first, then run again")
    start = text.find("\n", begin) + 1
    if start == 0 or start > end:
        raise MarkersMissing(f"{where}: {BEGIN} and {END} must each be on a line of its own; put them so, "
                             f"then run again")
    return start, text.rindex("\n", 0, end) + 1


def check(path: Path) -> None:
    """Raise :class:`MarkersMissing` unless ``path`` can be rewritten (it is read, not changed)."""
    _span(path.read_bytes().decode("utf-8"), str(path))


def replace(text: str, block: str, where: str = "the README") -> str:
    """``text`` with the lines between the markers replaced by ``block``; the rest as it was."""
    start, end = _span(text, where)
    return text[:start] + block.rstrip("\n") + "\n" + text[end:]


def rewrite(path: Path, block: str) -> bool:
    """Put ``block`` between the markers of ``path``, atomically; whether anything changed."""
    old = path.read_bytes().decode("utf-8")
    new = replace(old, block, str(path))
    if new == old:
        return False
    temporary = path.with_name(f".{path.name}.pass-table")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, path.stat().st_mode & 0o777)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(new.encode("utf-8"))
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return True


def markdown_table(heads: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table, a line a row (``|`` in a cell escaped, an empty cell as ``| |``)."""
    def line(cells: Sequence[str]) -> str:
        escaped = (cell.replace("|", r"\|") for cell in cells)
        return " ".join(["|", *(f"{cell} |" if cell else "|" for cell in escaped)])

    return "\n".join([line(heads), line(["---"] * len(heads)), *(line(row) for row in rows)])


def machine(where: Path) -> str:
    """What the figures were taken on: CPUs, kernel, the filesystem under ``where`` and its
    options that change a landing's cost, Python."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    found = ""
    try:
        best = ""
        for line in Path("/proc/self/mountinfo").read_text("utf-8").splitlines():
            fields = line.split()
            mount, tail = fields[4], fields[fields.index("-") + 1:]
            inside = str(where.resolve()).startswith(mount.rstrip("/") + "/") or mount == "/"
            if inside and len(mount) >= len(best):
                best = mount
                fs, options = tail[0], tail[2].split(",")
                found = fs + (", mounted discard" if "discard" in options else "")
    except (OSError, ValueError, IndexError):
        found = ""
    system = f"{platform.system()} {'.'.join(platform.release().split('.')[:2])}"
    return f"a {cpus}-CPU machine ({system}, {found or 'filesystem unknown'}, Python {platform.python_version()})"


def command(argv: Sequence[str], repo: Path, shared: str | None) -> str:
    """The command that made the figures, as a reader would type it from the repository:
    paths inside it relative, the interpreter ``python`` unless it is the repository's own
    ``.venv``, ``--work`` (where the corpora are kept, which changes no figure) left out;
    ``shared`` is ``$ASZ_SHARED``."""
    def shown(arg: str) -> str:
        path = Path(arg)
        if path.is_absolute():
            try:
                return str(path.relative_to(repo))
            except ValueError:
                return arg
        return arg

    exe = Path(sys.executable)
    words = [".venv/bin/python" if exe.parent.parent == repo / ".venv" else "python"]
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--work":
            skip = True
        elif not arg.startswith("--work="):
            words.append(shown(arg))
    if shared and Path(shared).resolve() == (repo.parent / "shared").resolve():
        shared = "../shared"  # the default place, as the README's commands spell it
    elif shared and Path(shared).is_absolute():
        shared = os.path.relpath(shared, repo)
    env = f"ASZ_SHARED={shlex.quote(shared)} " if shared else ""
    return env + " ".join(shlex.quote(word) for word in words)
