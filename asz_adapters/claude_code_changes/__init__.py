"""``changes`` (``claude-code-changes`` before upstream's 0.5.0): the change records the asz Claude
Code plugin writes, as Session Data (kind ``changes``, dialect ``asz-changes/1``).

* :mod:`.discover` — the plugin's layout under Claude Code's plugin data directory;
* :mod:`.record` — a line read as a ``changes/1`` record, as upstream's typed decoder reads it;
* :mod:`.dialect` — a line → the record landed for it;
* :mod:`.land` — landing a session's files through the host's append collector;
* :mod:`.glossary` — the dialect's vocabulary, for ``asz-pipeline glossary``;
* :mod:`.adapter` — the hooks (the entry point).
"""
