"""What can go wrong rebuilding a provider body, by name, so a reader can act on each."""

from __future__ import annotations

__all__ = ["BodyDamaged", "BodyNotFound", "BodyTooLarge", "BodyUnavailable", "OtherCopyMismatch",
           "ProviderBodyError"]


class ProviderBodyError(Exception):
    """A provider body that cannot be handed out as its exact bytes."""


class BodyNotFound(ProviderBodyError, LookupError):
    """No provider body record at that ``{seq, row}`` (or with that id) in the session."""


class BodyDamaged(ProviderBodyError):
    """The record does not rebuild: a reference to something the session does not hold, a copy
    whose front does not match, or rebuilt bytes that differ from the manifest's ``sha256``."""


class BodyUnavailable(ProviderBodyError):
    """The root no longer holds every byte of the body (a skeleton kept only its structure)."""


class BodyTooLarge(BodyUnavailable):
    """A piece of the body was taken out to fit ``max_delta_bytes`` ("Too large to land").

    The record is intact; the body rebuilds from another copy of it with
    :meth:`~asz_core.providerbody.ProviderBodies.body_from`.
    """


class OtherCopyMismatch(ProviderBodyError):
    """The other copy handed to ``body_from`` is not this body: a piece or a front taken from it
    does not have the digest the record names."""
