"""What the configured receiver has confirmed, as retention asks it (``asz_receipts``).

A file is ``accepted`` when ``push.state`` records it for this receiver with the digest the file
has now and no ``rejected`` line, ``rejected`` when it has one, and ``unconfirmed`` otherwise
(never sent, sent to another receiver, or sent with other bytes).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from asz_core.retention.receipts import ACCEPTED, REJECTED, UNCONFIRMED, Receipt
from asz_plugins.otlp_push.config import OtlpConfig
from asz_plugins.otlp_push.state import PushState, ReceiverState

__all__ = ["PushReceipts"]


@dataclass(frozen=True)
class PushReceipts:
    receiver: str
    taken: ReceiverState
    instance_id: str

    @classmethod
    def load(cls, cfg: OtlpConfig, root: Path) -> PushReceipts:
        """``PushStateError`` when ``push.state`` does not read."""
        state = PushState.load(root)
        return cls(cfg.receiver, state.receivers.get(cfg.receiver, ReceiverState()), cfg.instance_id)

    def receipt(self, relpath: str, sha256: str) -> Receipt:
        if self.taken.pushed.get(relpath) != sha256:
            return UNCONFIRMED
        return REJECTED if relpath in self.taken.rejected else ACCEPTED

    def owner(self, session: str) -> str:
        """The receiver and the instance that sends to it, as the spec writes an owner."""
        return f"{quote(self.receiver, safe=':')}||{self.instance_id}"
