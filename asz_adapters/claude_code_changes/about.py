"""What the adapter says about itself at start-up, apart from the code that reads the records:
every pass registers the adapter, and one with nothing to land should not load the rest."""

from __future__ import annotations

from typing import Final

__all__ = ["DIALECT", "KIND", "NAME", "NAME_WAS", "PLUGIN", "PLUGIN_NAMES", "VERSION"]

#: the adapter's name in configuration and in landed headers (``changes/0.1.0``), as upstream's:
#: the records are not Claude Code's own, a LangChain recorder writes the same shape
NAME: Final = "changes"
#: its name before upstream's 0.5.0; configurations and headers written then still carry it
NAME_WAS: Final = "claude-code-changes"
#: the adapter's contract version, in every header it lands
VERSION: Final = "0.1.0"
#: the plugin writes ``changes/1`` records in the model's own words: no runtime shape between
DIALECT: Final = "asz-changes/1"
#: the landed files' kind, their name's prefix and their cursor's (``changes.cursor``)
KIND: Final = "changes"
#: the plugin's current name in its manifest; Claude Code names its data directory after it, with
#: the marketplace it came from after a dash (``file-changes-<marketplace>``)
PLUGIN: Final = "file-changes"
#: every name the plugin has had, current first: a directory the older name left is read too
PLUGIN_NAMES: Final = ("file-changes", "asz-changes")
