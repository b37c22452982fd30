"""The corpus landed and parsed once for the view's tests: both Claude Code adapters, nothing
excluded, and the Kiro captures, in one root."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def corpus_root(every_adapter_root: Path) -> Path:
    """A root holding every corpus transcript, every body the provider adapter can claim and every
    Kiro session, each parsed into its round chain (``every_adapter_root``, which the page's tests
    read too)."""
    return every_adapter_root
