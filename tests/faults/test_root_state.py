"""Derived state gone bad, landed files gone, and verify beside a pass: each has a named outcome,
nothing is lost or landed twice, and verify never reports a problem that is not there nor
misses one that is.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from asz_core import hookimpl, verify
from asz_core.errors import EXIT_FAILED
from asz_core.plugin import AdapterInfo
from asz_core.providerbody import manifest_of
from asz_core.providerbody.manifest import LitSeg, Manifest
from asz_core.root.cursors import AppendCursor
from asz_core.root.skeletons import land_skeleton
from asz_core.root.storage import StorageRoot, landed_files
from asz_core.session_report import Problem
from asz_core.sessiondata import Header, Part, Record, open_file, raw_json_of
from asz_core.sessiondata.skeleton import Removal
from asz_core.sessiondata.writer import record_line
from asz_core.testing import PassRunner
from asz_core.verify import verify_root
from tests.helpers import jsonl_config, records_of, run_cli_bytes, run_cli_forked
from tests.provider_support import SMALL, land_ids, land_small_session, seen_states, transcript_ids

SESSION = "s1"
CURSOR = Path(SESSION, "streams", "main", "transcript.cursor")


def _line(n: int) -> bytes:
    return b'{"n":%d,"time":"2026-01-01T00:00:%02dZ","pad":"%s"}\n' % (n, n % 60, b"x" * 400)


def _grow(log: Path, more: int) -> None:
    start = log.read_bytes().count(b"\n") + 1
    with log.open("ab") as fh:
        fh.write(b"".join(_line(i) for i in range(start, start + more)))


@pytest.fixture
def log(asz_pass: PassRunner, tmp_path: Path) -> Path:
    """``src/s1.jsonl``, landed once in files of at most 4 KiB."""
    source = tmp_path / "src"
    source.mkdir()
    path = source / f"{SESSION}.jsonl"
    path.write_bytes(b"".join(_line(i) for i in range(1, 21)))
    asz_pass.configure(**jsonl_config(source, max_delta_bytes=4096))
    assert not asz_pass.run().failed
    return path


def _problems(root: Path) -> list[tuple[str, str]]:
    return sorted((p.kind, Path(p.path).name) for r in verify_root(root) for p in r.problems)


def _ords(root: Path) -> list[int]:
    return [record.ord for _, record in records_of(root, SESSION)]


# --- #2: a stream (or provider-body file) whose landed files are all gone ---

def test_a_stream_whose_landed_files_are_all_gone_fails_verify(asz_pass: PassRunner, log: Path) -> None:
    stream = asz_pass.root / SESSION / "streams" / "main"
    for landed in stream.glob("*.sd"):
        landed.unlink()
    assert _problems(asz_pass.root) == [("gone", "transcript.cursor")]


def test_a_stream_whose_first_files_are_gone_fails_verify(asz_pass: PassRunner, log: Path) -> None:
    stream = asz_pass.root / SESSION / "streams" / "main"
    sorted(stream.glob("*.sd"))[0].unlink()
    kinds = {kind for kind, _ in _problems(asz_pass.root)}
    assert "ord gap" in kinds and kinds <= {"ord gap", "byte gap"}


def _body_record(raw: bytes, ord_: int = 1, off: int = 0) -> Record:
    digest = hashlib.sha256(raw).hexdigest()
    manifest = Manifest("request", "a.request.json", digest, len(raw), segments=[LitSeg(raw.decode())])
    return Record(ord=ord_, off=off, sha=digest[:12], bytes=len(raw), id="a.request",
                  parts=[Part.data_part(raw_json_of(manifest.to_json()))])


def _land_body(root: Path, record: Record) -> Path:
    with StorageRoot(root, pass_started_ns=10**9).open_session(SESSION) as session:
        landing = session.begin("provider_body", Header(kind="provider_body", session="", src="a.request.json",
                                                        dialect="provider_body/1", adapter="test"))
        landing.write(*record_line(record))
        return session.commit(landing).path


def test_a_provider_body_file_the_summary_lists_and_that_is_gone_fails_verify(tmp_path: Path) -> None:
    files = [_land_body(tmp_path, _body_record(b'{"a":"hello"}')), _land_body(tmp_path, _body_record(b'{"b":1}'))]
    assert _problems(tmp_path) == []
    summary = tmp_path / SESSION / "index" / "provider_bodies"
    summary.parent.mkdir()
    listed = [[p.name, p.stat().st_size, p.stat().st_mtime_ns] for p in files]
    summary.write_bytes(orjson.dumps({"format": 1, "files": listed}))
    assert _problems(tmp_path) == []
    files[1].unlink()
    assert _problems(tmp_path) == [("gone", files[1].name)]


def test_a_session_whose_every_file_is_gone_fails_verify(tmp_path: Path) -> None:
    """No cursor and no summary (a session of provider bodies alone, its index removed too):
    ``session.state`` still says files landed."""
    landed = _land_body(tmp_path, _body_record(b'{"a":"hello"}'))
    landed.unlink()
    assert _problems(tmp_path) == [("gone", "session.state")]


# --- #2: a session's provider-body files gone with its index, seen by the adapter's asz_verify ---

@pytest.fixture
def small_root(corpus: Path, asz_pass: PassRunner, tmp_path: Path) -> PassRunner:
    """One pass landed the small corpus session's seven provider bodies."""
    land_small_session(corpus, asz_pass, tmp_path)
    return asz_pass


