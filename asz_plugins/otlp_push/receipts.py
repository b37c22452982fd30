"""What the configured receiver has confirmed, as retention asks it (``asz_receipts``).

A file is ``accepted`` when ``push.state`` records it with the digest the file has now and no
``rejected`` line, ``rejected`` when it has one, and ``unconfirmed`` otherwise (never sent, or
sent with other bytes). ``push.state`` says which receivers files went to, not which file went
where, so nothing counts as confirmed unless it names one receiver: the configured one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from asz_core.redact import redact_url
from asz_core.retention.receipts import ACCEPTED, REJECTED, UNCONFIRMED, Receipt
from asz_plugins.otlp_push.config import OtlpConfig
from asz_plugins.otlp_push.state import PushState

__all__ = ["PushReceipts"]


@dataclass(frozen=True)
class PushReceipts:
    receiver: str
    state: PushState
    instance_id: str

    @classmethod
    def load(cls, cfg: OtlpConfig, root: Path) -> PushReceipts:
        """``PushStateError`` when ``push.state`` does not read."""
        return cls(cfg.receiver, PushState.load(root), cfg.instance_id)

    @property
    def sole_receiver(self) -> bool:
        """Whether ``push.state`` names the configured receiver and no other."""
        return self.state.receivers == {redact_url(self.receiver)}

    @property
    def others(self) -> frozenset[str]:
        return frozenset(self.state.receivers - {redact_url(self.receiver)})

    def receipt(self, relpath: str, sha256: str) -> Receipt:
        if not self.sole_receiver or self.state.pushed.get(relpath) != sha256:
            return UNCONFIRMED
        return REJECTED if relpath in self.state.rejected else ACCEPTED

    def owner(self, session: str) -> str:
        """The receiver and the instance that sends to it, as the spec writes an owner."""
        return f"{quote(redact_url(self.receiver), safe=':')}||{self.instance_id}"
