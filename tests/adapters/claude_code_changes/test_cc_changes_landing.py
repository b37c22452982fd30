"""``changes``: the plugin's change files land byte for byte under upstream's header,
and every bad input is named and counted."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import orjson

from asz_core.sessiondata import open_file
from asz_core.testing import PassRunner

SESSION = "00000001-0000-4000-8000-0000000000aa"
AGENT = "a0123456789abcdef"
PLUGIN_DIR = "file-changes-inline"


def change(tool_id: str, *, stream: str = "main", workspace: str = "/Users/dev/project", **extra: object) -> bytes:
    record: dict[str, object] = {
        "schema": "changes/1", "id": tool_id, "captured_by": "asz-plugin", "session": SESSION, "stream": stream,
        "tool": tool_id, "tool_name": "Bash", "time": "2026-01-01T00:00:02.000Z", "basis": "tool_window",
        "root": {"path": workspace}, "coverage": "complete", "changed_files": 1,
        "changes": [{"path": "a.txt", "operation": "create", "before": {"present": False, "bytes": None},
                     "after": {"present": True, "bytes": 2, "sha256": "ab"}, "diff": "available",
                     "additions": 1, "deletions": 0,
                     "hunks": [{"old_start": 0, "old_lines": 0, "new_start": 1, "new_lines": 1, "lines": ["+a <b>"]}]}],
    }
    record.update(extra)
    return orjson.dumps(record)


def write(source: Path, stream: str, data: bytes, *, plugin: str = PLUGIN_DIR, session: str = SESSION) -> Path:
    path = source / plugin / "output" / session / f"{stream}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def configure(asz_pass: PassRunner, source: Path, **options: object) -> None:
    asz_pass.configure(adapters=[{"name": "changes", "source_root": str(source), "exclude": [],
                                  **options}])


def landed(root: Path, stream: str = "main") -> list[tuple[dict[str, object], list[object]]]:
    out = []
    for path in sorted((root / SESSION / "streams" / stream).glob("changes-*.sd")):
        with open_file(path) as f:
            out.append((dict(f.header), list(f)))
    return out


def test_each_change_record_lands_whole_under_its_stream_with_upstreams_header(
        asz_pass: PassRunner, tmp_path: Path, assert_root_verifies: Callable[[Path], None],
        assert_lands_known_parts: Callable[[Path], None]) -> None:
    source = tmp_path / "plugins" / "data"
    main_lines = [change("toolu_1"), change("toolu_2", time="2026-01-01T00:00:03.000Z")]
    write(source, "main", b"".join(line + b"\n" for line in main_lines))
    write(source, AGENT, change("toolu_3", stream=AGENT) + b"\n")
    configure(asz_pass, source)

    summary = asz_pass.run()

    assert (summary.totals.landed, summary.totals.records, summary.failed) == (2, 3, False)
    [(header, records)] = landed(asz_pass.root)
    assert {k: header[k] for k in ("kind", "adapter", "dialect", "src", "session", "stream")} == {
        "kind": "changes", "adapter": "changes/0.1.0", "dialect": "asz-changes/1",
        "src": f"{PLUGIN_DIR}/output/{SESSION}/main.jsonl", "session": SESSION, "stream": "main"}
    assert [(r.id, r.tool, r.time, r.from_, r.flags) for r in records] == [
        ("toolu_1", "toolu_1", "2026-01-01T00:00:02.000Z", None, []),
        ("toolu_2", "toolu_2", "2026-01-01T00:00:03.000Z", None, [])]
    off = 0
    for record, line in zip(records, main_lines, strict=True):
        [part] = record.parts
        assert (part.k, bytes(part.data), part.bytes, record.off, record.bytes) == ("data", line, len(line), off,
                                                                                    len(line))
        off += len(line) + 1
    [(agent_header, _)] = landed(asz_pass.root, AGENT)
    assert agent_header["stream"] == AGENT
    assert (asz_pass.root / SESSION / "streams" / "main" / "changes.cursor").is_file()
    assert_root_verifies(asz_pass.root)
    assert_lands_known_parts(asz_pass.root)


def test_a_line_that_is_not_a_change_record_lands_whole_as_an_unknown_part_named_and_counted(
        asz_pass: PassRunner, tmp_path: Path, assert_root_verifies: Callable[[Path], None]) -> None:
    source = tmp_path / "data"
    lines = [
        b"not json at all",
        b'{"schema":"execution/1","id":"x"}',
        change("toolu_1", id=""),
        change("toolu_2", changed_files="one"),
        change("toolu_3", changed_files=2 ** 63),
        change("toolu_4", tool=None, basis="tool_window"),
        change("toolu_5", changes=[{"path": "a.txt", "operation": "modify"}]),
    ]
    write(source, "main", b"".join(line + b"\n" for line in lines))
    configure(asz_pass, source)

    summary = asz_pass.run()

    assert summary.by_adapter["changes"].unreadable == len(lines)
    assert summary.fields()["changes_unreadable"] == len(lines)
    assert not summary.failed  # nothing is lost: every line landed
    [(_, records)] = landed(asz_pass.root)
    reasons = []
    for record, line in zip(records, lines, strict=True):
        [part] = record.parts
        assert (part.k, part.raw(), record.id) == ("unknown", line, None)
        reasons.append(part.text)
    not_a_record = "the line is not a changes/1 record"
    assert reasons == [not_a_record, not_a_record, "changes: record has no id", not_a_record, not_a_record,
                       "changes: an attributed record names its tool", "changes: a.txt says nothing about its diff"]
    warnings = "\n".join(asz_pass.reporter.warnings)
    for number in range(1, len(lines) + 1):
        assert f"main.jsonl line {number}: " in warnings
    assert_root_verifies(asz_pass.root)


def test_a_record_is_read_as_upstreams_decoder_reads_it_keys_in_any_case_and_unknown_fields_passed_over(
        asz_pass: PassRunner, tmp_path: Path) -> None:
    source = tmp_path / "data"
    line = change("toolu_1", ID="toolu_upper", Time="2026-01-01T00:00:09.000Z", extra={"anything": [1, 2]})
    write(source, "main", line + b"\n")
    configure(asz_pass, source)

    asz_pass.run()

    [(_, [record])] = landed(asz_pass.root)
    assert (record.id, record.time, record.parts[0].k) == ("toolu_upper", "2026-01-01T00:00:09.000Z", "data")


def test_an_unfinished_last_line_waits_and_lands_once_it_is_complete(asz_pass: PassRunner, tmp_path: Path) -> None:
    source = tmp_path / "data"
    first, second = change("toolu_1"), change("toolu_2")
    path = write(source, "main", first + b"\n" + second[:40])
    configure(asz_pass, source)

    summary = asz_pass.run()
    assert summary.totals.records == 1

    with path.open("ab") as f:
        f.write(second[40:] + b"\n")
    summary = asz_pass.run()

    assert (summary.totals.records, summary.totals.conflicts) == (1, 0)
    assert [r.id for _, records in landed(asz_pass.root) for r in records] == ["toolu_1", "toolu_2"]


def test_a_change_file_cut_short_after_it_landed_is_a_conflict_and_lands_nothing_more(
        asz_pass: PassRunner, tmp_path: Path) -> None:
    source = tmp_path / "data"
    path = write(source, "main", change("toolu_1") + b"\n" + change("toolu_2") + b"\n")
    configure(asz_pass, source)
    asz_pass.run()

    path.write_bytes(change("toolu_1") + b"\n")
    summary = asz_pass.run()

    assert (summary.totals.conflicts, summary.totals.records, summary.failed) == (1, 0, True)
    assert sum(len(records) for _, records in landed(asz_pass.root)) == 2


def test_two_plugin_directories_holding_one_stream_are_a_conflict_and_neither_lands(
        asz_pass: PassRunner, tmp_path: Path) -> None:
    source = tmp_path / "data"
    write(source, "main", change("toolu_1") + b"\n", plugin="asz-changes-one")
    write(source, "main", change("toolu_2") + b"\n", plugin="asz-changes-two")
    write(source, AGENT, change("toolu_3", stream=AGENT) + b"\n", plugin="asz-changes-two")
    configure(asz_pass, source)

    summary = asz_pass.run()

    assert (summary.totals.conflicts, summary.totals.records) == (2, 1)
    assert landed(asz_pass.root) == []
    assert [r.id for _, records in landed(asz_pass.root, AGENT) for r in records] == ["toolu_3"]
    assert any("would land behind one cursor" in w and "move" in w for w in asz_pass.reporter.warnings)


def test_a_link_is_never_followed_and_is_counted_unreadable(asz_pass: PassRunner, tmp_path: Path) -> None:
    source = tmp_path / "data"
    elsewhere = write(tmp_path / "elsewhere", "main", change("toolu_1") + b"\n")
    linked_file = source / PLUGIN_DIR / "output" / SESSION / "main.jsonl"
    linked_file.parent.mkdir(parents=True)
    linked_file.symlink_to(elsewhere)
    other_session = "00000001-0000-4000-8000-0000000000bb"
    (source / PLUGIN_DIR / "output" / other_session).symlink_to(elsewhere.parent)
    (source / "asz-changes-linked").symlink_to(tmp_path / "elsewhere" / PLUGIN_DIR)
    configure(asz_pass, source)

    summary = asz_pass.run()

    assert (summary.fields()["changes_unreadable"], summary.totals.records) == (3, 0)
    assert sum("a link; it is not followed" in w for w in asz_pass.reporter.warnings) == 3


def test_what_the_plugin_did_not_write_is_passed_over(asz_pass: PassRunner, tmp_path: Path) -> None:
    source = tmp_path / "data"
    write(source, "main", change("toolu_1") + b"\n", plugin="another-plugin")
    write(source, "main", change("toolu_1") + b"\n", session="not-a-session")
    write(source, "notes", change("toolu_1") + b"\n")
    write(source, "agent-x", change("toolu_1") + b"\n")
    configure(asz_pass, source)

    summary = asz_pass.run()

    assert (summary.totals.found, summary.totals.records, summary.fields()["changes_unreadable"]) == (1, 0, 0)
    assert not (asz_pass.root / SESSION).exists()


def test_include_and_exclude_judge_the_workspace_the_first_record_names(asz_pass: PassRunner, tmp_path: Path) -> None:
    source = tmp_path / "data"
    kept, left = SESSION, "00000001-0000-4000-8000-0000000000cc"
    write(source, "main", change("toolu_1", workspace="/work/kept") + b"\n", session=kept)
    write(source, "main", change("toolu_2", workspace="/private/tmp/scratch") + b"\n", session=left)
    configure(asz_pass, source, exclude=["/private/tmp/**"])

    summary = asz_pass.run()

    assert summary.totals.records == 1
    assert (asz_pass.root / kept).is_dir() and not (asz_pass.root / left).exists()


def test_a_pass_with_nothing_new_lands_nothing_and_reads_no_change_file(asz_pass: PassRunner, tmp_path: Path) -> None:
    source = tmp_path / "data"
    path = write(source, "main", change("toolu_1") + b"\n")
    configure(asz_pass, source)
    asz_pass.run()
    asz_pass.run()  # the pass that finds it landed to its end notes it settled
    # the same size, inode and times, other bytes: a pass that read it would find it rewritten
    before = path.stat()
    with path.open("r+b") as f:
        f.write(b"X")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))

    summary = asz_pass.run()

    assert (summary.totals.landed, summary.totals.conflicts, summary.totals.sessions) == (0, 0, 1)


def test_the_plugins_directory_absent_is_nothing_to_do(asz_pass: PassRunner, tmp_path: Path) -> None:
    asz_pass.configure(adapters=[{"name": "changes", "source_root": str(tmp_path / "missing")}])

    summary = asz_pass.run()

    assert (summary.totals.found, summary.failed) == (0, False)
    assert any("not a directory" in w for w in asz_pass.reporter.warnings)


def test_a_session_whose_first_record_is_unfinished_is_judged_once_it_is_complete(
        asz_pass: PassRunner, tmp_path: Path) -> None:
    source = tmp_path / "data"
    line = change("toolu_1", workspace="/private/tmp/scratch")
    path = write(source, "main", line[:30])
    configure(asz_pass, source, exclude=["/private/tmp/**"])

    first = asz_pass.run()
    with path.open("ab") as f:
        f.write(line[30:] + b"\n")
    second = asz_pass.run()

    assert (first.totals.sessions, first.totals.records) == (1, 0)  # no workspace yet: collected, nothing lands
    assert (second.totals.sessions, second.totals.records) == (0, 0)  # its workspace is excluded
    assert not list((asz_pass.root / SESSION).rglob("changes-*.sd"))
