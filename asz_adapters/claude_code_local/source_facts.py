"""What the ``claude-code/1`` dialect knows of a source before it reads a line of it.

Upstream converts each line by itself, told only what the file's path says: which kind of file it
is, the session and stream it lands in, and the workflow run it was filed under. Those are the
only facts beyond the line that a record's fields depend on (the kind decides the path a line
takes, ``from``, ``child`` and ``external_input``; the stream is a sidecar's ``child`` and, with
the session, names a ``changes/1`` record; the run is the ``batch`` of the records of every file
filed under a workflow run). So each source's dialect is made with them, and nothing else is carried from
line to line.
"""

from __future__ import annotations

from typing import NamedTuple

from asz_adapters.claude_code_local.discover import AGENT_META, JOURNAL, MANIFEST, SCRIPT, TRANSCRIPT

__all__ = ["AGENT_META", "JOURNAL", "MANIFEST", "SCRIPT", "TRANSCRIPT", "SourceFacts"]


class SourceFacts(NamedTuple):
    """The kind of a source file and where it lands, as its path says. A named tuple, not a frozen
    dataclass: every landing imports this module, and a dataclass compiles its generated methods
    at each import."""

    kind: str                #: ``transcript``, ``agent_meta``, ``journal``, ``workflow_manifest``, ``workflow_script``
    session: str             #: the session id
    stream: str = ""         #: ``main`` or the agent id (transcripts and sidecars); else empty
    run: str = ""            #: the workflow run the file is filed under; else empty

    @property
    def written_by_runtime(self) -> bool:
        """Every record of a sidecar, a journal, a manifest or a script is the runtime's."""
        return self.kind != TRANSCRIPT
