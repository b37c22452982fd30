"""``<root>/_provider/retired``: body files a person has given up placing.

A body file no pass can place (a response no transcript records, a file that will never be one
JSON value) would be counted waiting or unreadable, with a warning, on every pass forever. Its
owner retires it with ``asz-pipeline bodies --retire FILE``:

* the file itself is never changed, moved or deleted, and nothing landed is touched;
* the table records its name with the size and mtime it had when retired; while it still has
  them, a pass counts it ``bodies_retired`` (no warning) instead of waiting or unreadable;
* a retired file whose size or mtime changed is no longer retired: it is tried again as any
  other, so retiring can never hide bytes the file gains later;
* a landed file is never retired (it has nothing left to wait for); a file changed after it
  landed (a conflict: a body's id is unique in its session, so its new bytes cannot land as a
  second version) can be: its changed bytes are given up, and the body that landed stays.

Unlike ``seen.state`` this table is not derived (it is a person's decision, and the root is the
only place it is kept), so it is replaced atomically and durably. Lines: ``name size mtime_ns``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from asz_adapters.claude_code_provider.seen import DIRECTORY
from asz_core.root.durable import make_dirs, read_small, write_replace

__all__ = ["FILE", "RetiredBodies"]

FILE: Final = "retired"
_HEADER: Final = "# body files retired by `asz-pipeline bodies --retire`: name size mtime_ns\n"


#: a retired file's size and mtime (nanoseconds): a plain tuple, where a named tuple is built at
#: import by compiling the constructor it writes, and every pass loads this module
_Mark = tuple[int, int]


class RetiredBodies:
    """The retired table of a root."""

    def __init__(self, root: Path) -> None:
        self.path = root / DIRECTORY / FILE
        self.marks: dict[str, _Mark] = {}

    @classmethod
    def load(cls, root: Path) -> RetiredBodies:
        """The table (empty when there is none, or a line does not read: such a line is skipped,
        and its file is only counted waiting again)."""
        table = cls(root)
        try:
            data = read_small(table.path)
        except OSError:
            data = None
        for line in (data or b"").decode("utf-8", "replace").splitlines():
            words = line.split()
            if len(words) != 3 or words[0].startswith("#"):
                continue
            try:
                table.marks[words[0]] = (int(words[1]), int(words[2]))
            except ValueError:
                continue
        return table

    def holds(self, name: str, size: int, mtime: int) -> bool:
        """Whether ``name`` is retired with this size and mtime (its bytes as they were retired)."""
        return self.marks.get(name) == (size, mtime)

    def retire(self, path: Path) -> None:
        """Record ``path`` (a body file) as it is now; ``OSError`` if it cannot be stat-ed."""
        st = os.lstat(path)
        self.marks[path.name] = (st.st_size, st.st_mtime_ns)

    def save(self) -> None:
        make_dirs(self.path.parent)
        lines = [_HEADER, *(f"{name} {size} {mtime}\n" for name, (size, mtime) in sorted(self.marks.items()))]
        write_replace(self.path, "".join(lines).encode("utf-8"))
