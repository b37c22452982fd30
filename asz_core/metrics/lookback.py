"""``metrics.lookback``: how far back the first derivation over a root reaches."""

from __future__ import annotations

import re

__all__ = ["LOOKBACK_PATTERN", "parse_lookback"]

#: ``72h``, ``3d``, ``1d12h``, ``90m``, ``0`` or ``none`` (everything)
LOOKBACK_PATTERN = r"^(0|none|(?=\d)(\d+d)?(\d+h)?(\d+m)?(\d+s)?)$"
_UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1}


def parse_lookback(text: str) -> float:
    """Seconds; 0 derives everything. ``ValueError`` for anything else than the pattern."""
    if re.fullmatch(LOOKBACK_PATTERN, text) is None:
        raise ValueError(f"metrics.lookback {text!r} is not a duration such as 72h or 3d, nor 0 or none")
    if text in ("0", "none"):
        return 0.0
    return float(sum(int(n) * _UNITS[u] for n, u in re.findall(r"(\d+)([dhms])", text)))
