"""What the adapter says about itself at start-up, apart from the code that reads the records:
every pass registers the adapter, and one with nothing to land should not load the rest."""

from __future__ import annotations

from typing import Final

__all__ = ["DIALECT", "KIND", "PLUGIN", "VERSION"]

#: the adapter's contract version, in every header it lands (``claude-code-changes/0.1.0``)
VERSION: Final = "0.1.0"
#: the plugin writes ``changes/1`` records in the model's own words: no runtime shape between
DIALECT: Final = "asz-changes/1"
#: the landed files' kind, their name's prefix and their cursor's (``changes.cursor``)
KIND: Final = "changes"
#: the plugin's name in its manifest; Claude Code names its data directory after it, with the
#: marketplace it came from after a dash (``asz-changes-<marketplace>``)
PLUGIN: Final = "asz-changes"
