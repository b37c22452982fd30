"""``view.hide``: withholding what the runtime sent the model, by flag.

``system_prompt`` and ``tool_schemas`` exist so that a view shown to the people an agent served
can withhold what the runtime sent the model, by name rather than by guessing from the text or
the size (``spec/session-data.txt``, "Flags"). A step carrying a withheld flag keeps its place,
its flags and its size, loses its text and every part's identifiers, and says ``omitted``.

A provider request carries the system prompt and the tool schemas whole, so while anything is
withheld the document lists no provider body on any call, and no body is handed out.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

__all__ = ["HIDEABLE", "check_hide", "withhold"]

HIDEABLE: Final = ("system_prompt", "tool_schemas")


def check_hide(values: Iterable[str]) -> tuple[str, ...]:
    """The flags to withhold, in a fixed order; ``ValueError`` names one that cannot be."""
    wanted = set()
    for value in values:
        if value not in HIDEABLE:
            raise ValueError(f"view.hide: {value!r} is not one of {', '.join(HIDEABLE)}")
        wanted.add(value)
    return tuple(flag for flag in HIDEABLE if flag in wanted)


def withhold(step: dict[str, Any], hide: tuple[str, ...]) -> dict[str, Any]:
    """``step`` as the document shows it: itself, or, when it carries a withheld flag, its place,
    flags and sizes only."""
    flags = step.get("flags", [])
    if not any(flag in hide for flag in flags):
        return step
    out: dict[str, Any] = {"at": step["at"]}
    for key in ("from", "time"):
        if key in step:
            out[key] = step[key]
    out["flags"] = flags
    out["bytes"] = step["bytes"]
    out["state"] = "omitted"
    out["parts"] = [{"block": p["block"], "k": p["k"], "bytes": p["bytes"], "state": "omitted"}
                    for p in step["parts"]]
    return out
