"""What the configured receiver has confirmed of each landed file: the seam between retention
(here) and whichever plugin sends files (it implements the hook ``asz_receipts``)."""

from __future__ import annotations

from typing import Final, Literal, Protocol

__all__ = ["ACCEPTED", "REJECTED", "UNCONFIRMED", "NO_RECEIVER", "Receipt", "Receipts"]

Receipt = Literal["accepted", "rejected", "unconfirmed"]
ACCEPTED: Final = "accepted"        #: the receiver took the file, every record of it
REJECTED: Final = "rejected"        #: it took the file and rejected some of its records
UNCONFIRMED: Final = "unconfirmed"  #: no answer confirmed it (never sent, or sent as other bytes)


class Receipts(Protocol):
    """One receiver's confirmations, as the sending plugin recorded them."""

    @property
    def receiver(self) -> str:
        """The receiver's name (``grpc://host:port``); empty when none is configured."""

    def receipt(self, relpath: str, sha256: str) -> Receipt:
        """What the receiver confirmed of the file at ``relpath`` (from the root) holding the
        bytes whose SHA-256 is ``sha256``."""

    def owner(self, session: str) -> str:
        """The owner ``session`` is sent under (a skeleton's ``removed.owner``)."""

    @property
    def others(self) -> frozenset[str]:
        """The receivers files were recorded as sent to besides this one (``unknown`` for files
        recorded before receivers were named): with any, which file reached which cannot be told."""


class _NoReceiver:
    """No plugin sends files: nothing is ever confirmed."""

    receiver = ""
    others: frozenset[str] = frozenset()

    def receipt(self, relpath: str, sha256: str) -> Receipt:
        return UNCONFIRMED

    def owner(self, session: str) -> str:
        return ""


NO_RECEIVER: Final[Receipts] = _NoReceiver()
