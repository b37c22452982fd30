"""The sessions of a storage root, one line each: what ``asz-pipeline view`` with no session shows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from asz_core.root.storage import StorageRoot
from asz_core.view.document import build_document

__all__ = ["list_sessions"]


def list_sessions(root: Path) -> list[dict[str, Any]]:
    """For each session of ``root``, by id: its ``id``, ``label``, ``first_time``, ``last_time``,
    and how many ``streams``, ``calls`` and ``provider_bodies`` it holds."""
    out = []
    for session in StorageRoot(root).sessions():
        doc = build_document(root / session, steps=False)
        row: dict[str, Any] = dict(doc["session"])
        summary = doc["summary"]
        row.update(streams=summary["streams"], calls=summary["calls"],
                   provider_bodies=summary["provider_bodies"])
        if summary["problems"]:
            row["problems"] = summary["problems"]
        out.append(row)
    return out