def _adapter_problems(runner: PassRunner, sessions: list[str] | None = None) -> list[Problem]:
    return [p for r in verify_root(runner.root, sessions, host=runner.host) for p in r.problems]


def _landed_bodies(root: Path) -> set[str]:
    return {name for name, state in seen_states(root).items() if state == "landed"}


@pytest.mark.corpus
def test_provider_bodies_deleted_with_the_index_are_reported_gone_by_name(
        small_root: PassRunner, corpus: Path) -> None:
    root, session = small_root.root, SMALL
    landed = _landed_bodies(root)
    assert len(landed) == 7
    for path in (root / session / "provider_body").iterdir():
        path.unlink()
    shutil.rmtree(root / session / "index")
    problems = _adapter_problems(small_root)
    assert {p.kind for p in problems} == {"gone"} and {p.session for p in problems} == {session}
    assert {next(n for n in landed if f" {n} " in p.message) for p in problems} == landed
    assert len(problems) == len(landed)  # each said once, not again by session.state
    assert all("remove _provider/seen.state" in p.message for p in problems)
    done = run_cli_bytes("verify", "--config", str(small_root.config_path), "--json")
    assert done.returncode == EXIT_FAILED, done.stderr.decode()
    said = orjson.loads(done.stdout)
    assert not said["ok"] and sorted(p["kind"] for r in said["sessions"] for p in r["problems"]) == ["gone"] * 7
    (root / "_provider" / "seen.state").unlink()  # what the message says to do
    land_ids(root, transcript_ids(corpus / "claude-code" / "projects")[SMALL])  # as claude-code-local
    again = small_root.run()  # would rebuild it from the session's transcripts (none landed here)
    assert not again.failed and again.totals.records == 7
    assert _adapter_problems(small_root) == [] and _landed_bodies(root) == landed


@pytest.mark.corpus
def test_a_session_deleted_whole_has_its_provider_bodies_reported_gone(small_root: PassRunner) -> None:
    shutil.rmtree(small_root.root / SMALL)
    problems = _adapter_problems(small_root)
    assert [p.kind for p in problems] == ["gone"] * 7 and {p.session for p in problems} == {SMALL}
    # only the sessions asked for: another is missing, and none of these bodies is said of it
    assert [p.kind for p in _adapter_problems(small_root, ["another-session"])] == ["missing"]


@pytest.mark.corpus
def test_an_intact_provider_root_verifies_clean_with_its_adapters_check(small_root: PassRunner) -> None:
    assert _adapter_problems(small_root) == []
    assert _adapter_problems(small_root, [SMALL]) == []
    last = sorted((small_root.root / SMALL / "provider_body").iterdir())[-1]
    with open_file(last) as landed:
        held = {manifest_of(record).src for record in landed}
    last.unlink()  # the bodies it held are gone, and no others
    problems = _adapter_problems(small_root)
    assert {p.kind for p in problems} >= {"gone"}
    gone = [p for p in problems if p.path.endswith("provider_body")]
    assert {next(n for n in held if f" {n} " in p.message) for p in gone} == held and len(gone) == len(held)


