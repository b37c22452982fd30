"""Tokens and cost, grouped by day, month, session, model or project.

1. A call's tokens are what its last fragment carrying usage reported (a call is several records,
   each repeating the call's usage so far; a sum over fragments would count them again).
2. A call belongs to the day and month (UTC) of that record's time; a call with no time is grouped
   under ``-`` and is outside every ``--since``/``--until`` range.
3. Cost is known only where the model's price is: a table of US dollars per million tokens for
   ``in``, ``out``, ``cache_read`` and ``cache_write``. An entry prices the model of its name and
   that name with a release date (``claude-sonnet-4-5`` prices ``claude-sonnet-4-5-20250929``),
   never a later version that only starts the same (``claude-opus-4`` is not ``claude-opus-4-6``).
   The user's table (``--prices FILE``, JSON or YAML, the same shape) is laid over the built-in
   one. A group with any call of an unpriced model says so and its cost covers only the priced.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from asz_core.page.catalogue import CallUsage

__all__ = ["BY", "DEFAULT_PRICES", "PriceTable", "usage_report"]

BY: Final = ("day", "month", "session", "model", "project")
_KINDS: Final = ("in", "out", "cache_read", "cache_write")
_DATED: Final = re.compile(r"(.+)-[0-9]{8}")

#: US dollars per million tokens, as Anthropic listed them; override with ``--prices``.
DEFAULT_PRICES: Final[Mapping[str, Mapping[str, float]]] = {
    "claude-opus-4-5": {"in": 5.0, "out": 25.0, "cache_read": 0.5, "cache_write": 6.25},
    "claude-opus-4-1": {"in": 15.0, "out": 75.0, "cache_read": 1.5, "cache_write": 18.75},
    "claude-opus-4": {"in": 15.0, "out": 75.0, "cache_read": 1.5, "cache_write": 18.75},
    "claude-sonnet-4-5": {"in": 3.0, "out": 15.0, "cache_read": 0.3, "cache_write": 3.75},
    "claude-sonnet-4": {"in": 3.0, "out": 15.0, "cache_read": 0.3, "cache_write": 3.75},
    "claude-3-7-sonnet": {"in": 3.0, "out": 15.0, "cache_read": 0.3, "cache_write": 3.75},
    "claude-haiku-4-5": {"in": 1.0, "out": 5.0, "cache_read": 0.1, "cache_write": 1.25},
    "claude-3-5-haiku": {"in": 0.8, "out": 4.0, "cache_read": 0.08, "cache_write": 1.0},
}


@dataclass(frozen=True)
class PriceTable:
    prices: Mapping[str, Mapping[str, float]]

    @classmethod
    def default(cls) -> PriceTable:
        return cls(DEFAULT_PRICES)

    @classmethod
    def load(cls, path: Path) -> PriceTable:
        """The built-in table with ``path``'s entries laid over it; ``ValueError`` says what is wrong."""
        text = path.read_text(encoding="utf-8")
        data: Any
        if path.suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError(f"{path}: a price table maps a model name to its prices")
        table = {k: dict(v) for k, v in DEFAULT_PRICES.items()}
        for model, prices in data.items():
            if not isinstance(prices, dict) or not set(prices) <= set(_KINDS) or \
                    not all(isinstance(v, int | float) and v >= 0 for v in prices.values()):
                raise ValueError(f"{path}: {model!r} needs prices for {', '.join(_KINDS)} "
                                 f"(US dollars per million tokens, not negative)")
            table[str(model)] = {k: float(prices.get(k, 0.0)) for k in _KINDS}
        return cls(table)

    def of(self, model: str | None) -> Mapping[str, float] | None:
        if model is None:
            return None
        match = _DATED.fullmatch(model)
        return self.prices.get(model) or (self.prices.get(match.group(1)) if match else None)


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
            "cost": 0.0, "unpriced_calls": 0}


def _add(row: dict[str, Any], call: CallUsage, prices: PriceTable) -> None:
    counts = {"in": call.in_, "out": call.out, "cache_read": call.cache_read, "cache_write": call.cache_write}
    row["calls"] += 1
    for kind in _KINDS:
        row[kind] += counts[kind]
    price = prices.of(call.model)
    if price is None:
        row["unpriced_calls"] += 1
    else:
        row["cost"] += sum(counts[k] * price.get(k, 0.0) for k in _KINDS) / 1e6


def usage_report(calls: Iterable[CallUsage], by: str, prices: PriceTable, *,
                 since: dt.date | None = None, until: dt.date | None = None) -> dict[str, Any]:
    """``{"by", "rows": [...], "total": {...}}``; each row ``key``, ``calls``, the four token
    counts, ``cost`` (US dollars, priced calls only) and ``unpriced_calls``. Rows are in key order
    (days and months oldest first)."""
    if by not in BY:
        raise ValueError(f"by must be one of {', '.join(BY)}")
    rows: dict[str, dict[str, Any]] = {}
    total = _blank("total")
    for call in calls:
        if since is not None or until is not None:
            if call.time_ns is None:
                continue
            day = dt.datetime.fromtimestamp(call.time_ns / 1e9, tz=dt.UTC).date()
            if (since is not None and day < since) or (until is not None and day > until):
                continue
        key = _key(call, by)
        _add(rows.setdefault(key, _blank(key)), call, prices)
        _add(total, call, prices)
    out = [rows[k] for k in sorted(rows)]
    for row in (*out, total):
        row["cost"] = round(row["cost"], 6)
    return {"by": by, "rows": out, "total": total}
