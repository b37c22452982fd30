"""``asz-changes/1``'s vocabulary: the plugin writes ``changes/1`` records in the model's own
words, so each name the record carries is its own; every other name of the model is structure
a change record does not hold (it is evidence beside a step, never a step)."""

from __future__ import annotations

from asz_adapters.claude_code_changes.about import DIALECT
from asz_core.glossary import Glossary, Term

__all__ = ["GLOSSARY"]

_WHERE = "a change record"

GLOSSARY = Glossary(dialect=DIALECT, runtime="Claude Code", terms=(
    Term("id", "id", _WHERE, "the tool-use id the record belongs to, or gap/<root>/<step> for a change no "
                             "tool window covers"),
    Term("session", "session", _WHERE),
    Term("stream", "stream", _WHERE, "main or the agent id the tool ran under; also the file's name"),
    Term("time", "time", _WHERE, "when the observation ended"),
    Term("tool", "tool", _WHERE, "the only join to the step; absent on an unattributed record"),
))
