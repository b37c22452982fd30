"""What the view needs of each landed provider body: its place and the ids it joins by.

Read from each record's ``provider_body/1`` manifest (its last part) one record at a time; the
bodies themselves are not rebuilt here (:class:`~asz_core.view.session.Session` does that on
demand). A body landed twice (a pass interrupted after landing) is one body: the first landing
is the one listed. A record whose manifest does not read is counted, and joins nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from asz_core.providerbody.manifest import ManifestError
from asz_core.providerbody.store import manifest_of
from asz_core.sessiondata.model import Record
from asz_core.view.joins import REQUEST, RESPONSE, BodyRef

__all__ = ["BodyList"]


@dataclass
class BodyList:
    """The session's provider bodies in landing order."""

    bodies: list[BodyRef] = field(default_factory=list)
    unreadable: int = 0
    repeats: int = 0
    _ids: set[str] = field(default_factory=set)

    def add(self, seq: int, row: int, record: Record) -> None:
        try:
            manifest = manifest_of(record)
        except (ManifestError, ValueError):
            self.unreadable += 1
            return
        record_id = record.id or manifest.src.removesuffix(".json")
        if record_id in self._ids:
            self.repeats += 1
            return
        self._ids.add(record_id)
        # upstream writes a request's call, when its adapter knows it, in the manifest only
        self.bodies.append(BodyRef(role=manifest.role, seq=seq, row=row, id=record_id,
                                   call=record.call or manifest.call, run=manifest.run,
                                   previous_request=manifest.previous_request))

    def take(self, other: BodyList) -> None:
        """Add the bodies of a file read whole into ``other``, after those already held."""
        self.unreadable += other.unreadable
        self.repeats += other.repeats
        for body in other.bodies:
            if body.id in self._ids:
                self.repeats += 1
                continue
            self._ids.add(body.id)
            self.bodies.append(body)

    def count(self, role: str | None = None) -> int:
        return sum(1 for b in self.bodies if role is None or b.role == role)

    @property
    def requests(self) -> int:
        return self.count(REQUEST)

    @property
    def responses(self) -> int:
        return self.count(RESPONSE)
