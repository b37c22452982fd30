"""Ids and names are matched whole: ``$`` would also match before a trailing newline, so an id
with a line break would name a directory (or split a state file's line)."""

from __future__ import annotations

import pytest

from asz_adapters.claude_code_local.ids import agent_id, is_session_id, run_id
from asz_adapters.kiro.ids import is_cli_session_id, is_ide_session_id
from asz_core.root.layout import RefusedId, check_id, check_kind, parse_file_name

UUID = "0b6f3c2e-6a59-4a57-9d0e-1f2a3b4c5d6e"


def test_a_trailing_newline_is_no_part_of_an_id() -> None:
    assert check_id(UUID, "session id") == UUID
    for bad in (UUID + "\n", "s1\n", "s1\r\n"):
        with pytest.raises(RefusedId):
            check_id(bad, "session id")
    with pytest.raises(RefusedId):
        check_kind("transcript\n")
    assert parse_file_name("transcript-20260101T000000Z-000001.sd") is not None
    assert parse_file_name("transcript-20260101T000000Z-000001.sd\n") is None
    assert is_cli_session_id(UUID) and not is_cli_session_id(UUID + "\n")
    assert is_ide_session_id(f"sess_{UUID}") and not is_ide_session_id(f"sess_{UUID}\n")
    assert is_session_id(UUID) and not is_session_id(UUID + "\n")
    for parse, good in ((agent_id, "abcdef1"), (run_id, "wf_abc")):
        assert parse(good) == good
        with pytest.raises(RefusedId):
            parse(good + "\n")

