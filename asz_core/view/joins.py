"""Joining provider bodies to the calls they belong to: exact joins only
(``spec/provider-bodies-internals.txt``, "In the view").

* A **response** joins the call whose id its record's ``call`` names (the message id), when
  exactly one response and exactly one call carry that id.
* A **request** whose record names its call joins the same way.
* A request that names no call joins by two ids its manifest carries: ``previous_request``, the
  request id of the call before it in its chain, and ``run``, the prompt it answers. A call
  carries the same two ids: the request id of its previous call's response (the stream's
  previous call, whose response joined), and its own ``run``. The first call of a stream carries
  no previous request, and matches a request that names none. A request joins when exactly one
  request and exactly one call carry those two ids (a request carries one pair, so it joins one
  call at most).

Nothing is joined by position or by time. So no request joins a call whose prompt is unknown,
whose previous call's response did not land, or whose two ids another call or request carries
too (two requests that name no previous request under one prompt, the first calls of two
streams under one prompt). A request that names no prompt (a compaction) never joins. A
**synthetic** call takes part in no join and is not the call before the next one either. A
stream with a **gap** joins nothing, since a call may be missing between two that look
consecutive.

A response's record id is its provider request id followed by ``.response`` (the body file's
name without ``.json``): that is the request id the next call's request names.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["REQUEST", "RESPONSE", "BodyRef", "CallSlot", "join_bodies", "request_id_of"]

REQUEST = "request"
RESPONSE = "response"
_RESPONSE_SUFFIX = "." + RESPONSE


def request_id_of(record_id: str | None) -> str | None:
    """The provider request id a response body's record id carries, or ``None``."""
    if record_id is None or not record_id.endswith(_RESPONSE_SUFFIX) or record_id == _RESPONSE_SUFFIX:
        return None
    return record_id[: -len(_RESPONSE_SUFFIX)]


@dataclass(frozen=True)
class BodyRef:
    """One landed provider body, as far as joining goes."""

    role: str
    seq: int
    row: int
    id: str
    call: str | None = None              #: the message id the record names
    run: str | None = None               #: the prompt a request names
    previous_request: str | None = None  #: the request id of the call before it in its chain

    @property
    def request_id(self) -> str | None:
        return request_id_of(self.id) if self.role == RESPONSE else None

    def to_json(self) -> dict[str, Any]:
        return {"role": self.role, "ref": {"seq": self.seq, "row": self.row}}


@dataclass(frozen=True)
class CallSlot:
    """One call, as far as joining goes. Slots of a stream come in line order."""

    key: Hashable      #: what the caller knows the call by
    stream: str
    message: str       #: the call id (the message id)
    prompt: str | None
    synthetic: bool = False
    gap: bool = False  #: its stream has a gap


def join_bodies(calls: Sequence[CallSlot], bodies: Sequence[BodyRef]) -> dict[Hashable, list[BodyRef]]:
    """Each joined call's bodies, request first. ``calls`` in line order within each stream."""
    usable = [c for c in calls if not c.synthetic]
    calls_with_id = Counter(c.message for c in usable)
    joinable = [c for c in usable if not c.gap]
    named: dict[str, dict[str, list[BodyRef]]] = {REQUEST: defaultdict(list), RESPONSE: defaultdict(list)}
    keyed: dict[tuple[str | None, str], list[BodyRef]] = defaultdict(list)
    for body in bodies:
        if body.role not in named:
            continue
        if body.call is not None:
            named[body.role][body.call].append(body)
        elif body.role == REQUEST and body.run is not None:
            keyed[(body.previous_request, body.run)].append(body)

    request: dict[Hashable, BodyRef] = {}
    response: dict[Hashable, BodyRef] = {}
    for slot in joinable:
        if calls_with_id[slot.message] != 1:
            continue
        for role, joined in ((RESPONSE, response), (REQUEST, request)):
            hits = named[role].get(slot.message, [])
            if len(hits) == 1:
                joined[slot.key] = hits[0]

    call_key: dict[Hashable, tuple[str | None, str]] = {}
    previous_in: dict[str, CallSlot] = {}
    for slot in usable:
        before = previous_in.get(slot.stream)
        previous_in[slot.stream] = slot
        if slot.gap or slot.prompt is None or slot.key in request:
            continue
        previous: str | None = None
        if before is not None:
            prior = response.get(before.key)
            previous = prior.request_id if prior is not None else None
            if previous is None:
                continue
        call_key[slot.key] = (previous, slot.prompt)
    calls_with_key = Counter(call_key.values())
    for slot_key, ids in call_key.items():
        hits = keyed.get(ids, [])
        if len(hits) == 1 and calls_with_key[ids] == 1:
            request[slot_key] = hits[0]

    out: dict[Hashable, list[BodyRef]] = {}
    for slot in joinable:
        listed = [b for b in (request.get(slot.key), response.get(slot.key)) if b is not None]
        if listed:
            out[slot.key] = listed
    return out