@pytest.mark.corpus
@pytest.mark.parametrize("planted", ["_provider", "_provider/seen.state"])
def test_the_provider_check_never_follows_a_link(small_root: PassRunner, tmp_path: Path, planted: str) -> None:
    """A table outside the root that, were it read, would name bodies of a session that has none."""
    root = small_root.root
    outside = tmp_path / "outside"
    shutil.copytree(root / "_provider", outside)
    table = outside / "seen.state"
    table.write_bytes(table.read_bytes().replace(SMALL.encode(), b"0" * 8 + SMALL[8:].encode()))
    target = root / planted
    if target.is_dir():
        shutil.rmtree(target)
    else:
        target.unlink()
    target.symlink_to(outside if planted == "_provider" else table)
    problems = _adapter_problems(small_root)
    assert [(p.kind, p.session) for p in problems] == [("link", "_provider")]
    assert "a pass never follows a link there" in problems[0].message


class _BrokenCheck:
    @hookimpl
    def asz_adapter_info(self) -> AdapterInfo:
        return AdapterInfo(version="0", runtime="test")

    @hookimpl
    def asz_verify(self, root: Path, sessions: frozenset[str] | None) -> list[Problem]:
        raise OSError(5, "Input/output error")


def test_an_adapter_check_that_raises_is_a_problem_said_not_a_traceback(asz_pass: PassRunner, log: Path) -> None:
    asz_pass.register("broken", _BrokenCheck())
    problems = [p for r in verify_root(asz_pass.root, host=asz_pass.host) for p in r.problems]
    assert [(p.session, p.kind) for p in problems] == [("broken", "check failed")]
    assert "Input/output error" in problems[0].message


# --- #11: a provider body's ord/off, and a stream's records past its cursor ---

@pytest.mark.parametrize(("ord_", "off"), [(2, 0), (1, 14)])
def test_a_provider_body_record_not_at_ord_1_off_0_fails_verify(tmp_path: Path, ord_: int, off: int) -> None:
    landed = _land_body(tmp_path, _body_record(b'{"a":"hello"}', ord_, off))
    assert _problems(tmp_path) == [("ord gap", landed.name)]


def test_records_past_their_cursor_in_the_files_it_covers_fail_verify(asz_pass: PassRunner, log: Path) -> None:
    path = asz_pass.root / CURSOR
    cursor = AppendCursor.read(path)
    assert cursor is not None
    cursor.ord -= 1
    cursor.offset -= len(_line(20))
    cursor.save(path)
    assert [kind for kind, _ in _problems(asz_pass.root)] == ["overshoot"]


def test_files_landed_after_their_cursor_are_a_lagging_cursor_not_an_overshoot(
        asz_pass: PassRunner, log: Path) -> None:
    path = asz_pass.root / CURSOR
    before = path.read_bytes()
    _grow(log, 10)
    assert asz_pass.run().totals.records == 10
    path.write_bytes(before)  # as after a kill between landing and the cursor write
    assert _problems(asz_pass.root) == []
    _grow(log, 2)
    assert asz_pass.run().totals.records == 2
    assert _ords(asz_pass.root) == list(range(1, 33))


# --- #3: a cursor that does not read ---

@pytest.mark.parametrize("garbage", [b"\xff\xfe not UTF-8\n", b"offset twelve\nord 3\n", b"\x00" * 64])
def test_a_cursor_that_does_not_read_is_rebuilt_with_one_warning(
        asz_pass: PassRunner, log: Path, garbage: bytes) -> None:
    path = asz_pass.root / CURSOR
    path.write_bytes(garbage)
    reports = verify_root(asz_pass.root)  # no traceback: a note, and the stream is still read
    assert not [p for r in reports for p in r.problems]
    assert [n for r in reports for n in r.notes if "does not read" in n]
    _grow(log, 5)
    asz_pass.reporter.warnings.clear()
    summary = asz_pass.run()
    assert not summary.failed and summary.totals.records == 5
    warned = [w for w in asz_pass.reporter.warnings if "transcript.cursor" in w]
    assert len(warned) == 1 and "rebuilt from the landed files" in warned[0]
    assert _ords(asz_pass.root) == list(range(1, 26))  # nothing lost, nothing landed twice
    asz_pass.reporter.warnings.clear()
    _grow(log, 1)
    assert asz_pass.run().totals.records == 1 and not asz_pass.reporter.warnings
    assert _problems(asz_pass.root) == []


# --- #6: verify in a loop beside passes ---

