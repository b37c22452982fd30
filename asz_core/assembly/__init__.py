"""Conversation assembly: landed Session Data → Session Flow rounds (``sf/1``).

It reads only Session Data — the roles, flags, triggers, links and parts the format names — so
every adapter's sessions assemble by the same rules. :mod:`.evidence` reads a session's landed
files, :mod:`.assemble` runs the eight stages over them, :mod:`.flow` is the round format and
the fold, :mod:`.chain` the chain on disk, :mod:`.parse` appends a round, :mod:`.chaincheck`
is what ``verify`` checks of every chain.
"""
