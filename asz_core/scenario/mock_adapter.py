"""The ``mock`` adapter: the runtime an ``sd`` build's Session Data names (``mock/0.2.0``, dialect ``mock/1``).

A scenario's ``sd`` build lands its records itself, so this adapter discovers and lands nothing.
It exists to say what a real adapter says about itself: that ``mock`` is the ``Mock Agent``, so
a receiver never lists an invented conversation as a real runtime's.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from asz_core import hookimpl
from asz_core.plugin import AdapterInfo

__all__ = ["asz_adapter_info", "asz_claim", "asz_discover"]


@hookimpl
def asz_adapter_info() -> AdapterInfo:
    return AdapterInfo(version="0.2.0", runtime="Mock Agent", dialects=("mock/1",))


@hookimpl
def asz_discover(ctx: Any) -> Iterable[Any]:
    return ()


@hookimpl
def asz_claim(ctx: Any, found: Iterable[Any]) -> Iterable[Any]:
    return ()
