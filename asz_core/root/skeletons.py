"""Installing a skeleton beside the landed file it stands for (written once, read-only)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from asz_core.root import confined
from asz_core.root.durable import OWNER_FILE, fsync_dir, install_noreplace, temp_name
from asz_core.sessiondata.skeleton import Removal, write_skeleton

__all__ = ["land_skeleton"]


def land_skeleton(landed: Path, removal: Removal) -> Path:
    """Write ``<name>.sk`` for the landed ``<name>.sd``; the landed file itself is not touched.

    Removing the landed file afterwards is the caller's decision (retention); until then both
    exist, and readers read the landed file.
    """
    final = landed.with_suffix(".sk")
    temp = temp_name(final)
    fd = confined.open_path(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, OWNER_FILE)
    try:
        with os.fdopen(fd, "wb") as sink:
            write_skeleton(str(landed), sink, removal, opener=confined.open_path)  # no link followed
            sink.flush()
            os.fsync(sink.fileno())
            os.fchmod(sink.fileno(), 0o400)
        install_noreplace(temp, final)
    except BaseException:
        with contextlib.suppress(OSError):
            confined.unlink(temp)
        raise
    fsync_dir(final.parent)
    return final
