"""Retention: a landed file gives way to its skeleton once it is old enough and its receiver has it.

A root grows without end and holds people's prompts, paths and account ids. ``storage.retention``
removes a landed file's content once its session's last record is old enough and the configured
receiver has accepted the file (or the user said ``local_only``), and leaves its skeleton
(``<name>.sk``: every identifier, link, flag, usage and part position, none of the content), so
the session's structure and index stay whole and ``verify`` still passes. It runs at the end of
every pass, after the push, and as ``asz-pipeline retain [--dry-run]``.

* :mod:`~asz_core.retention.policy`: when a file may go (the rules, in order).
* :mod:`~asz_core.retention.receipts`: what the sending plugin says its receiver confirmed.
* :mod:`~asz_core.retention.plan`: what would go now, and why every other file stays.
* :mod:`~asz_core.retention.remove`: replacing one file, crash-safely.
* :mod:`~asz_core.retention.retain`: one step over a root.
"""
