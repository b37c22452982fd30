"""The fold the Kiro dialects derive ids by: the state before a line is the same whether the
dialect saw every line before it or started there (a pass's first line), whatever the lines
before hold: JSON, lines that are not, lines longer than a line is read whole, lines that span
the chunks the source is read in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from asz_adapters.kiro import carried
from asz_adapters.kiro.carried import UNREADABLE, Carried, file_lines, list_lines
from asz_core.collect import SourceLine


def _step(state: tuple[str, ...], value: Any) -> tuple[str, ...]:
    """A fold that remembers everything, so any difference between the two paths shows."""
    return (*state, "?" if value is UNREADABLE else json.dumps(value))


def _lines() -> list[bytes]:
    return [b'{"a":1}', b"not json", b'{"long":"' + b"x" * 40 + b'"}', b'{"b":[1,2]}', b"",
            b'{"c":"' + b"y" * 15 + b'"}', b"[1", b'"s"', b'{"d":' + b"9" * 12 + b"}"]


@pytest.fixture
def small_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lines longer than 30 bytes count as too long, and the source is read 7 bytes at a time."""
    monkeypatch.setattr(carried, "READ_LIMIT", 30)
    monkeypatch.setattr(carried, "_CHUNK", 7)


def _places(lines: list[bytes]) -> list[SourceLine]:
    out, off = [], 0
    for i, raw in enumerate(lines, start=1):
        out.append(SourceLine(raw, i, off))
        off += len(raw) + 1
    return out


def test_a_file_fold_started_at_any_line_agrees_with_one_that_saw_every_line(tmp_path: Path, small_reads: None) -> None:
    lines = _lines()
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"".join(raw + b"\n" for raw in lines))
    places = _places(lines)
    seen: Carried[tuple[str, ...]] = Carried((), _step, file_lines(path))
    whole = [seen.around(line)[0] for line in places]
    assert "?" in whole[2] and '{"long": "' not in "".join(whole[-1])  # the long line is unreadable
    for cut in range(len(places)):
        fresh: Carried[tuple[str, ...]] = Carried((), _step, file_lines(path))
        assert [fresh.around(line)[0] for line in places[cut:]] == whole[cut:], cut


def test_a_fold_that_skips_lines_reads_them_from_the_source(tmp_path: Path, small_reads: None) -> None:
    """The collector keeps some lines from a dialect (not JSON, too long): the fold reads them."""
    lines = _lines()
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"".join(raw + b"\n" for raw in lines))
    places = _places(lines)
    every: Carried[tuple[str, ...]] = Carried((), _step, file_lines(path))
    whole = [every.around(line)[0] for line in places]
    skipping: Carried[tuple[str, ...]] = Carried((), _step, file_lines(path))
    kept = [i for i, line in enumerate(places) if line.is_json and len(line.raw) <= 30]
    assert [skipping.around(places[i])[0] for i in kept] == [whole[i] for i in kept]


def test_a_list_fold_started_at_any_item_agrees_with_one_that_saw_every_item() -> None:
    items = [b'{"a":1}', b'{"b":2}', b"not json", b'{"c":3}']
    places = _places(items)
    seen: Carried[tuple[str, ...]] = Carried((), _step, list_lines(items))
    whole = [seen.around(line)[0] for line in places]
    for cut in range(len(places)):
        fresh: Carried[tuple[str, ...]] = Carried((), _step, list_lines(items))
        assert fresh.around(places[cut])[0] == whole[cut]
