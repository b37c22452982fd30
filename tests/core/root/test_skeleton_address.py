"""Skeletons keep structure and no content; addresses resolve to records and parts."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import pytest

from asz_core.root.skeletons import land_skeleton
from asz_core.root.storage import landed_files
from asz_core.sessiondata import Header, Part, RawJSON, Record, SessionDataWriter, open_file, raw_json_of
from asz_core.sessiondata.address import Address, resolve
from asz_core.sessiondata.skeleton import Removal
from asz_core.sessiondata.writer import record_line
from asz_core.testing import run_sdcheck

MANIFEST = {"schema": "provider_body/1", "role": "request", "sha256": "ab" * 32, "bytes": 10,
            "segments": [{"lit": "{\"a\":"}, {"part": 0}, {"piece": "cd" * 32}, {"lit": "}"}]}
CHANGE = {"schema": "changes/1", "id": "c1", "tool": "toolu_1", "changed_files": 1, "window": {"x": 1},
          "changes": [{"path": "a.py", "additions": 2, "deletions": 1, "diff": "available", "hunks": ["@@"]}]}


def _landed(directory: Path, kind: str = "transcript") -> Path:
    directory.mkdir(parents=True)
    path = directory / f"{'transcript' if kind == 'transcript' else kind}-20260101T000000.000000000Z-000001.sd"
    with open(path, "wb") as f:
        writer = SessionDataWriter(f, Header(kind=kind, session="s", src="x.jsonl", dialect="t/1",
                                             adapter="t/1", seq=1, at="2026-01-01T00:00:00Z",
                                             stream="main" if kind == "transcript" else None))
        writer.write(*record_line(Record(ord=1, off=0, bytes=5, sha="aaaaaaaaaaaa", id="r1", call="msg_1",
                                         from_="agent",
                            time="2026-01-01T00:00:01Z", flags=["finished"],
                            parts=[Part.text_part("secret words"),
                                   Part.call("toolu_1", "mcp__gh__issue", RawJSON(b'{"q":"secret"}')),
                                   Part.result("toolu_1", text="out", failed=True),
                                   Part.data_part(raw_json_of(CHANGE)),
                                   Part.data_part(raw_json_of({"schema": "execution/1", "id": "e", "tool": "t",
                                                              "sent": "secret"})),
                                   Part(k="data", state="too_large", bytes=99, sha256="ef" * 32),
                                   Part.data_part(raw_json_of(MANIFEST))])))
        writer.close()
    path.chmod(0o400)
    return path


def test_a_skeleton_keeps_structure_and_no_content(tmp_path: Path) -> None:
    landed = _landed(tmp_path / "s" / "streams" / "main")
    skeleton = land_skeleton(landed, Removal(at="2026-10-13T10:00:00Z", receiver="accepted", owner="me@laptop"))
    assert skeleton.name.endswith("-000001.sk") and skeleton.stat().st_mode & 0o777 == 0o400
    assert b"secret" not in gzip.decompress(skeleton.read_bytes())
    reader = open_file(skeleton)
    removed = reader.header["removed"]
    assert removed == {"digest": hashlib.sha256(landed.read_bytes()).hexdigest(), "size": landed.stat().st_size,
                       "records": 1, "at": "2026-10-13T10:00:00Z", "generation": 1, "receiver": "accepted",
                       "owner": "me@laptop"}
    (record,) = list(reader)
    original = next(iter(open_file(landed)))
    assert (record.id, record.call, record.flags, record.time, record.sha) == ("r1", "msg_1", ["finished"],
                                                                               original.time, None)
    text, call, result, change, execution, too_large, manifest = record.parts
    assert text.state == "removed" and text.text is None and text.bytes == original.parts[0].bytes
    assert (call.id, call.name, call.server, call.server_tool, call.data) == ("toolu_1", "mcp__gh__issue", "gh",
                                                                              "issue", None)
    assert call.sha256 == hashlib.sha256(b'{"q":"secret"}').hexdigest()
    assert result.of == "toolu_1" and result.failed is True
    assert change.value()["changes"] == [{"path": "a.py", "additions": 2, "deletions": 1, "diff": "unavailable"}]
    assert "window" not in change.value()
    assert execution.value() == {"schema": "execution/1", "id": "e", "tool": "t"}
    assert too_large.state == "too_large" and too_large.sha256 == "ef" * 32
    assert manifest.value()["segments"] == [{"part": 0}, {"piece": "cd" * 32}]


def test_a_skeleton_is_read_like_a_landed_file_and_sdcheck_accepts_it(tmp_path: Path) -> None:
    landed = _landed(tmp_path / "s" / "streams" / "main")
    land_skeleton(landed, Removal(at="2026-10-13T10:00:00Z"))
    landed.chmod(0o600)
    landed.unlink()
    verdict = run_sdcheck(tmp_path)
    if verdict is not None:
        assert verdict["ok"], verdict["problems"]
    with pytest.raises(FileExistsError):
        skeleton_again = _landed(tmp_path / "t" / "streams" / "main")
        land_skeleton(skeleton_again, Removal(at="x"))
        land_skeleton(skeleton_again, Removal(at="x"))


def test_a_provider_body_skeleton_keeps_sha(tmp_path: Path) -> None:
    landed = _landed(tmp_path / "s" / "provider_body", kind="provider_body")
    skeleton = land_skeleton(landed, Removal(at="2026-10-13T10:00:00Z"))
    assert next(iter(open_file(skeleton))).sha == "aaaaaaaaaaaa"


def test_addresses_resolve_to_records_and_parts(tmp_path: Path) -> None:
    _landed(tmp_path / "s" / "streams" / "main")
    files = sorted(landed_files(tmp_path / "s"))
    record = resolve(files, Address.parse("1:1"))
    assert isinstance(record, Record) and record.id == "r1"
    part = resolve(files, Address.parse("1:1:1"))
    assert isinstance(part, Part) and part.name == "mcp__gh__issue"
    for missing in ("2:1", "1:2", "1:1:9"):
        with pytest.raises(LookupError):
            resolve(files, Address.parse(missing))
    for bad in ("0:1", "1", "a:b", "1:0"):
        with pytest.raises(ValueError):
            Address.parse(bad)
