"""Removing one landed file: its skeleton lands, then the file goes.

A kill at any instant leaves the landed file, or the file and its skeleton, or the skeleton:
never neither, and never a skeleton that does not stand for the file. The steps, in this order:

1. The skeleton lands beside the file (:func:`asz_core.root.skeletons.land_skeleton`): written
   to a temporary name, fsynced, made read-only, renamed to ``<name>.sk`` without replacing
   anything, its directory fsynced. A kill before the rename leaves only a temporary file, which
   the next writer of the session deletes; the landed file is untouched.
2. A skeleton already there (a removal stopped after step 1) is read whole and must say it stands
   for these bytes (``removed.digest``); one that does not is a conflict and both stay.
3. The landed file is unlinked and its directory fsynced. Until then readers read the landed
   file and pass over its skeleton.
"""

from __future__ import annotations

import os
from pathlib import Path

from asz_core.root import faults
from asz_core.root.durable import fsync_dir, open_landed
from asz_core.root.skeletons import land_skeleton
from asz_core.sessiondata.errors import SessionDataError
from asz_core.sessiondata.skeleton import Removal

__all__ = ["SkeletonConflict", "removed_header", "remove_landed"]


class SkeletonConflict(Exception):
    """A skeleton stands beside the landed file but does not stand for its bytes."""


def removed_header(skeleton: Path) -> dict[str, object]:
    """The ``removed`` member of a skeleton's header; ``SessionDataError`` if it does not read,
    ``LinkRefused`` if a link stands at its name."""
    with open_landed(skeleton) as reader:
        removed = reader.header.get("removed")
        for _ in reader:  # read whole: its closing line proves it was written to the end
            pass
    if not isinstance(removed, dict):
        raise SessionDataError("its header has no removed member", path=str(skeleton))
    return removed


def remove_landed(landed: Path, sha256: str, removal: Removal) -> Path:
    """Replace ``landed`` (whose bytes have the SHA-256 ``sha256``) by its skeleton."""
    skeleton = landed.with_suffix(".sk")
    if not os.path.lexists(skeleton):  # step 1
        faults.checkpoint("skeleton-land")
        land_skeleton(landed, removal)
    try:  # step 2
        digest = removed_header(skeleton).get("digest")
    except SessionDataError as exc:
        raise SkeletonConflict(f"{skeleton} does not read ({exc.reason}); the landed file stays. "
                               f"Move the skeleton aside to let retention land it again") from None
    if digest != sha256:
        raise SkeletonConflict(f"{skeleton} stands for other bytes than {landed.name}; both stay. "
                               f"Move the skeleton aside to let retention land it again")
    faults.checkpoint("landed-unlink")  # step 3
    os.unlink(landed)
    fsync_dir(landed.parent)
    return skeleton
