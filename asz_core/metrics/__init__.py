"""Metrics derived from the landed files: ``agent.token.usage``, spooled under ``_metrics/``.

The derivation reads Session Data only (a call's ``usage``, ``model``, time and ``finished``
flag, and the stream it was made on), never a runtime's own fields, so any adapter that lands a
coding agent's calls by the format's rules is counted by the same rules. It runs at the end of a
pass when ``metrics.enabled`` is on, before the push, which sends the spool when
``export.otlp.metrics`` is on. See :mod:`~asz_core.metrics.derive` for the steps.

Nothing is imported here: ``config`` reads the look-back's pattern at start-up, and a pass that
derives nothing does not load the derivation.
"""
