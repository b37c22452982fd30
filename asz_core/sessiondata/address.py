"""Addressing: ``{seq, row}`` names a record, ``{seq, row, block}`` one of its parts.

``seq`` is the landed file's header seq (one counter per session), ``row`` the record's line
after the header counting from 1, ``block`` the part's index from 0. They stay valid because a
landed file is never rewritten.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from asz_core.sessiondata.model import Part, Record
from asz_core.sessiondata.reader import open_file

__all__ = ["Address", "resolve"]

_TEXT = re.compile(r"(\d+):(\d+)(?::(\d+))?")  # matched whole


@dataclass(frozen=True)
class Address:
    seq: int
    row: int
    block: int | None = None

    @classmethod
    def parse(cls, text: str) -> Address:
        """``SEQ:ROW`` or ``SEQ:ROW:BLOCK``."""
        m = _TEXT.fullmatch(text.strip())
        if m is None or int(m.group(1)) < 1 or int(m.group(2)) < 1:
            raise ValueError(f"{text!r} is not SEQ:ROW or SEQ:ROW:BLOCK (seq and row count from 1)")
        return cls(int(m.group(1)), int(m.group(2)), int(m.group(3)) if m.group(3) else None)

    def __str__(self) -> str:
        return f"{self.seq}:{self.row}" + (f":{self.block}" if self.block is not None else "")


def _file_with_seq(files: list[tuple[int, Path]], seq: int) -> Path:
    for found, path in files:
        if found == seq:
            return path
    raise LookupError(f"no landed file with seq {seq}")


def resolve(files: list[tuple[int, Path]], address: Address) -> Record | Part:
    """The record (or part) at ``address`` among a session's landed ``(seq, path)`` files.

    ``LookupError`` when nothing is there; ``SessionDataError`` when the file does not read.
    """
    path = _file_with_seq(files, address.seq)
    with open_file(path) as landed:
        for row, record in enumerate(landed, start=1):
            if row == address.row:
                if address.block is None:
                    return record
                if not 0 <= address.block < len(record.parts):
                    raise LookupError(f"record {address.seq}:{address.row} has no part {address.block}")
                return record.parts[address.block]
    raise LookupError(f"file seq {address.seq} has no row {address.row}")

