"""The ``changes/1`` record's pieces every producer builds the same way: a file's side before or
after a change, and the line diff between the two (upstream's ``formats/session-data.md`` and
``adapters/claude-code.md``, "Workspace changes").

* :mod:`.linediff` — the hunks upstream's differ gives, line for line;
* :mod:`.files` — a side's ``present``/``bytes``/``sha256``, and a file's ``diff``, hunks and counts.
"""
