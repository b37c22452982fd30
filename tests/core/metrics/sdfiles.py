"""Session Data files written by the landing itself, with the calls a metrics test needs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from asz_core.root.landing import LandingFile
from asz_core.sessiondata.model import Header, Part, Record, Usage
from asz_core.sessiondata.writer import record_line

SESSION = "11111111-2222-4333-8444-555555555555"


@dataclass(frozen=True)
class Fragment:
    call: str
    time: str
    usage: tuple[int, int, int, int] | None = None
    finished: bool = False
    model: str = "claude-test-1"


def land(root: Path, seq: int, stream: str, fragments: list[Fragment | str], *,
         dialect: str = "claude-code/2.1.0", session: str = SESSION, kind: str = "transcript") -> Path:
    """A landed file of ``stream``: a :class:`Fragment` is an assistant record of its call; a
    string is a user record at that time (no call)."""
    subdir = f"streams/{stream}"
    header = Header(kind=kind, session=session, src="test.jsonl", dialect=dialect, adapter="test/1",
                    seq=seq, stream=stream)
    landing = LandingFile(root, session, subdir, header, f"20260101T000000.{seq:09d}Z")
    for i, f in enumerate(fragments):
        if isinstance(f, str):
            landing.write(*record_line(Record(ord=i, time=f, from_="user", parts=[Part.text_part("go on")])))
            continue
        usage = Usage(*f.usage) if f.usage is not None else None
        landing.write(*record_line(Record(ord=i, id=f"r{seq}-{i}", call=f.call, time=f.time, from_="assistant",
                             flags=["finished"] if f.finished else [], usage=usage, model=f.model,
                             parts=[Part.text_part("ok")])))
    landed = landing.commit()
    return landed.path
