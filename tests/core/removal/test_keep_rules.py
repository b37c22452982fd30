"""The removal keeps what upstream keeps: plugin output never landed, metrics never derived or sent.

One ``claude-code`` build of one session is landed and parsed once for the module, by an
ordinary pass with no receiver and no derivation; each test works on a copy of it (root, source
and configuration), sets the configuration its case needs, and runs passes that send to one
loopback receiver the module shares. Metrics reach back without limit (``lookback: 0``), so the
build's calls, stamped long ago, are spooled and sent.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

from asz_core.cli.app import App
from asz_core.cli.main import main
from asz_core.metrics.spool import SPOOL_DIR, receipt_path
from asz_core.metrics.state import MetricsState
from asz_core.removal.marker import marker_path
from asz_core.removal.metrics_sent import NOT_DERIVED, LandedFile, metrics_sent
from asz_core.retention.receipts import ACCEPTED, Receipt
from asz_core.root.storage import landed_files
from asz_core.scenario.build import BuildOptions, build
from asz_core.scenario.check import DEFAULT_AT_MS
from asz_core.scenario.model import load_scenario
from asz_core.scenario.receiver import GrpcReceiver, Outcome, make_receiver
from asz_core.sessiondata.reader import open_file

SCENARIO = ("session: 5b1d7c3e-2a4f-4e6b-8c9d-0e1f2a3b4c5d\n"
            "steps:\n"
            "  - input: run the build\n"
            "  - call: {text: Building., tool: {id: t1, name: Bash, input: {command: make}, result: built}}\n"
            "  - call: {agent: {name: checker, prompt: check it, steps: [{call: {text: Checked.}}]}}\n"
            "  - call: {text: Done.}\n")
SESSION = "5b1d7c3e-2a4f-4e6b-8c9d-0e1f2a3b4c5d"
#: everything a test's configuration adds goes after this line, in place of what was there
SETTINGS = "# ---- this test's settings ----\n"
EVERY = "kept: every marked session: "


def _run(config: Path) -> str:
    """One pass as ``asz-pipeline run`` makes it; what it said on its error stream."""
    err = io.StringIO()
    main(["run", "--config", str(config)], App(out=io.StringIO(), err=err))
    return err.getvalue()


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("keep-rules")
    (tmp / "s.yaml").write_text(SCENARIO, encoding="utf-8")
    root = tmp / "root"
    build(load_scenario(tmp / "s.yaml"), root, BuildOptions(at_ms=DEFAULT_AT_MS))
    with (root / "asz.yaml").open("a", encoding="utf-8") as f:
        f.write(f"{SETTINGS}metrics:\n  enabled: false\n")
    _run(root / "asz.yaml")  # lands and parses, derives nothing, sends nothing
    assert (root / SESSION).is_dir() and (root / "_conversations" / SESSION).is_dir()
    assert not (root / SPOOL_DIR).exists()
    return root


@pytest.fixture(scope="module")
def rx() -> Iterator[GrpcReceiver]:
    with make_receiver("grpc") as receiver:
        assert isinstance(receiver, GrpcReceiver)
        yield receiver


@dataclass
class Copy:
    root: Path
    rx: GrpcReceiver

    @property
    def config(self) -> Path:
        return self.root / "asz.yaml"

    @property
    def source(self) -> Path:
        return self.root / "_source"

    def configure(self, *, metrics: bool = True, adapters: dict[str, str] | None = None) -> None:
        """Send to the receiver, derive metrics or not, and replace ``old`` by ``new`` in the
        build's adapter list for each pair of ``adapters``."""
        text = self.config.read_text("utf-8")
        head = text.partition(SETTINGS)[0]
        for old, new in (adapters or {}).items():
            assert old in head, old
            head = head.replace(old, new)
        self.config.write_text(
            f"{head}{SETTINGS}metrics:\n  enabled: {'true' if metrics else 'false'}\n  lookback: '0'\n"
            f"export:\n  otlp:\n    protocol: grpc\n    endpoint: {self.rx.endpoint}\n    timeout: 10s\n",
            encoding="utf-8")

    def run(self) -> str:
        return _run(self.config)

    def whole(self) -> bool:
        return (self.root / SESSION).is_dir() and (self.root / "_conversations" / SESSION).is_dir() \
            and marker_path(self.source, SESSION).is_file()

    def gone(self) -> bool:
        return not (self.root / SESSION).exists() and not (self.root / "_conversations" / SESSION).exists() \
            and not marker_path(self.source, SESSION).exists()

    def spool(self) -> list[str]:
        return sorted(p.name for p in (self.root / SPOOL_DIR).glob(f"metrics-{SESSION}-*"))

    def pushed(self) -> str:
        return (self.root / "push.state").read_text("utf-8")


@pytest.fixture
def copy(base: Path, rx: GrpcReceiver, tmp_path: Path) -> Copy:
    target = tmp_path / "root"
    shutil.copytree(base, target, symlinks=True, ignore=shutil.ignore_patterns(".lock"))
    config = target / "asz.yaml"
    config.write_bytes(config.read_bytes().replace(str(base.resolve()).encode(), str(target.resolve()).encode()))
    return Copy(target, rx)