@pytest.fixture
def lagging(asz_pass: PassRunner, log: Path) -> list[Path]:
    """The stream's files past its cursor (a pass landed them; the cursor is put back as it was
    before, as verify reads it while a pass lands): by seq."""
    cursor = asz_pass.root / CURSOR
    before = cursor.read_bytes()
    said = AppendCursor.read(cursor)
    assert said is not None
    _grow(log, 20)
    assert asz_pass.run().totals.records == 20
    cursor.write_bytes(before)
    past = [path for seq, path in sorted(landed_files(asz_pass.root / SESSION)) if seq > said.last_seq]
    assert len(past) >= 3
    return past


def _listing_missing(monkeypatch: pytest.MonkeyPatch, *missed: Path | None) -> None:
    """Verify's listings of the session, each without one name (``None``: whole), as listings
    taken while files are renamed into the directory may be."""
    listings = iter(missed)

    def listing(session_dir: Path, links: list[Path] | None = None) -> Iterator[tuple[int, Path]]:
        miss = next(listings, None)
        return ((seq, path) for seq, path in landed_files(session_dir, links) if path != miss)
    monkeypatch.setattr(verify, "landed_files", listing)


def test_a_file_past_the_cursor_one_listing_missed_is_no_gap(
        asz_pass: PassRunner, lagging: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    _listing_missing(monkeypatch, lagging[0])
    assert _problems(asz_pass.root) == []


def test_a_file_past_the_cursor_that_is_gone_is_a_gap(asz_pass: PassRunner, lagging: list[Path]) -> None:
    lagging[1].unlink()  # a pass killed before its cursor write, then a file lost
    assert {kind for kind, _ in _problems(asz_pass.root)} == {"ord gap", "byte gap"}


def test_a_file_retention_removes_while_verify_reads_is_no_problem(
        asz_pass: PassRunner, log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Listed as a landed file, replaced by its skeleton before it is read (as retention does)."""
    before = list(landed_files(asz_pass.root / SESSION))
    landed = sorted(path for _, path in before)[0]
    land_skeleton(landed, Removal(at="2026-01-01T00:00:00Z"))
    landed.unlink()
    listings = iter([before])
    monkeypatch.setattr(verify, "landed_files",
                        lambda session_dir, links=None: next(listings, None) or landed_files(session_dir, links))
    assert _problems(asz_pass.root) == []


def test_gaps_that_move_with_every_listing_are_left_unreported_with_a_note(
        asz_pass: PassRunner, lagging: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    _listing_missing(monkeypatch, *[lagging[n % 2] for n in range(verify.LOOKS)])
    reports = verify_root(asz_pass.root)
    assert not [p for r in reports for p in r.problems]
    assert [n for r in reports for n in r.notes if "run verify again when no pass runs" in n]


_PASSES = """
import sys, time
from pathlib import Path
from asz_core.host import PluginHost
from asz_core.config import load_config
from asz_core.pipeline import run_pass
source, config, seconds = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3])
host = PluginHost().load_entry_points()
end, n = time.monotonic() + seconds, source.read_bytes().count(b"\\n")
while time.monotonic() < end:
    with source.open("ab") as fh:
        for _ in range(12):
            n += 1
            fh.write(b'{"n":%d,"pad":"%s"}\\n' % (n, b"y" * 300))
    summary = run_pass(host, load_config(host, config))
    assert not summary.failed, summary.errors
