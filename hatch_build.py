"""The wheel's build hook: hatch-mypyc compiling the per-record path, where it can.

* **A wheel** (``pip install .``): the modules ``pyproject.toml`` lists under this hook are
  compiled by mypyc (hatch-mypyc), which needs a C compiler and Python's headers. If compiling
  fails for any reason, the wheel is built as plain Python with a warning: the same modules,
  about a quarter more CPU a line (``benchmarks/README.md``, "The per-record path compiled by
  mypyc"). ``ASZ_REQUIRE_COMPILED=1`` makes the failure stop the build instead: CI sets it, so a
  change that stops the modules compiling is not hidden by the fallback.
* **An editable install** (``pip install -e .``) runs the sources as they are edited: nothing is
  compiled, and what an earlier wheel build left beside the sources (hatch-mypyc compiles in
  place, and Python imports an extension before its ``.py``) is removed.
"""

from __future__ import annotations

import os
from typing import Any

from hatch_mypyc.plugin import MypycBuildHook


class CompiledWhereItCan(MypycBuildHook):  # type: ignore[misc]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if version == "editable":
            self.clean([version])
            return
        try:
            super().initialize(version, build_data)
        except Exception as exc:  # hatch-mypyc raises a bare Exception when the compiler fails
            if os.environ.get("ASZ_REQUIRE_COMPILED"):
                raise
            self.clean([version])
            first = next((line for line in str(exc).splitlines() if "error" in line.lower()), str(exc)[:200])
            self.app.display_warning(f"asz: the per-record path could not be compiled ({first.strip()}); "
                                     f"it is installed as plain Python, which works the same, slower")


def get_build_hook() -> type[CompiledWhereItCan]:
    """The hook hatchling loads from this file (``get_build_hook``: the hatch-mypyc class imported
    here is a build hook too, so finding the one defined here by its base class would be ambiguous)."""
    return CompiledWhereItCan
