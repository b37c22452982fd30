"""The reader, fuzzed with mutated landed lines: it decodes them or raises SessionDataError."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asz_core.sessiondata import SessionDataError, decode_record, read_records
from asz_core.testing import PassRunner
from tests.helpers import examples


@pytest.fixture(scope="module")
def landed_lines(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    """Record lines of real landed files: a corpus session landed by claude-code-local, and the
    upstream writer's file."""
    work = tmp_path_factory.mktemp("fuzz")
    runner = PassRunner(work, work / "root")
    slug = "-home-marco-projects-spotter"
    runner.configure(adapters=[{"name": "claude-code-local", "exclude": [],
                                "source_root": str(corpus / "claude-code" / "projects"),
                                "include": [slug]}])
    runner.run()
    lines = []
    for path in [*sorted(runner.root.rglob("*.sd")),
                 corpus / "upstream/tests/chain/testdata/mixed-encoding/released-writer.sd"]:
        lines.extend(path.read_bytes().split(b"\n")[1:-2])
        list(read_records(path))  # each reads whole before it is mutated
    assert len(lines) > 20
    return lines


@st.composite
def mutations(draw: st.DrawFn, lines: list[bytes]) -> bytes:
    line = bytearray(draw(st.sampled_from(lines)))
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, max(0, len(line) - 1)))
        op = draw(st.sampled_from(["flip", "cut", "insert", "splice"]))
        if op == "flip" and line:
            line[at] ^= 1 << draw(st.integers(0, 7))
        elif op == "cut" and line:
            del line[at:at + draw(st.integers(1, 40))]
        elif op == "insert":
            line[at:at] = draw(st.sampled_from([b"[", b"{", b'"', b"\\", b"1e400", b"null", b"\xff", b"\x00",
                                                b'"ord":-1,', b'"parts":[{"k":1}],', b"9" * 30]))
        else:
            other = draw(st.sampled_from(lines))
            line[at:] = other[draw(st.integers(0, len(other))):]
    return bytes(line)


def test_only_the_readers_own_error_escapes(landed_lines: list[bytes]) -> None:
    @given(mutations(landed_lines))
    @settings(max_examples=examples(2000))
    def fuzz(line: bytes) -> None:
        with contextlib.suppress(SessionDataError):
            record = decode_record(line)
            for part in record.parts:  # reading what decoded raises nothing else either
                if part.k == "unknown" and part.data is not None:
                    with contextlib.suppress(ValueError):
                        part.raw()
    fuzz()
