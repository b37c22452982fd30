"""The append-cursor rules, end to end through the example ``jsonl`` adapter."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from asz_core.testing import PassRunner
from tests.helpers import jsonl_config, records_of, temp_files


def _line(n: int, pad: int = 40) -> bytes:
    return b'{"n":%d,"time":"2026-01-01T00:00:%02dZ","pad":"%s"}\n' % (n, n % 60, b"x" * pad)


@pytest.fixture
def source(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    return src


def _run(asz_pass: PassRunner, source: Path, **collector: object):  # type: ignore[no-untyped-def]
    asz_pass.configure(**jsonl_config(source, **collector))
    return asz_pass.run()


def _check_exact(root: Path, session: str, log: Path) -> list[int]:
    """Every landed record's off/bytes/sha against the source; returns the ords."""
    data = log.read_bytes()
    ords = []
    for _, record in records_of(root, session):
        raw = data[record.off:record.off + record.bytes]
        assert record.sha == hashlib.sha256(raw).hexdigest()[:12]
        assert data[record.off + record.bytes:record.off + record.bytes + 1] == b"\n"
        ords.append(record.ord)
    return ords


def test_lands_once_then_only_what_is_appended(asz_pass: PassRunner, source: Path, assert_root_verifies) -> None:
    log = source / "s1.jsonl"
    log.write_bytes(b"".join(_line(i) for i in range(1, 11)))
    first = _run(asz_pass, source)
    assert (first.totals.landed, first.totals.records, first.failed) == (1, 10, False)
    second = asz_pass.run()
    assert second.totals.landed == 0 and second.totals.records == 0
    with open(log, "ab") as f:
        f.write(_line(11) + _line(12) + b'{"n":13,"partial')  # the last line is being written
    third = asz_pass.run()
    assert third.totals.records == 2
    with open(log, "ab") as f:
        f.write(b'":1}\n')
    fourth = asz_pass.run()
    assert fourth.totals.records == 1
    assert _check_exact(asz_pass.root, "s1", log) == list(range(1, 14))
    assert_root_verifies(asz_pass.root)


def test_truncation_is_a_sticky_conflict_until_restored(asz_pass: PassRunner, source: Path,
                                                        assert_root_verifies) -> None:
    log = source / "s1.jsonl"
    original = b"".join(_line(i) for i in range(1, 6))
    log.write_bytes(original)
    _run(asz_pass, source)
    log.write_bytes(original[:50])
    for _ in range(2):
        summary = asz_pass.run()
        assert summary.totals.conflicts == 1 and summary.failed
    log.write_bytes(original + _line(6))
    summary = asz_pass.run()
    assert summary.totals.conflicts == 0 and summary.totals.records == 1 and not summary.failed
    assert_root_verifies(asz_pass.root)


def test_rewrite_in_place_with_the_same_size_is_a_conflict(asz_pass: PassRunner, source: Path) -> None:
    log = source / "s1.jsonl"
    log.write_bytes(_line(1) + _line(2))
    _run(asz_pass, source)
    log.write_bytes(_line(1).replace(b"x", b"y") + _line(2) + _line(3))
    summary = asz_pass.run()
    assert summary.totals.conflicts == 1 and summary.totals.records == 0


def test_a_new_inode_with_the_same_bytes_is_not_a_conflict(asz_pass: PassRunner, source: Path) -> None:
    log = source / "s1.jsonl"
    log.write_bytes(_line(1) + _line(2))
    _run(asz_pass, source)
    copy = source / "copy.tmp"
    copy.write_bytes(log.read_bytes() + _line(3))
    os.replace(copy, log)
    summary = asz_pass.run()
    assert summary.totals.conflicts == 0 and summary.totals.records == 1


def test_deleted_source_counts_gone_and_keeps_what_landed(asz_pass: PassRunner, source: Path) -> None:
    log = source / "s1.jsonl"
    log.write_bytes(_line(1))
    _run(asz_pass, source)
    other = source / "s2.jsonl"
    other.write_bytes(_line(1))
    asz_pass.run()
    # a session's only source gone: its session is no longer discovered, its files stay
    log.unlink()
    summary = asz_pass.run()
    assert not summary.failed
    assert len(records_of(asz_pass.root, "s1")) == 1


