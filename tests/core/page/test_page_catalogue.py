"""The catalogue's list: read once, read again when a session's files change, and what it
counts on a hand-made session."""

from __future__ import annotations

from pathlib import Path

import pytest

from asz_core.assembly.parse import parse_root
from asz_core.page.catalogue import Catalogue, clip_utf8
from asz_core.page.errors import NotFound
from asz_core.sessiondata import Usage
from tests.core.page.page_helpers import PROMPT_WORD, hostile_session
from tests.core.view.view_helpers import SESSION, land, prompt, reply


def test_a_session_is_read_again_only_when_a_file_lands_in_it(tmp_path: Path) -> None:
    root = tmp_path / "root"
    hostile_session(root)
    catalogue = Catalogue(root)
    first = catalogue.digests()[0]
    assert first.streams == 1 and first.llm_calls == 1 and first.talks == 1
    catalogue._listed_at = float("-inf")
    assert catalogue.digests()[0] is first  # nothing landed: the same reading is kept
    land(root, {"child-1": [prompt(None, "sub task"), reply("call-2", usage=Usage(1, 2, 3, 4))]})
    catalogue._listed_at = float("-inf")
    again = catalogue.digests()[0]
    assert again is not first and again.streams == 2 and again.llm_calls == 2
    assert again.tokens() == {"in": 11, "out": 22, "cache_read": 33, "cache_write": 44}


def test_the_row_counts_what_the_session_holds(tmp_path: Path) -> None:
    root = tmp_path / "root"
    hostile_session(root)
    row = Catalogue(root).conversations()[0]
    assert row["id"] == SESSION and row["title"].startswith(PROMPT_WORD)
    assert (row["talks"], row["llm_calls"], row["subagents"], row["runtime"]) == (1, 1, 0, "test")
    assert row["tokens"] == {"in": 10, "out": 20, "cache_read": 30, "cache_write": 40}
    assert Catalogue(root).search(f"{PROMPT_WORD.upper()} heading") == [SESSION]
    assert Catalogue(root).search("system") == [SESSION]
    assert Catalogue(root, ["system_prompt"]).search("system") == []  # only the withheld record says it


def test_a_text_is_clipped_to_whole_characters_within_the_bound() -> None:
    assert clip_utf8("ab", 2) == "ab"
    assert clip_utf8("aé", 2) == "a"  # é is two bytes: half a character is never kept
    assert clip_utf8("x" * 3000) == "x" * 2000


def test_the_row_counts_the_rounds_of_the_conversations_chain(tmp_path: Path) -> None:
    root = tmp_path / "root"
    hostile_session(root)  # landed and parsed: one round
    catalogue = Catalogue(root)
    assert catalogue.conversations()[0]["rounds"] == 1
    rounds = root / "_conversations" / SESSION / "rounds"
    (rounds / "r000002-0123456789ab.sf").write_bytes(b"")
    catalogue.refresh()
    assert catalogue.conversations()[0]["rounds"] == 2  # a new round is seen without a new landed file


def test_a_conversation_not_parsed_yet_is_not_found_and_says_what_writes_its_rounds(tmp_path: Path) -> None:
    root = tmp_path / "root"
    land(root, {"main": [prompt("run-1", "hello"), reply("call-1")]})
    catalogue = Catalogue(root)
    assert [r["id"] for r in catalogue.conversations()] == [SESSION]  # listed from its landed files
    with pytest.raises(NotFound, match="asz-pipeline parse"):
        catalogue.document(SESSION, ())
    parse_root(root)
    built = catalogue.document(SESSION, ())
    assert built["format"] == "asz.view" and built["summary"]["rounds"] == 1  # a round written: built
    assert catalogue.document(SESSION, ()) is built  # kept for the next reader of the same names
    assert catalogue.document(SESSION, ("system_prompt",)) is not built
    land(root, {"child-1": [prompt(None, "sub task"), reply("call-2")]})
    parse_root(root)
    again = catalogue.document(SESSION, ())
    assert again is not built and again["summary"]["rounds"] == 2  # a file landed, a round written
