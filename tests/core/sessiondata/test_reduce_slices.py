"""A large text taken out of a record is measured and hashed in slices: the same size and digest
as its whole UTF-8 encoding, lone surrogates and slice boundaries inside pairs included."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asz_core.sessiondata import Part, Record, reduce_to_fit
from asz_core.sessiondata import reduce as reduce_module
from tests.helpers import examples


@pytest.fixture(autouse=True)
def tiny_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reduce_module, "_SLICE", 3)


@settings(max_examples=examples(100))
@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF, blacklist_categories=()),
               max_size=40))
def test_sliced_size_and_digest_are_those_of_the_whole(text: str) -> None:
    whole = text.encode("utf-8", "surrogatepass")
    assert reduce_module._utf8_size(text) == len(whole)
    part = Part("text", text=text)
    assert reduce_module._first_taken_digest(part) == hashlib.sha256(whole).hexdigest()


def test_a_record_too_large_keeps_the_digest_of_its_text() -> None:
    text = "é" * 500 + "\ud800" + "x" * 500
    record = Record(ord=1, off=0, bytes=10, sha="0" * 12, parts=[Part.text_part(text)])
    reduced, line = reduce_to_fit(record, 300)
    (part,) = reduced.parts
    assert part.state == "too_large" and part.text is None and len(line) <= 300
    assert part.sha256 == hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