print(n)
"""


def test_verify_beside_passes_never_reports_a_false_problem(
        asz_pass: PassRunner, log: Path, slow: bool) -> None:
    seconds = 20.0 if slow else 2.0
    passes = subprocess.Popen([sys.executable, "-c", _PASSES, str(log), str(asz_pass.config_path), str(seconds)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    rounds = 0
    try:
        while passes.poll() is None:
            problems = [str(p) for r in verify_root(asz_pass.root) for p in r.problems]
            assert not problems, problems
            rounds += 1
    finally:
        out, err = passes.communicate(timeout=60)
    assert passes.returncode == 0, err.decode()
    assert rounds > 3
    assert _ords(asz_pass.root) == list(range(1, int(out) + 1))
    assert _problems(asz_pass.root) == []


# --- #9: a full disk, SIGINT, temporary files of the root's own tables, a .tmp-* directory ---

def test_temporary_files_of_the_roots_own_tables_do_not_outlive_a_kill(asz_pass: PassRunner, log: Path) -> None:
    left = [asz_pass.root / f".tmp-{n:012x}-{name}"
            for n, name in enumerate([".settled-jsonl.state", ".landed-kiro.state", "push.state"])]
    for path in left:
        path.write_bytes(b"{half")
    _grow(log, 1)
    assert asz_pass.run().totals.records == 1
    assert not [p for p in left if p.exists()]


CC_SESSION = "0b6f3c2e-6a59-4a57-9d0e-1f2a3b4c5d6e"


def _cc_line(n: int) -> bytes:
    return orjson.dumps({"type": "user", "uuid": f"00000000-0000-4000-8000-{n:012d}", "sessionId": CC_SESSION,
                         "timestamp": f"2026-01-01T00:00:{n % 60:02d}Z",
                         "message": {"role": "user", "content": f"line {n}"}}) + b"\n"


def test_a_settled_table_killed_mid_write_leaves_nothing(asz_pass: PassRunner, tmp_path: Path) -> None:
    """claude-code-local's pass is killed at each state write in turn until one leaves a
    temporary file at the top of the root (its settled table's): the next pass removes it."""
    transcript = tmp_path / "projects" / "-work-x" / f"{CC_SESSION}.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_bytes(_cc_line(1))
    asz_pass.configure(adapters=[{"name": "claude-code-local", "source_root": str(tmp_path / "projects"),
                                  "exclude": []}])
    for nth in range(1, 8):
        with transcript.open("ab") as fh:
            fh.write(_cc_line(nth + 1))
        env = {**os.environ, "ASZ_FAULT": f"kill:state-write:{nth}"}
        done = run_cli_forked("run", "--full", "--config", str(asz_pass.config_path), env=env)
        assert done.returncode in (-signal.SIGKILL, 0), done.stderr.decode()
        if list(asz_pass.root.glob(".tmp-*")):
            break
    else:
        pytest.fail("no kill left a temporary file of the root's own tables")
    assert not asz_pass.run().failed
    assert not list(asz_pass.root.rglob(".tmp-*"))
    ords = [record.ord for _, record in records_of(asz_pass.root, CC_SESSION)]
    assert ords == list(range(1, nth + 2))


def _asz() -> str:
    return str(Path(sys.executable).with_name("asz-pipeline"))


def test_a_directory_named_like_a_temporary_file_does_not_wedge_its_session(
        asz_pass: PassRunner, log: Path) -> None:
    odd = asz_pass.root / SESSION / "streams" / "main" / ".tmp-0123456789ab-x"
    odd.mkdir()
    (odd / "inside").write_bytes(b"not ours")
    for more in (3, 2):
        _grow(log, more)
        summary = asz_pass.run()
        assert not summary.failed and summary.totals.records == more
    assert (odd / "inside").read_bytes() == b"not ours"


#: a ``sitecustomize`` for the child of the test below: once the console script has called asz's
#: ``main``, which answers Ctrl-C from its first line, it writes a byte to the pipe its environment
#: names (before then an interrupt is Python's own: the interpreter starting, the script's imports)
_TELLS_WHEN_ASZ_RUNS = """\
import os
import sys

_fd = os.environ.pop("ASZ_TEST_ASZ_RUNS_FD", None)


class _AszRuns:
    def find_spec(self, name, path=None, target=None):
        if name == "asz_core.cli.main":  # main() imports it once its handler is in place
            sys.meta_path.remove(self)
            os.write(int(_fd), b".")
            os.close(int(_fd))
        return None


if _fd is not None:
    sys.meta_path.insert(0, _AszRuns())
"""


def _start_and_interrupt(config: Path, site: Path, delay: float) -> subprocess.Popen[bytes]:
    """The console script running a pass of ``config``, sent SIGINT ``delay`` seconds after asz's
    own code took over from Python's start."""
    ready, tell = os.pipe()
    env = {**os.environ, "ASZ_TEST_ASZ_RUNS_FD": str(tell),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}
    started = subprocess.Popen([_asz(), "run", "--full", "--config", str(config)], env=env, pass_fds=(tell,),
                               stderr=subprocess.PIPE, stdout=subprocess.PIPE)
    os.close(tell)
    with open(ready, "rb") as told:
        runs = told.read(1)  # empty if the child ended before asz ran
    assert runs == b".", started.communicate(timeout=60)[1].decode()
    time.sleep(delay)
    started.send_signal(signal.SIGINT)
    return started


def test_sigint_while_a_pass_starts_is_no_traceback(asz_pass: PassRunner, log: Path, tmp_path: Path,
                                                    slow: bool) -> None:
    # from asz's first line on: its imports, the configuration, the pass's start and its landings
    delays = (0.0, 0.05, 0.1, 0.2, 0.3, 0.45) if slow else (0.1,)
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_TELLS_WHEN_ASZ_RUNS)
    for delay in delays:
        _grow(log, 1)
        started = _start_and_interrupt(asz_pass.config_path, site, delay)
        _, err = started.communicate(timeout=60)
        assert b"Traceback" not in err, err.decode()
        # 130 wherever asz was interrupted, 0 if the pass had ended: never killed by the signal
        assert started.returncode in (0, 130), err.decode()
    assert not asz_pass.run().failed
    assert _ords(asz_pass.root) == list(range(1, 21 + len(delays)))


