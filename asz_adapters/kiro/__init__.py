"""The ``kiro`` adapter: Kiro CLI sessions and database, Kiro IDE (1.0 and later) sessions.

Each on-disk generation has its own module and dialect (see ``README.md`` beside this file):

* ``cli_sessions``  — ``~/.kiro/sessions/cli/<uuid>.jsonl`` (+ ``<uuid>.json``), dialects
  ``kiro-cli/1`` and ``kiro-cli-meta/1``;
* ``cli_database``  — ``conversations_v2`` rows of kiro-cli's ``data.sqlite3``, dialect
  ``kiro-cli-db/1``, landed turn by turn by ``db_collector``;
* ``ide_sessions``  — ``~/.kiro/sessions/<bucket>/sess_<uuid>/messages.jsonl`` (+
  ``session.json``), dialects ``kiro-ide/1`` and ``kiro-ide-meta/1``;
* ``legacy_stores`` — the IDE's older stores, found and counted but not read.

``adapter`` holds the hooks; ``placement`` decides which session and stream each unit lands in.
"""
