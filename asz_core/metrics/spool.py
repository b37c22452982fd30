"""Write-once files of the derivation: the spool's requests and the sessions' receipts.

A file appears under its final name only once every byte is durable, follows no link on the way,
and is never rewritten: the derivation installs them together (:mod:`~asz_core.root.writeonce`).
A crash leaves at most a temporary file (a dot name every reader skips); a name already taken
means an earlier pass wrote it, and the pass uses what is there.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import orjson

from asz_core.root import confined
from asz_core.root.durable import read_small
from asz_core.sessiondata import format_instant, parse_instant

__all__ = ["SPOOL_DIR", "Receipt", "read_receipt", "receipt_path", "spool_files_of", "spool_name"]

SPOOL_DIR: Final = "_metrics"
RECEIPTS_DIR: Final = "metrics"
RECEIPT_SCHEMA: Final = 1


def spool_name(session: str, seq: int) -> str:
    """The spool file of a session's landed file ``seq``."""
    return f"metrics-{session}-{seq:06d}-local.pb"


def spool_files_of(root: Path, session: str) -> list[Path]:
    """The spool files ``session`` owns (what its removal deletes, storage-root.md's step 5)."""
    prefix = f"metrics-{session}-"
    try:
        names = confined.listdir(root / SPOOL_DIR)
    except (FileNotFoundError, NotADirectoryError, confined.LinkRefused):
        return []
    return [root / SPOOL_DIR / name for name in sorted(names)
            if name.startswith(prefix) and name.endswith("-local.pb") and name[len(prefix):-9].isdigit()]


def receipt_path(root: Path, session: str, seq: int) -> Path:
    return root / session / RECEIPTS_DIR / f"{seq:06d}.json"


@dataclass(frozen=True)
class Receipt:
    """What deriving one landed file decided, published before its request enters the spool, so a
    retry after a crash keeps the same accounting even when more fragments have landed since.
    Written as upstream writes it (``schema`` 1, ``last_end`` as times, the request in base64,
    empty fields left out), so a root either wrote resumes under the other."""

    digest: str                 #: the landed file's SHA-256 when it was derived
    counted: tuple[str, ...]    #: the calls it counted
    series: dict[str, int]      #: series key → where its last window now ends (ns)
    points: int
    skipped: bool               #: points older than the look-back were left out
    request: bytes              #: the spool file's exact bytes (empty: no points)

    def encode(self) -> bytes:
        data: dict[str, object] = {"schema": RECEIPT_SCHEMA, "digest": self.digest}
        if self.counted:
            data["counted"] = list(self.counted)
        if self.series:
            data["last_end"] = {k: format_instant(v) for k, v in sorted(self.series.items())}
        if self.request:
            data["request"] = base64.b64encode(self.request).decode("ascii")
        if self.points:
            data["points"] = self.points
        if self.skipped:
            data["skipped"] = True
        return orjson.dumps(data) + b"\n"


def read_receipt(path: Path, digest: str) -> Receipt | None:
    """The receipt at ``path`` when there is one for a file of ``digest``; ``ValueError`` when
    one is there and does not read, or is another file's."""
    raw = read_small(path)
    if raw is None:
        return None
    try:
        data = orjson.loads(raw)
        if data.get("schema") != RECEIPT_SCHEMA:
            raise ValueError(f"schema {data.get('schema')!r} is not {RECEIPT_SCHEMA}")
        series = {}
        for key, end in (data.get("last_end") or {}).items():
            instant = parse_instant(end)
            if instant is None:
                raise ValueError(f"last_end of {key} is not a time")
            series[str(key)] = instant
        receipt = Receipt(str(data["digest"]), tuple(str(c) for c in data.get("counted") or ()), series,
                          int(data.get("points") or 0), bool(data.get("skipped")),
                          base64.b64decode(data.get("request") or "", validate=True))
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"{path}: the receipt does not read ({exc}); move it aside and the file "
                         f"is derived again") from None
    if receipt.digest != digest:
        raise ValueError(f"{path}: the receipt is for a file of digest {receipt.digest[:12]}, the landed "
                         f"file's is {digest[:12]}; the root was changed, `asz-pipeline verify` says how")
    return receipt