def _changes_entry(copy: Copy) -> str:
    return f"  - name: changes\n    enabled: true\n    source_root: {copy.source.resolve() / 'plugins' / 'data'}\n"


def test_a_changes_adapter_switched_off_keeps_every_marked_session_and_says_so_once(
        copy: Copy, capsys: pytest.CaptureFixture[str]) -> None:
    entry = _changes_entry(copy)
    copy.configure(adapters={entry: entry.replace("enabled: true", "enabled: false")})
    said = copy.run() + copy.run()
    err = capsys.readouterr().err
    want = copy.source.resolve() / "plugins" / "data"
    reason = (f"the changes adapter is off; the plugin output the build wrote under {want} would never be "
              f"landed (switch it on, reading {want})")
    assert err.count(f"{EVERY}{reason}\n") == 1, err
    assert f"scenario : no session is removed: {reason}" in said
    assert copy.whole()


def test_a_changes_adapter_reading_another_directory_keeps_every_marked_session(
        copy: Copy, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    elsewhere = tmp_path / "plugin-data"
    elsewhere.mkdir()
    entry = _changes_entry(copy)
    copy.configure(adapters={entry: entry.replace(str(copy.source.resolve() / "plugins" / "data"), str(elsewhere))})
    copy.run()
    err = capsys.readouterr().err
    assert f"{EVERY}the changes adapter reads {elsewhere}, not {copy.source.resolve() / 'plugins' / 'data'}" in err
    assert "(set its source_root to " in err
    assert copy.whole()


def test_the_changes_adapter_under_its_old_name_reading_the_plugin_data_lets_the_session_go(
        copy: Copy, capsys: pytest.CaptureFixture[str]) -> None:
    copy.configure(adapters={"  - name: changes\n": "  - name: claude-code-changes\n"})
    copy.run()
    assert EVERY not in capsys.readouterr().err
    assert copy.gone()


def test_a_session_goes_once_every_landed_file_is_derived_and_every_spool_file_is_sent(
        copy: Copy, assert_root_verifies: Callable[[Path], None]) -> None:
    copy.configure()
    before = len(copy.rx.metric_requests)
    copy.run()
    assert len(copy.rx.metric_requests) > before  # its metrics were derived, spooled and sent
    assert copy.gone()
    assert copy.spool() == [] and SESSION not in copy.pushed()
    assert SESSION not in (copy.root / SPOOL_DIR / "metrics.state").read_text("utf-8")
    assert_root_verifies(copy.root)


def test_a_session_whose_metrics_the_receiver_refused_waits_without_a_word_and_goes_once_they_are_sent(
        copy: Copy, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        assert_root_verifies: Callable[[Path], None]) -> None:
    copy.configure()
    monkeypatch.setattr(copy.rx, "handle_metrics", lambda request: Outcome("fail"))
    copy.run()
    assert copy.whole() and copy.spool()
    assert f"/{SESSION}/" in copy.pushed() and f"{SPOOL_DIR}/" not in copy.pushed()  # logs sent, metrics not
    assert f"kept: {SESSION}" not in capsys.readouterr().err
    assert_root_verifies(copy.root)
    monkeypatch.undo()
    copy.run()
    assert copy.gone() and copy.spool() == []


def test_a_session_whose_metrics_the_receiver_rejected_is_kept_for_a_person(
        copy: Copy, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    copy.configure()
    taken = copy.rx.handle_metrics

    def partial(request: ExportMetricsServiceRequest) -> Outcome:
        taken(request)
        return Outcome("ok", 1, "some points were rejected")

    monkeypatch.setattr(copy.rx, "handle_metrics", partial)
    copy.run()
    spooled = copy.spool()
    assert spooled
    assert f"kept: {SESSION}: the receiver rejected records of {SPOOL_DIR}/" in capsys.readouterr().err
    monkeypatch.undo()
    copy.run()  # nothing is sent again, so the rejection stands
    assert copy.whole() and copy.spool() == spooled


def _counted_transcript(copy: Copy) -> int:
    for seq, path in sorted(landed_files(copy.root / SESSION)):
        with open_file(path) as f:
            if f.header.get("kind") == "transcript" and f.header.get("stream") == "main":
                return seq
    raise AssertionError("no main transcript landed")


def test_a_landed_file_whose_receipt_does_not_read_is_never_derived_and_keeps_the_session_until_moved_aside(
        copy: Copy, capsys: pytest.CaptureFixture[str]) -> None:
    copy.configure()
    receipt = receipt_path(copy.root, SESSION, _counted_transcript(copy))
    receipt.parent.mkdir()
    receipt.write_text("not a receipt", encoding="utf-8")
    copy.run()
    err = capsys.readouterr().err
    assert f"kept: {SESSION}: {receipt}: the receipt does not read" in err and "move it aside" in err
    assert copy.whole()
    receipt.unlink()  # as the message says
    copy.run()
    assert copy.gone()


def test_with_metrics_off_a_session_is_judged_on_its_landed_files_and_rounds_alone(copy: Copy) -> None:
    copy.configure(metrics=False)
    copy.run()
    assert copy.gone()
    assert not (copy.root / SPOOL_DIR).exists()


def test_with_metrics_off_a_spool_file_an_earlier_pass_wrote_is_still_sent_before_the_session_goes(
        copy: Copy, monkeypatch: pytest.MonkeyPatch) -> None:
    copy.configure()
    monkeypatch.setattr(copy.rx, "handle_metrics", lambda request: Outcome("fail"))
    copy.run()
    monkeypatch.undo()
    spooled = copy.spool()
    assert spooled and copy.whole()
    copy.configure(metrics=False)  # derivation off; sending metrics still on
    copy.run()
    assert copy.gone() and copy.spool() == []


def test_a_metrics_state_that_does_not_read_keeps_every_marked_session(
        copy: Copy, capsys: pytest.CaptureFixture[str]) -> None:
    copy.configure()
    (copy.root / SPOOL_DIR).mkdir()
    (copy.root / SPOOL_DIR / "metrics.state").write_text("{", encoding="utf-8")
    copy.run()
    assert f"{EVERY}{copy.root / SPOOL_DIR / 'metrics.state'}: does not read" in capsys.readouterr().err
    assert copy.whole()


def test_a_provider_source_inside_claude_codes_own_directory_keeps_every_marked_session(
        copy: Copy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    own = tmp_path / "claude-config"
    (own / "provider-bodies").mkdir(parents=True)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(own))
    bodies = str(copy.source.resolve() / "provider-bodies")
    copy.configure(adapters={f"source_root: {bodies}\n": f"source_root: {own / 'provider-bodies'}\n"})
    copy.run()
    assert f"{EVERY}{own / 'provider-bodies'} is, holds, or lies inside {own}" in capsys.readouterr().err
    assert copy.whole()


def test_a_head_round_past_the_last_landed_file_keeps_the_session(
        copy: Copy, capsys: pytest.CaptureFixture[str]) -> None:
    copy.configure()
    seq, last = max(landed_files(copy.root / SESSION))
    os.chmod(last.parent, 0o700)
    last.unlink()  # lost after the round that consumed it was written
    copy.run()
    err = capsys.readouterr().err
    assert f"kept: {SESSION}: the head round " in err and f"past the last landed file, {seq - 1}" in err
    assert copy.source.is_dir() and marker_path(copy.source, SESSION).is_file()


class _AllAccepted:
    """A receiver that confirmed every file."""

    receiver = "grpc://127.0.0.1:1"
    others: frozenset[str] = frozenset()

    def receipt(self, relpath: str, sha256: str) -> Receipt:
        return ACCEPTED

    def owner(self, session: str) -> str:
        return ""


def test_a_file_with_a_call_that_would_count_waits_until_metrics_state_names_it_with_its_digest(copy: Copy) -> None:
    files = []
    for seq, path in sorted(landed_files(copy.root / SESSION)):
        with open_file(path) as f:
            counted = f.header.get("kind") == "transcript"
        files.append(LandedFile(path.relative_to(copy.root).as_posix(), seq,
                                hashlib.sha256(path.read_bytes()).hexdigest(), counted, False))
    assert any(f.counted for f in files) and any(not f.counted for f in files)

    def verdict(state: MetricsState | None, *, derives: bool = True) -> tuple[bool, bool, str]:
        v = metrics_sent(copy.root, SESSION, files, _AllAccepted(), derives=derives, state=state)
        return v.go, v.kept, v.reason

    assert verdict(None) == (False, False, NOT_DERIVED)  # no state yet, and the build's calls count
    assert verdict(None, derives=False) == (True, False, "")
    state = MetricsState(copy.root / SPOOL_DIR / "metrics.state", first=False)
    state.derived = {f.relpath: f.digest if f.counted else "" for f in files}
    assert verdict(state) == (True, False, "")  # a file read by its header alone is named with no digest
    state.derived = {f.relpath: "" for f in files}
    assert verdict(state) == (False, False, NOT_DERIVED)  # a transcript must be named with its digest
    state.derived = {f.relpath: "0" * 64 for f in files}
    assert verdict(state) == (False, False, NOT_DERIVED)


def test_a_session_the_local_adapters_filter_leaves_out_is_kept_and_the_reason_says_where_to_admit_it(
        copy: Copy, capsys: pytest.CaptureFixture[str]) -> None:
    project = next(p.parent.name for p in copy.source.glob(f"*/{SESSION}.jsonl"))
    local = f"source_root: {copy.source.resolve()}\n    exclude: []\n"
    copy.configure(adapters={local: local.replace("exclude: []", f"exclude: ['{project}']")})
    copy.run()
    assert (f"kept: {SESSION}: the local adapter's include and exclude leave {SESSION} out (its project "
            f"directory is {project}); admit it there") in capsys.readouterr().err
    assert copy.whole()
