"""A pass over the shared Claude Code corpus: every session lands, whole and exact.

One pass lands the corpus into a root shared by this module's tests (landing is the slow part);
tests that change sources work on copies elsewhere. The default lane lands the small corpus
(``small_corpus``: fifteen sessions, one with twelve subagents), whose sessions show every rule
here; ``--slow`` lands all 62 as well.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from cc_helpers import ADAPTER, source_files

from asz_adapters.claude_code_provider.transcripts import Transcripts
from asz_core.cli.app import App
from asz_core.cli.main import main
from asz_core.context import PassSummary
from asz_core.root.index import SessionIndex
from asz_core.root.storage import landed_files
from asz_core.sessiondata import Record, open_file
from asz_core.testing import PassRunner

pytestmark = pytest.mark.corpus

#: each landed file of the corpus by its source and number: the SHA-256 of its header without its
#: landing time, and of its record lines, as this code landed them when the manifest was written
DIGESTS = Path(__file__).with_name("corpus_digests.json")


#: what each corpus holds: (sessions, records, landed files), the small one's and the whole one's
SIZES = {False: (15, 609, 27), True: (62, 10_131, 87)}


class Landed:
    """The corpus landed once: the runner, the first pass's summary, and every landed record."""

    def __init__(self, runner: PassRunner, projects: Path, summary: PassSummary, whole: bool) -> None:
        self.runner, self.projects, self.summary, self.whole = runner, projects, summary, whole
        self.sessions, self.records, self.files = SIZES[whole]
        self.root = runner.root
        #: src → [(header, record), ...] in landed order (seq, then row)
        self.by_src: dict[str, list[tuple[dict[str, object], Record]]] = defaultdict(list)
        for session in sorted(p.name for p in self.root.iterdir() if p.is_dir() and not p.name.startswith("_")):
            for _, path in sorted(landed_files(self.root / session)):
                with open_file(path) as reader:
                    header = reader.header
                    for record in reader:
                        self.by_src[str(header["src"])].append((header, record))


# the whole corpus's landing costs seconds of CPU, and the small corpus's sessions show each rule
@pytest.fixture(scope="module", params=[False, pytest.param(True, marks=pytest.mark.slow)], ids=["small", "whole"])
def landed(request: pytest.FixtureRequest, cc_projects: Path, small_corpus: Path,
           tmp_path_factory: pytest.TempPathFactory) -> Landed:
    whole: bool = request.param
    projects = cc_projects if whole else small_corpus / "claude-code" / "projects"
    work = tmp_path_factory.mktemp("corpus-pass")
    runner = PassRunner(work, work / "root")
    runner.configure(adapters=[{"name": ADAPTER, "source_root": str(projects), "exclude": []}])
    return Landed(runner, projects, runner.run(), whole)


def _session_ids(projects: Path) -> set[str]:
    return {p.name[:-6] for p in projects.glob("*/*.jsonl")}


def test_a_pass_lands_every_session(landed: Landed) -> None:
    expected = _session_ids(landed.projects)
    summary = landed.summary
    assert not summary.failed, summary.as_dict()
    assert summary.totals.sessions == len(expected) == landed.sessions
    assert {p.name for p in landed.root.iterdir() if p.is_dir() and not p.name.startswith("_")} == expected
    assert summary.totals.sources == len(source_files(landed.projects))
    assert summary.totals.unreadable == 0 and summary.totals.conflicts == 0


def test_the_default_exclude_leaves_out_private_tmp(cc_projects: Path, small_corpus: Path, tmp_path: Path,
                                                    run_local: Callable[..., PassSummary],
                                                    asz_pass: PassRunner) -> None:
    # the corpus's /private/tmp project beside the small corpus's, not a second pass over all 62
    projects = tmp_path / "projects"
    shutil.copytree(small_corpus / "claude-code" / "projects", projects)
    for project in cc_projects.glob("-private-tmp*"):
        shutil.copytree(project, projects / project.name)
    summary = run_local(projects)  # exclude: the default [/private/tmp/**]
    tmp_sessions = {p.name[:-6] for p in projects.glob("-private-tmp*/*.jsonl")}
    assert len(tmp_sessions) == 1
    landed = {p.name for p in asz_pass.root.iterdir() if p.is_dir() and not p.name.startswith("_")}
    assert landed == _session_ids(projects) - tmp_sessions
    assert summary.totals.sessions == len(_session_ids(projects)) - 1 > 1


def test_the_root_passes_verify_and_sdcheck(landed: Landed, assert_root_verifies: Callable[[Path], None]) -> None:
    assert_root_verifies(landed.root)


def test_one_record_per_source_line_for_every_file(landed: Landed) -> None:
    for path in source_files(landed.projects):
        src = path.relative_to(landed.projects).as_posix()
        records = [r for _, r in landed.by_src[src]]
        if path.suffix == ".jsonl":
            lines = path.read_bytes().count(b"\n")
            assert [r.ord for r in records] == list(range(1, lines + 1)), src
        else:
            assert [(r.ord, r.off) for r in records] == [(1, 0)], src


def test_every_record_is_its_source_bytes(landed: Landed) -> None:
    checked = 0
    for src, rows in landed.by_src.items():
        data = (landed.projects / src).read_bytes()
        for _, record in rows:
            piece = data[record.off:record.off + record.bytes]
            assert len(piece) == record.bytes, (src, record.ord)
            assert hashlib.sha256(piece).hexdigest()[:12] == record.sha, (src, record.ord)
            assert data[record.off + record.bytes:record.off + record.bytes + 1] == b"\n", (src, record.ord)
            checked += 1
    assert checked == landed.summary.totals.records == landed.records


