"""The order things happened in, for the lists of an ``asz.view`` document (asz-view, "Top level").

1. Inside one lane (a stream, or a workflow run) a record's position orders it: its file's
   ``seq``, then its ``row``, then its ``block`` (an item on the whole record first).
2. A position means nothing across lanes, since a child's file can land before its parent's, so
   lanes are merged by time: each next item is the earliest of every lane's next item, a timed
   item before an untimed one, and two at one time by position.
3. An item several records support (a relation) happened at the earliest of them by the same
   rule: the first position inside each lane, then the earliest of those across lanes.
4. A tie key decides only between items at the very same position; items with no landed
   position at all come last, in tie order.

One comparison that decides some pairs by position and others by time is not transitive, so
this is a merge, never a single sort.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["Point", "earliest", "in_order", "record_order"]

T = TypeVar("T")


@dataclass(frozen=True)
class Point:
    """Where an item happened: the lane of its record, its position there, and its time (ns, 0
    when the record carries none)."""

    lane: str
    seq: int
    row: int
    block: int  #: -1 for an item on the whole record
    at: int

    def position(self) -> tuple[int, int, int]:
        return (self.seq, self.row, self.block)


def _earlier(a: Point, b: Point) -> bool:
    if (a.at != 0) != (b.at != 0):
        return a.at != 0
    if a.at != b.at:
        return a.at < b.at
    return a.position() < b.position()


def earliest(points: Iterable[Point | None]) -> Point | None:
    """Rule 3: the point an item several records support happened at."""
    first: dict[str, Point] = {}
    for p in points:
        if p is None:
            continue
        held = first.get(p.lane)
        if held is None or p.position() < held.position():
            first[p.lane] = p
    out: Point | None = None
    for p in first.values():
        if out is None or _earlier(p, out):
            out = p
    return out


def in_order(items: Sequence[T], point_of: Callable[[T], Point | None], tie: Callable[[T], Any]) -> list[T]:
    """``items`` in the order they happened (rules 1, 2 and 4)."""
    lanes: dict[str, list[tuple[Point, T]]] = {}
    nowhere: list[T] = []
    for item in items:
        p = point_of(item)
        if p is None:
            nowhere.append(item)
        else:
            lanes.setdefault(p.lane, []).append((p, item))
    for held in lanes.values():
        held.sort(key=lambda pair: (pair[0].position(), tie(pair[1])))
    out: list[T] = []
    heads = dict.fromkeys(lanes, 0)
    order = list(lanes)
    while True:
        best: str | None = None
        best_at: Point | None = None
        for lane in order:
            i = heads[lane]
            if i >= len(lanes[lane]):
                continue
            p = lanes[lane][i][0]
            if best_at is None or _earlier(p, best_at):
                best, best_at = lane, p
        if best is None:
            break
        out.append(lanes[best][heads[best]][1])
        heads[best] += 1
    nowhere.sort(key=tie)
    return out + nowhere


def record_order(node: dict[str, Any]) -> tuple[int, int, int, int, str]:
    """Record order, for a node's children and the lists upstream's fold orders so (streams,
    segments, loose trees): its landed position, a node on the whole record before those on its
    parts, then its id; a node with no position last."""
    ref = node.get("ref")
    if not isinstance(ref, dict) or not isinstance(ref.get("seq"), int) or not isinstance(ref.get("row"), int):
        return (1, 0, 0, 0, node["id"])
    block = ref.get("block")
    return (0, ref["seq"], ref["row"], block if isinstance(block, int) else -1, node["id"])
