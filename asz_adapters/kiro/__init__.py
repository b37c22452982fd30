"""The ``kiro`` adapter: Kiro CLI sessions and database, Kiro IDE (1.0 and later) sessions.

Each on-disk generation has its own reader and dialect (``README.md`` beside this file says
which Kiro versions and formats are read and which are not yet):

* ``cli_sessions`` — ``~/.kiro/sessions/cli/<uuid>.jsonl`` + ``<uuid>.json``; dialects
  ``kiro-cli/1`` (``dialect_cli``) and ``kiro-cli-meta/1`` (``dialect_meta``);
* ``cli_database`` — ``conversations_v2`` rows of kiro-cli's ``data.sqlite3``, read-only;
  dialect ``kiro-cli-db/1`` (``dialect_db``), landed turn by turn by ``db_collector``;
* ``ide_sessions`` — ``~/.kiro/sessions/<bucket>/sess_<uuid>/messages.jsonl`` +
  ``session.json``; dialects ``kiro-ide/1`` (``dialect_ide``) and ``kiro-ide-meta/1``;
* ``legacy_stores`` — the IDE's stores from before 1.0, found and counted, not read.

``paths`` resolves where each lives, ``ids`` checks Kiro's id forms, ``placement`` decides each
unit's session and stream (claim), ``stream_owner`` keeps one source per stream, ``parts``
holds what the dialects share, ``gone`` finds the places whose sources were deleted (with
``landed_sessions``, the derived list of sessions this adapter has claimed), and ``adapter``
has the hooks.
"""