def test_headers_name_the_stream_the_file_came_from(landed: Landed) -> None:
    for src, rows in landed.by_src.items():
        header = rows[0][0]
        name = src.rsplit("/", 1)[-1]
        assert header["dialect"] == "claude-code/1" and header["adapter"] == f"{ADAPTER}/0.1.0"
        assert header["kind"] == "transcript"
        if name.startswith("agent-"):
            assert header["stream"] == name[len("agent-"):-len(".jsonl")]
        else:
            assert header["stream"] == "main" and header["session"] == name[:-len(".jsonl")]


def test_a_second_pass_lands_nothing(landed: Landed) -> None:
    again = landed.runner.run()
    assert not again.failed
    assert (again.totals.landed, again.totals.records, again.totals.sessions) == (0, 0, landed.sessions)


def test_the_index_its_reader_begins_knows_every_call_and_directory(landed: Landed) -> None:
    reader = Transcripts(landed.root)
    for session_dir in (p for p in landed.root.iterdir() if p.is_dir() and not p.name.startswith("_")):
        session = session_dir.name
        calls, directories = set(), set()
        for path in landed.projects.glob(f"*/{session}.jsonl"):
            directories.add(path.parent.name)
        transcripts = [*landed.projects.glob(f"*/{session}.jsonl"),
                       *landed.projects.glob(f"*/{session}/subagents/*.jsonl")]
        for path in transcripts:
            for line in path.read_bytes().splitlines():
                value = orjson.loads(line)
                if value.get("type") == "assistant":
                    calls.add(value["message"]["id"])
        assert SessionIndex(session_dir).load() is None, "the landing begins none"
        assert (reader.calls(session), reader.directories(session)) == (calls, directories), session
        loaded = SessionIndex(session_dir).load()
        assert loaded is not None and (loaded[0]["call"], loaded[0]["directory"]) == (calls, directories), session
        lines = (session_dir / "index" / "ids").read_text().splitlines()
        assert len(lines) == len(set(lines)) and lines[-1].startswith("seq "), "nothing is indexed twice"


def test_sources_lists_sessions_with_their_stream_counts(landed: Landed) -> None:
    out, err = io.StringIO(), io.StringIO()
    status = main(["sources", "--sessions", "--json", "--config", str(landed.runner.config_path)],
                  App(out=out, err=err))
    assert status == 0, err.getvalue()
    (report,) = json.loads(out.getvalue())["adapters"]
    assert report["source_dirs"] == [str(landed.projects.resolve())]
    units = {u["key"]: u for u in report["units"] if u["kind"] == "session"}
    assert set(units) == _session_ids(landed.projects)
    for session, unit in units.items():
        (main_file,) = landed.projects.glob(f"*/{session}.jsonl")
        children = list(main_file.parent.glob(f"{session}/subagents/agent-*.jsonl"))
        assert unit["streams"] == 1 + len(children), session
        assert unit["sources"] == 1 + len(children)
        assert unit["runs"] == 0 and unit["directory"] == main_file.parent.name
    assert units["8a525d27-37a4-4a12-8523-a3ea345290cf"]["streams"] == 13  # main + 12 subagents


def _landed_digests(root: Path) -> dict[str, dict[str, str]]:
    """Every landed file of ``root`` by ``<src> #<seq>`` (its name holds its landing time): its header's digest with the
    landing time (``at``) left out, and its record lines' digest (all but the header and the
    closing line, which only repeats the lines' digest)."""
    out: dict[str, dict[str, str]] = {}
    for session in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("_")):
        for _, path in sorted(landed_files(session)):
            head, _, rest = path.read_bytes().partition(b"\n")
            header = orjson.loads(head)
            header.pop("at", None)
            records = rest[:rest.rindex(b"\n", 0, len(rest) - 1) + 1] if rest.count(b"\n") > 1 else b""
            out[f"{header['src']} #{header['seq']}"] = {
                "header": hashlib.sha256(orjson.dumps(header)).hexdigest(),
                "records": hashlib.sha256(records).hexdigest(),
            }
    return out


def test_every_landed_file_is_the_one_the_manifest_recorded(landed: Landed) -> None:
    # Landed bytes never change with the code that lands them (a speed change included): every
    # file's header and record lines against the digests recorded from the code that wrote the
    # manifest. A change that is meant to change landed bytes rewrites the manifest on purpose:
    # ASZ_RECORD_CORPUS_DIGESTS=1 pytest --slow -k manifest, and the diff says which files changed.
    found = _landed_digests(landed.root)
    if os.environ.get("ASZ_RECORD_CORPUS_DIGESTS") and landed.whole:
        DIGESTS.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    expected = json.loads(DIGESTS.read_text())
    assert len(expected) == 87
    if not landed.whole:  # the small corpus's files, each against the whole manifest's line for it
        expected = {name: digests for name, digests in expected.items() if name.split(" #")[0] in landed.by_src}
    assert len(found) == len(expected) == landed.files
    changed = sorted(name for name in expected.keys() | found.keys() if expected.get(name) != found.get(name))
    assert not changed, f"{len(changed)} landed files differ from the manifest, e.g. {changed[:5]}"
