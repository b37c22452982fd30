"""What the adapter says about itself at start-up, apart from the dialects' code: every pass
registers the adapter, and one that lands nothing should not load the dialects and collectors."""

from __future__ import annotations

from typing import Final

__all__ = ["DIALECTS"]

#: the ``name`` of each dialect the adapter lands in (``CliEventDialect``, ``CliMetaDialect``,
#: ``DatabaseTurnDialect``, ``IdeMessageDialect``, ``IdeMetaDialect``; a test keeps them equal)
DIALECTS: Final = ("kiro-cli/1", "kiro-cli-meta/1", "kiro-cli-db/1", "kiro-ide/1", "kiro-ide-meta/1")
