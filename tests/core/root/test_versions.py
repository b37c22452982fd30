"""The version rule: where an accepted rewrite lands, and which stream its records belong to."""

from __future__ import annotations

from pathlib import Path

import pytest

from asz_core.root.cursors import ACCEPTED, AppendCursor
from asz_core.root.versions import base_stream, version_of, version_place


@pytest.mark.parametrize(("place", "version", "expected"), [
    ("streams/main", 2, "streams/main.v2"),
    ("streams/main.v2", 3, "streams/main.v3"),
    ("streams/main.v7", 1, "streams/main"),
    ("runs/wf_1a2b", 2, "runs/wf_1a2b.v2"),
    ("streams/a0123456789abcdef", 12, "streams/a0123456789abcdef.v12"),
])
def test_a_version_lands_beside_its_first_place(place: str, version: int, expected: str) -> None:
    assert version_place(place, version) == expected
    assert version_of(expected) == version


@pytest.mark.parametrize(("stream", "base"), [
    ("main", "main"), ("main.v2", "main"), ("main.v10", "main"), ("acompact-1f.v3", "acompact-1f"),
    # not versions: version 1 has no suffix, and a number must be one
    ("main.v1", "main.v1"), ("main.v0", "main.v0"), ("main.v02", "main.v02"), ("main.vx", "main.vx"),
    (".v2", ".v2"), ("", ""),
])
def test_only_a_version_name_reads_as_its_first_stream(stream: str, base: str) -> None:
    assert base_stream(stream) == base


def test_a_cursor_writes_the_accept_keys_only_when_it_was_accepted(tmp_path: Path) -> None:
    path = tmp_path / "transcript.cursor"
    AppendCursor(source="p/s.jsonl", offset=10, ord=1).save(path)
    assert "next_version" not in path.read_text() and "accepted_at" not in path.read_text()
    AppendCursor(source="p/s.jsonl", state=ACCEPTED, next_version=2, accepted_at="2026-01-01T00:00:00Z").save(path)
    read = AppendCursor.read(path)
    assert read is not None and (read.state, read.next_version, read.accepted_at) == (
        ACCEPTED, 2, "2026-01-01T00:00:00Z")
