"""What a model's tokens cost: the packaged table (``prices.yaml``), with the user's laid over it.

1. A price is US dollars per million tokens for each of ``in``, ``out``, ``cache_read`` and
   ``cache_write``, all four given, with the ``source`` it is published at and the ``date`` it was
   checked. A price with a kind missing would price that kind at zero without saying so, so it is
   refused.
2. The packaged table (:data:`PACKAGED`) comes first; ``usage.prices`` in ``asz.yaml`` is laid
   over it, then a ``--prices FILE``; a later entry replaces an earlier one of the same name
   whole. A user's entry without a ``source`` is sourced to where it was read.
3. An entry prices the model of its name, and that name with a release date appended
   (``claude-sonnet-4-5`` prices ``claude-sonnet-4-5-20250929``), never a later version that only
   starts the same (``claude-opus-4`` is not ``claude-opus-4-6``). Any other model is unpriced,
   and is named as such wherever a cost is shown.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from asz_core.page.prices_schema import KINDS, PRICES_SCHEMA

__all__ = ["KINDS", "PACKAGED", "PRICES_SCHEMA", "Price", "PriceTable"]

#: Where the packaged table is, inside this package.
PACKAGED: Final = "prices.yaml"
_DATED: Final = re.compile(r"(.+)-[0-9]{8}")


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens of each kind, where that is published, and when checked."""

    model: str
    rates: Mapping[str, float]
    source: str
    date: str | None

    def cost(self, counts: Mapping[str, int]) -> float:
        return sum(counts[kind] * self.rates[kind] for kind in KINDS) / 1e6

    def as_dict(self) -> dict[str, Any]:
        return {"model": self.model, **self.rates, "source": self.source, "date": self.date}


def _entries(data: Any, where: str) -> dict[str, Price]:
    """Rule 1: ``data`` (model name to price) checked; ``ValueError`` naming ``where`` and the entry."""
    import jsonschema

    try:
        jsonschema.Draft202012Validator(PRICES_SCHEMA).validate(data)
    except jsonschema.ValidationError as exc:
        entry = "/".join(str(p) for p in exc.absolute_path) or "the table"
        raise ValueError(f"{where}: {entry}: {exc.message} (a price is in, out, cache_read and cache_write, "
                         f"US dollars per million tokens, with an optional source and date)") from None
    return {str(model): Price(str(model), {k: float(v[k]) for k in KINDS}, str(v.get("source") or where),
                              None if v.get("date") is None else str(v["date"]))
            for model, v in data.items()}


@dataclass(frozen=True)
class PriceTable:
    prices: Mapping[str, Price]

    @classmethod
    def packaged(cls) -> PriceTable:
        # imported here: the configuration imports this module for its schema, on every pass
        from importlib import resources

        import yaml

        text = resources.files("asz_core.page").joinpath(PACKAGED).read_text(encoding="utf-8")
        return cls(_entries(yaml.safe_load(text)["prices"], f"asz_core/page/{PACKAGED}"))

    @classmethod
    def of_config(cls, usage: Mapping[str, Any], prices_file: Path | None = None) -> PriceTable:
        """Rule 2: the packaged table, ``usage.prices`` of ``asz.yaml``, then ``prices_file``."""
        table = cls.packaged().over(usage.get("prices") or {}, "asz.yaml usage.prices")
        return table if prices_file is None else table.over(_read(prices_file), str(prices_file))

    def over(self, data: Any, where: str) -> PriceTable:
        """This table with the entries of ``data`` (model name to price) laid over it."""
        return PriceTable({**self.prices, **_entries(data, where)})

    def of(self, model: str | None) -> Price | None:
        """Rule 3: the price of ``model``, or ``None`` when it is unpriced."""
        if model is None:
            return None
        price = self.prices.get(model)
        if price is None and (dated := _DATED.fullmatch(model)) is not None:
            price = self.prices.get(dated.group(1))
        return price


def _read(path: Path) -> Any:
    """A ``--prices`` file: JSON or YAML, either the table itself or ``{"prices": table}``."""
    text = path.read_text(encoding="utf-8")
    if path.suffix in (".yaml", ".yml"):
        import yaml

        data = yaml.safe_load(text)
    else:
        data = json.loads(text)
    if isinstance(data, dict) and set(data) == {"prices"}:
        data = data["prices"]
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a price table maps a model name to its prices")
    return data
