"""What the adapter says about itself at start-up, apart from the dialect's code: every pass
registers the adapter, and one that lands nothing should not load the dialect and collectors."""

from __future__ import annotations

from typing import Final

__all__ = ["DIALECT"]

#: the dialect ``claude-code-local`` lands transcripts in (:mod:`.dialect`)
DIALECT: Final = "claude-code/1"
