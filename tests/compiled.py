"""Which of the modules a wheel build compiles (``pyproject.toml``, hatch_build.py) the tests
import compiled, and which are stale.

The tests import asz from this tree. A wheel build (the README's test command) compiles the
per-record path in place, so those tests run the compiled modules, as a user's install does; an
editable install removes them and the tests run the sources. A module edited after it was
compiled would go on running as compiled, silently: that is refused before any test runs.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from tests.helpers import REPO


@dataclass(frozen=True)
class CompiledModule:
    source: Path
    #: the extension beside it, when a build left one
    extension: Path | None

    @property
    def stale(self) -> bool:
        return self.extension is not None and self.source.stat().st_mtime > self.extension.stat().st_mtime


def compiled_modules(tree: Path = REPO) -> list[CompiledModule]:
    """Every module the build compiles, with the extension beside it if there is one."""
    with open(tree / "pyproject.toml", "rb") as file:
        hook = tomllib.load(file)["tool"]["hatch"]["build"]["targets"]["wheel"]["hooks"]["custom"]
    modules = []
    for listed in hook["include"]:
        source = tree / listed.lstrip("/")
        extensions = sorted(source.parent.glob(f"{source.stem}.cpython-*.so"))
        modules.append(CompiledModule(source, extensions[0] if extensions else None))
    return modules


def refusal_if_stale(tree: Path = REPO) -> str | None:
    """Why the tests must not run, if a module was edited after it was compiled."""
    stale = [m for m in compiled_modules(tree) if m.stale]
    if not stale:
        return None
    names = ", ".join(str(m.source.relative_to(tree)) for m in stale)
    return (f"{names} changed after it was compiled, and the tests import the compiled module beside it: "
            f"`pip install -e .` (runs the sources) or `pip install .` (compiles again) first")
