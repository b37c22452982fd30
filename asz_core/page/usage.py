"""Tokens and cost, grouped by day, month, session, model or project.

1. A call's tokens are what its last fragment carrying usage reported (a call is several records,
   each repeating the call's usage so far; a sum over fragments would count them again). A call
   none of whose records carried usage is counted as a call, and as ``unreported``: its tokens are
   not known, which is not the same as none.
2. A call belongs to the day and month (UTC) of that record's time; a call with no time is grouped
   under ``-`` and is outside every ``--since``/``--until`` range.
3. Cost is known only where the model's price is (:mod:`asz_core.page.prices`). A group with a call
   of an unpriced model says how many, its cost covers only the priced calls, and the report names
   every unpriced model with its calls, so a missing price is never a silent zero. The report
   lists each price it used with its source and date.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any, Final

from asz_core.page.catalogue import CallUsage
from asz_core.page.prices import KINDS, PriceTable

__all__ = ["BY", "NO_MODEL", "usage_report"]

BY: Final = ("day", "month", "session", "model", "project")
#: How a call that names no model is named among the unpriced.
NO_MODEL: Final = "(no model named)"


def _key(call: CallUsage, by: str) -> str:
    if by == "session":
        return call.session
    if by == "model":
        return call.model or "-"
    if by == "project":
        return call.project or "-"
    if call.time_ns is None:
        return "-"
    day = dt.datetime.fromtimestamp(call.time_ns / 1e9, tz=dt.UTC)
    return day.strftime("%Y-%m-%d" if by == "day" else "%Y-%m")


def _blank(key: str) -> dict[str, Any]:
    return {"key": key, "calls": 0, "in": 0, "out": 0, "cache_read": 0, "cache_write": 0,
            "cost": 0.0, "unpriced_calls": 0, "unreported_calls": 0}


def _counts(call: CallUsage) -> dict[str, int]:
    return {"in": call.in_, "out": call.out, "cache_read": call.cache_read, "cache_write": call.cache_write}


def _in_range(call: CallUsage, since: dt.date | None, until: dt.date | None) -> bool:
    if since is None and until is None:
        return True
    if call.time_ns is None:
        return False
    day = dt.datetime.fromtimestamp(call.time_ns / 1e9, tz=dt.UTC).date()
    return (since is None or day >= since) and (until is None or day <= until)


def usage_report(calls: Iterable[CallUsage], by: str, prices: PriceTable, *,
                 since: dt.date | None = None, until: dt.date | None = None) -> dict[str, Any]:
    """``{"by", "rows", "total", "unpriced", "prices"}``. Each row: ``key``, ``calls``, the four
    token counts, ``cost`` (US dollars, priced calls only), ``unpriced_calls`` and
    ``unreported_calls``; rows in key order (days and months oldest first). ``unpriced`` maps each
    unpriced model to its calls; ``prices`` lists each price used, with its source and date."""
    if by not in BY:
        raise ValueError(f"by must be one of {', '.join(BY)}")
    rows: dict[str, dict[str, Any]] = {}
    total = _blank("total")
    unpriced: dict[str, int] = {}
    used: dict[str, dict[str, Any]] = {}
    for call in calls:
        if not _in_range(call, since, until):
            continue
        counts = _counts(call)
        price = prices.of(call.model)
        if price is None:
            name = call.model or NO_MODEL
            unpriced[name] = unpriced.get(name, 0) + 1
        else:
            used.setdefault(price.model, price.as_dict())
        for row in (rows.setdefault(_key(call, by), _blank(_key(call, by))), total):
            row["calls"] += 1
            row["unreported_calls"] += not call.reported
            for kind in KINDS:
                row[kind] += counts[kind]
            if price is None:
                row["unpriced_calls"] += 1
            else:
                row["cost"] += price.cost(counts)
    out = [rows[k] for k in sorted(rows)]
    for row in (*out, total):
        row["cost"] = round(row["cost"], 6)
    return {"by": by, "rows": out, "total": total, "unpriced": dict(sorted(unpriced.items())),
            "prices": [used[m] for m in sorted(used)]}
