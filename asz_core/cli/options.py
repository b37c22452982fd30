"""Argument types the commands share, so a bad value is a usage error (exit 2) with its reason."""

from __future__ import annotations

import argparse

from asz_core.config import parse_duration

__all__ = ["duration"]


def duration(text: str) -> float:
    """``--interval 10m``: seconds, more than zero."""
    try:
        seconds = parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is no time at all; give at least 1s")
    return seconds
