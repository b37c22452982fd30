"""What the adapter says about itself at start-up, apart from the landing code: every pass
registers the adapter, and one that lands nothing should not load the provider-body encoder."""

from __future__ import annotations

from typing import Final

__all__ = ["DIALECT"]

#: the dialect ``claude-code-provider`` lands bodies in (:mod:`.land`)
DIALECT: Final = "claude-code-provider/1"
