"""``claude-code-local``: every Claude Code transcript, child agent and workflow file, as Session
Data (dialect ``claude-code/1``).

* :mod:`.ids` — the id shapes Claude Code writes, and the only ones accepted;
* :mod:`.discover` — session-first discovery across project directories;
* :mod:`.dialect` — a transcript line → a record (the mapping, and the flag rules);
* :mod:`.documents` — sidecars, journals, manifests and scripts → records;
* :mod:`.sources` — landing a session through the host's collectors, and its ids index;
* :mod:`.adapter` — the hooks (the entry point).
"""
