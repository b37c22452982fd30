"""The wheel's own build hook (hatchling's ``custom``): an editable install keeps no compiled
module beside the sources.

hatch-mypyc compiles in place and leaves each module's extension beside its ``.py``; Python
imports the extension first, so in an editable install (sources read from this tree) an edited
module would go on running as it was compiled. After an editable build the extensions are
removed, and that install runs the sources; a standard wheel carries them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

#: what hatch-mypyc leaves in the tree: one extension a module, and the library they share
BUILT = ("asz_core/**/*.cpython-*.so", "asz_adapters/**/*.cpython-*.so", "*__mypyc.*.so")


class CustomBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        if version != "editable":
            return
        for pattern in BUILT:
            for built in Path(self.root).glob(pattern):
                built.unlink()
