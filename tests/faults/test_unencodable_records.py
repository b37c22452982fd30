"""A record no writer can land fails nothing: it lands as its line would if it did not decode.

An integer past 64 bits in ``message.usage`` (on a line that also holds a lone surrogate or
``1e400``, so the fast parser hands the line to the exact one, which keeps the integer whole)
used to raise in the encoder, and nothing of the session landed, every pass. Upstream's decoder
cannot hold such a number in its typed field, so the whole line does not decode and lands as one
unknown part with its bytes: that is what lands here too.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from asz_core.collect.source import SourceLine, convert_encoded
from asz_core.sessiondata import RecordFields, Usage, decode_record, record, token_usage, unknown_part
from asz_core.testing import PassRunner
from tests.helpers import records_of

SLUG = "-Users-ingo-projects-irrlicht--claude-worktrees-228"
SESSION = "ef21e42a-0206-4578-8b08-8a767d47f5fd"

HUGE_USAGE = [
    b'{"type":"assistant","uuid":"u-big","message":{"id":"m1","role":"assistant","model":"x","content":'
    b'[{"type":"text","text":"\\ud800"}],"usage":{"input_tokens":1180591620717411303424,"output_tokens":1}}}',
    b'{"type":"assistant","uuid":"u-big","message":{"id":"m1","role":"assistant","model":"x","content":'
    b'[{"type":"text","text":"hi"}],"usage":{"input_tokens":-18446744073709551617}},"n":1e400}',
]


@pytest.fixture
def projects(corpus: Path, tmp_path: Path) -> Path:
    target = tmp_path / "projects" / SLUG
    target.mkdir(parents=True)
    shutil.copyfile(corpus / "claude-code" / "projects" / SLUG / f"{SESSION}.jsonl", target / f"{SESSION}.jsonl")
    return tmp_path / "projects"


def _pass(asz_pass: PassRunner, projects: Path):  # type: ignore[no-untyped-def]
    asz_pass.configure(adapters=[{"name": "claude-code-local", "source_root": str(projects), "exclude": []}])
    return asz_pass.run()


@pytest.mark.parametrize("line", HUGE_USAGE, ids=["lone surrogate", "1e400"])
def test_a_usage_count_past_64_bits_lands_the_line_as_an_unknown_part_and_the_session_lands(
        line: bytes, asz_pass: PassRunner, projects: Path, assert_root_verifies) -> None:  # type: ignore[no-untyped-def]
    transcript = projects / SLUG / f"{SESSION}.jsonl"
    good = b'{"type":"system","subtype":"turn_duration","durationMs":5,"uuid":"u-after"}'
    with open(transcript, "ab") as f:
        f.write(line + b"\n" + good + b"\n")
    first = _pass(asz_pass, projects)
    assert not first.failed and first.totals.errors == 0 and first.totals.records > 2
    *_, bad, after = [r for _, r in records_of(asz_pass.root, SESSION)]
    assert [p.k for p in bad.parts] == ["unknown"] and bad.parts[0].raw() == line
    assert (bad.bytes, bad.usage) == (len(line), None)
    assert after.id == "u-after"
    again = asz_pass.run()
    assert not again.failed and again.totals.records == 0
    assert_root_verifies(asz_pass.root)


class _Numbers:
    """A dialect that copies a number into usage whatever its size, and reads lines that are
    not JSON itself, as a dialect may (``reads_non_json``)."""

    name = "numbers/1"
    reads_non_json = True

    def convert(self, line: SourceLine) -> RecordFields:
        if not line.is_json:
            return record(from_="runtime", flags=["seen"], parts=[unknown_part(line.raw, f"unread: {line.error}")])
        return record(id="n", usage=token_usage(in_=line.value["n"]))


def test_a_record_that_cannot_be_encoded_is_the_dialects_record_for_a_line_that_does_not_decode() -> None:
    raw = b'{"n":%d,"s":"\\udfff"}' % 2**64
    encoded, why = convert_encoded(_Numbers(), SourceLine(raw, 4, 100))
    assert why is not None and "64-bit" in why
    landed = decode_record(encoded[0])
    assert encoded[1:] == (4, 100, len(raw), None, None, None)
    assert (landed.ord, landed.off, landed.bytes, landed.from_, landed.flags) == (4, 100, len(raw), "runtime", ["seen"])
    assert landed.parts[0].raw() == raw and landed.parts[0].text == f"unread: {why}"
    fine = b'{"n":%d}' % (2**63 - 1)
    encoded, why = convert_encoded(_Numbers(), SourceLine(fine, 1, 0))
    assert why is None and decode_record(encoded[0]).usage == Usage(in_=2**63 - 1) and encoded[5] == "n"


def test_a_line_whose_data_would_nest_too_deep_inside_its_record_lands_as_an_unknown_part(
        asz_pass: PassRunner, projects: Path, assert_root_verifies) -> None:  # type: ignore[no-untyped-def]
    """255 levels read alone; the whole line as a part's data sits three levels deeper, more
    than a reader reads (256)."""
    transcript = projects / SLUG / f"{SESSION}.jsonl"
    line = b'{"type":"system","uuid":"u-deep","x":' + b"[" * 254 + b"]" * 254 + b"}"
    with open(transcript, "ab") as f:
        f.write(line + b"\n")
    summary = _pass(asz_pass, projects)
    assert not summary.failed
    deep = [r for _, r in records_of(asz_pass.root, SESSION)][-1]
    assert [p.k for p in deep.parts] == ["unknown"] and deep.parts[0].raw() == line
    assert_root_verifies(asz_pass.root)


def test_a_large_line_whose_record_cannot_be_encoded_lands_as_its_size_and_digest() -> None:
    """A line larger than a file is let go of once its record is built; should that record not
    encode, what lands is what reduction leaves of an unknown part of its bytes."""
    raw = b'{"n":%d,"s":"\\udfff","pad":"%s"}' % (2**64, b"p" * 5000)
    line = SourceLine(raw, 2, 10)
    encoded, why = convert_encoded(_Numbers(), line, larger_than=4096)
    assert why is not None and line.raw == b""  # the bytes were let go of
    landed = decode_record(encoded[0])
    (part,) = landed.parts
    assert (landed.ord, landed.off, landed.bytes, landed.sha) == (2, 10, len(raw), hashlib.sha256(raw).hexdigest()[:12])
    assert (part.k, part.state, part.bytes, part.sha256, part.data) == (
        "unknown", "too_large", len(raw), hashlib.sha256(raw).hexdigest(), None)
    assert encoded[1:] == (2, 10, len(raw), None, None, None)
