"""Removal of the sessions a ``claude-code`` scenario build marked, once all of each is sent.

A scenario build stands in for a client that keeps holding conversations, so a root it feeds
would otherwise grow without end; the receiver holds the copy that matters. So at the end of
every pass over a root holding ``_scenario/``, after the push, a marked session that is sent in
full goes by its marker's policy: its source files, landed files, chain and state lines, the
marker last. A session no build marked, which is every real Claude Code session, is never
removed, and the configuration has no removal setting.

* :mod:`~asz_core.removal.marker`: what a build records about a session, and the rules it is read by.
* :mod:`~asz_core.removal.decide`: whether a session may go now, the conditions in order.
* :mod:`~asz_core.removal.metrics_sent`: the condition on the metrics derived from a session.
* :mod:`~asz_core.removal.verdict`: what a condition answers (go, kept, waiting).
* :mod:`~asz_core.removal.remove`: one session's removal, in the order a stop can be finished from.
* :mod:`~asz_core.removal.scenario_root`: ``_scenario/``, ``_removed/``, no link followed.
* :mod:`~asz_core.removal.pass_end`: the step at the end of a pass.
"""
