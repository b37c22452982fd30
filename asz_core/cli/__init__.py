"""The ``asz-pipeline`` command line."""

from __future__ import annotations

from asz_core.cli.main import main

__all__ = ["main"]