def test_files_are_cut_by_written_size_and_windows_are_bounded(asz_pass: PassRunner, source: Path,
                                                               assert_root_verifies) -> None:
    log = source / "s1.jsonl"
    log.write_bytes(b"".join(_line(i, pad=900) for i in range(1, 301)))
    summary = _run(asz_pass, source, max_delta_bytes=4096)
    assert summary.totals.landed == 65 and summary.totals.pending == 1 and summary.failed
    for path in (asz_pass.root / "s1" / "streams" / "main").glob("*.sd"):
        assert path.stat().st_size <= 4096
    while asz_pass.run().totals.pending:
        pass
    assert _check_exact(asz_pass.root, "s1", log) == list(range(1, 301))
    assert_root_verifies(asz_pass.root)


def test_a_record_too_large_lands_alone_reduced(asz_pass: PassRunner, source: Path, assert_root_verifies) -> None:
    log = source / "s1.jsonl"
    big = b'{"n":2,"shot":"' + b"A" * 20000 + b'"}\n'
    log.write_bytes(_line(1) + big + _line(3))
    summary = _run(asz_pass, source, max_delta_bytes=4096)
    assert summary.totals.records == 3 and summary.totals.landed == 3
    (_, record), = [(s, r) for s, r in records_of(asz_pass.root, "s1") if r.ord == 2]
    (part,) = record.parts
    assert part.state == "too_large" and part.data is None and part.bytes == len(big) - 1
    assert part.sha256 == hashlib.sha256(big[:-1]).hexdigest()
    assert_root_verifies(asz_pass.root)


def test_hostile_lines_land_as_unknown_parts(asz_pass: PassRunner, source: Path, assert_root_verifies) -> None:
    log = source / "s1.jsonl"
    lines = [b"not json at all", b'{"bad utf8":"\xff\xfe"}', b"{\x00}", b"[" * 10_000 + b"]" * 10_000, b""]
    log.write_bytes(b"\n".join(lines) + b"\n")
    summary = _run(asz_pass, source)
    assert summary.totals.records == len(lines)
    parts = [r.parts[0] for _, r in records_of(asz_pass.root, "s1")]
    assert [p.k for p in parts] == ["unknown"] * len(lines)
    assert [p.raw() for p in parts] == lines
    assert parts[1].encoding == "base64"
    assert_root_verifies(asz_pass.root)


def test_a_symlinked_source_is_not_read(asz_pass: PassRunner, source: Path) -> None:
    (source / "s1.jsonl").symlink_to("/etc/passwd")
    summary = _run(asz_pass, source)
    assert summary.totals.unreadable == 1 and summary.totals.records == 0
    assert not (asz_pass.root / "s1" / "streams").exists()


def test_dry_run_lands_nothing(asz_pass: PassRunner, source: Path) -> None:
    (source / "s1.jsonl").write_bytes(_line(1) + _line(2))
    asz_pass.configure(**jsonl_config(source))
    summary = asz_pass.run(dry_run=True)
    assert summary.totals.records == 2 and summary.dry_run
    assert not asz_pass.root.exists()
    assert asz_pass.run().totals.records == 2


def test_no_temporary_file_is_ever_left(asz_pass: PassRunner, source: Path) -> None:
    (source / "s1.jsonl").write_bytes(b"".join(_line(i, pad=900) for i in range(1, 40)))
    _run(asz_pass, source, max_delta_bytes=4096)
    assert temp_files(asz_pass.root) == []


def test_owner_only_modes(asz_pass: PassRunner, source: Path) -> None:
    (source / "s1.jsonl").write_bytes(_line(1))
    _run(asz_pass, source)
    for d, _, files in os.walk(asz_pass.root):
        assert os.stat(d).st_mode & 0o077 == 0, d
        for f in files:
            mode = os.stat(Path(d) / f).st_mode & 0o777
            assert mode & 0o077 == 0, (f, oct(mode))
            if f.endswith(".sd"):
                assert mode == 0o400
