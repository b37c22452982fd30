"""Scenarios: a conversation described in YAML, built into the files a real session leaves, and
checked against what upstream's harness expects of it (``spec/upstream/guides/scenario.md``).

* :mod:`.model` reads and checks a scenario; :mod:`.plan` resolves it into timed records;
* :mod:`.write_claude_code` writes Claude Code's own files, :mod:`.bodies` its provider bodies,
  :mod:`.write_sd` lands Session Data under the ``mock/1`` dialect (:mod:`.records`), as upstream's writer lands it;
* :mod:`.build` is ``scenario build``; :mod:`.check` is ``scenario check``, with the expectation
  keys of :mod:`.expect` and the properties of :mod:`.properties`, each a registry a later
  module adds to (conversation assembly plugs its keys in there).
"""
