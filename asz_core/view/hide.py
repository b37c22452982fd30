"""``view.hide``: withholding what the runtime sent the model, by flag.

``system_prompt`` and ``tool_schemas`` exist so that a view shown to the people an agent served
can withhold what the runtime sent the model, by name rather than by guessing from the text or
the size (asz-view, "Withholding"). A record carrying a withheld flag is withheld as it is read:
a step on it keeps its node, its flags and its size, loses its text, and says ``omitted``
(:mod:`asz_core.view.nodes`); ``summary.withheld`` counts what was withheld by name.

A provider request carries the system prompt and the tool schemas whole, so while anything is
withheld the document lists no provider body on any call, and no body is handed out.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

__all__ = ["HIDEABLE", "check_hide"]

HIDEABLE: Final = ("system_prompt", "tool_schemas")


def check_hide(values: Iterable[str]) -> tuple[str, ...]:
    """The flags to withhold, in a fixed order; ``ValueError`` names one that cannot be."""
    wanted = set()
    for value in values:
        if value not in HIDEABLE:
            raise ValueError(f"view.hide: {value!r} is not one of {', '.join(HIDEABLE)}")
        wanted.add(value)
    return tuple(flag for flag in HIDEABLE if flag in wanted)
