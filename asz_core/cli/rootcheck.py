"""What a command that reads the storage root says when there is nothing there to read."""

from __future__ import annotations

from pathlib import Path

from asz_core.errors import Failed

__all__ = ["require_root"]


def require_root(root: Path, command: str) -> None:
    """``Failed`` (exit 1) when ``root`` is not a directory: a root at the wrong place must not
    read as a clean, empty one."""
    if root.is_dir():
        return
    what = "is not a directory" if root.exists() else "does not exist"
    raise Failed(f"{command}: the storage root {root} {what}: nothing has landed there. Run "
                 f"`asz-pipeline run` to land sessions, or point storage.root in asz.yaml (or $ASZ_ROOT, "
                 f"or --config) at the root you mean; `asz-pipeline config` prints the one in effect")