_INTERRUPTS_AT_EXIT = """\
import atexit
import os
import signal
import time


def _interrupt():
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.05)  # the interpreter answers a signal between two steps of Python


atexit.register(_interrupt)
"""


def test_sigint_after_a_pass_has_ended_leaves_its_exit_status(asz_pass: PassRunner, log: Path,
                                                               tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_INTERRUPTS_AT_EXIT)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}
    _grow(log, 1)
    ended = subprocess.run([_asz(), "run", "--full", "--config", str(asz_pass.config_path)], env=env,
                           capture_output=True, check=False, timeout=60)
    assert b"KeyboardInterrupt" not in ended.stderr and b"Traceback" not in ended.stderr, ended.stderr.decode()
    assert ended.returncode == 0, ended.stderr.decode()
    assert _ords(asz_pass.root) == list(range(1, 22))


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB file system, filled (mounted as tmpfs: needs root)."""
    place = tmp_path / "small"
    place.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small file system to fill needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", str(place)],
                             capture_output=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small file system here: {mounted.stderr.decode().strip()}")
    try:
        with pytest.raises(OSError), (place / "fill").open("wb", buffering=0) as fh:
            while True:
                fh.write(b"\0" * 4096)
                fh.flush()
        yield place
    finally:
        # lazily: this process still holds the root it entered there (``confined`` keeps an
        # entered root's directory open), and a plain umount, refused as busy, left one mount
        # behind every run
        subprocess.run(["umount", "--lazy", str(place)], check=False)


def test_a_full_disk_at_pass_start_exits_3_with_what_to_do(asz_pass: PassRunner, tmp_path: Path,
                                                           full_disk: Path) -> None:
    source = tmp_path / "src2"
    source.mkdir()
    (source / f"{SESSION}.jsonl").write_bytes(_line(1))
    asz_pass.root = full_disk / "root"
    asz_pass.configure(**jsonl_config(source))
    done = run_cli_bytes("run", "--full", "--config", str(asz_pass.config_path))
    assert done.returncode == 3, done.stderr.decode()
    assert b"Traceback" not in done.stderr
    assert b"no space left" in done.stderr and b"free some space" in done.stderr


# --- a fifo in the root, where a pass or verify would open a file and wait for a writer ---

def test_a_fifo_in_a_cursor_s_place_is_a_cursor_that_does_not_read(asz_pass: PassRunner, log: Path) -> None:
    path = asz_pass.root / CURSOR
    path.unlink()
    os.mkfifo(path, 0o600)
    _grow(log, 5)
    done = run_cli_forked("run", "--config", str(asz_pass.config_path), timeout=60)  # not a pass that waits
    assert done.returncode == 0, done.stderr.decode()
    assert "rebuilt from the landed files" in done.stderr.decode()
    assert path.is_file() and _ords(asz_pass.root) == list(range(1, 26))  # nothing lost, nothing twice


def test_a_fifo_in_a_landed_file_s_place_is_a_problem_verify_names(asz_pass: PassRunner, log: Path) -> None:
    _, landed = max(landed_files(asz_pass.root / SESSION))
    landed.unlink()
    os.mkfifo(landed, 0o600)
    done = run_cli_forked("verify", "--config", str(asz_pass.config_path), timeout=60)
    assert done.returncode != 0 and landed.name in (done.stdout + done.stderr).decode()
