"""``asz-pipeline push`` and the push at the end of a pass, against real OTLP receivers on
loopback (``asz_core.scenario.receiver``), with a root landed from the corpus by the ``jsonl`` adapter.

The receivers check every record's digest and line count as the SkyWalking OAP does; each test
compares what they took with the files of the root, byte for byte.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import socket
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from asz_core.cli.app import App
from asz_core.cli.main import main
from asz_core.root.layout import parse_file_name
from asz_core.root.skeletons import land_skeleton
from asz_core.scenario.receiver import GrpcReceiver, HttpReceiver, Received, make_receiver
from asz_core.sessiondata import format_instant, open_file, parse_instant
from asz_core.sessiondata.skeleton import Removal
from asz_core.testing import PassRunner
from asz_plugins.otlp_push import plugin
from asz_plugins.otlp_push.state import PushState

PROTOCOLS = ("grpc", "http")
MAX_DELTA = 262144  # small enough that long transcripts land as several files


def _jsonl_adapter(source: Path, **extra: Any) -> dict[str, Any]:
    return {"name": "jsonl", "source_root": str(source), "pattern": "**/*.jsonl", "exclude": [],
            "collector": {"max_delta_bytes": MAX_DELTA, **extra}}


def _land_with_jsonl(projects: Path, work: Path) -> None:
    """``projects`` landed by the jsonl adapter into ``work/root``, checked by verify and sdcheck."""
    from asz_core.testing import run_sdcheck
    from asz_core.verify import verify_root

    runner = PassRunner(work, work / "root")
    runner.configure(adapters=[_jsonl_adapter(projects)])
    summary = runner.run()
    assert not summary.failed and summary.totals.landed > 10, summary.as_dict()
    assert not [p for r in verify_root(runner.root) for p in r.problems]
    verdict = run_sdcheck(runner.root)
    assert verdict is None or verdict["ok"], verdict


@pytest.fixture(scope="session")
def corpus_root(landed_once: Callable[[str, Callable[[Path], None]], Path], corpus: Path) -> Path:
    """The Claude Code corpus landed once by the jsonl adapter."""
    return landed_once("otlp-corpus", lambda work: _land_with_jsonl(corpus / "claude-code" / "projects", work)) / "root"


@pytest.fixture(scope="session")
def small_root(landed_once: Callable[[str, Callable[[Path], None]], Path], small_corpus: Path) -> Path:
    """The small corpus landed once by the jsonl adapter: what each push rule is shown on."""
    return landed_once("otlp-small",
                       lambda work: _land_with_jsonl(small_corpus / "claude-code" / "projects", work)) / "root"


@pytest.fixture
def root(small_root: Path, tmp_path: Path) -> Path:
    """A copy of a landed root this test may push from and change: the small corpus's, for every
    rule a push follows (pushing all 62 sessions in each test cost seconds of CPU each); the whole
    corpus arrives in ``test_corpus_root_arrives_whole_byte_exact_with_the_attributes`` with
    ``--slow``."""
    copy = tmp_path / "root"
    shutil.copytree(small_root, copy)
    return copy


@pytest.fixture
def whole_root(corpus_root: Path, tmp_path: Path) -> Path:
    """A copy of the whole corpus's landed root."""
    copy = tmp_path / "root"
    shutil.copytree(corpus_root, copy)
    return copy


def landed(root: Path) -> dict[str, bytes]:
    """Every file a push sends: root-relative path → bytes on disk."""
    out = {}
    for path in sorted(root.rglob("*.sd")):
        out[path.relative_to(root).as_posix()] = path.read_bytes()
    return out


@pytest.fixture(autouse=True)
def _fresh_plugin_memory() -> Iterator[None]:
    """What a watching process remembers (Retry-After, the budget) must not leak between tests."""
    plugin._hold_until.clear()
    plugin._budgets.clear()
    yield
    plugin._hold_until.clear()
    plugin._budgets.clear()


@pytest.fixture(params=[pytest.param("grpc", marks=pytest.mark.slow), "http"])
def receiver(request: pytest.FixtureRequest) -> Iterator[GrpcReceiver | HttpReceiver]:
    """A receiver of each protocol with ``--slow``; HTTP alone in the default lane, where the
    tests that name gRPC (its limit, a receiver killed mid-push, none listening) still run it."""
    server = make_receiver(request.param).start()
    yield server
    server.stop()


def protocol_of(server: GrpcReceiver | HttpReceiver) -> str:
    return "grpc" if isinstance(server, GrpcReceiver) else "http"


class Pusher:
    """Runs ``asz-pipeline push --json`` on a root with an ``export.otlp`` the test gives."""

    def __init__(self, workdir: Path, root: Path) -> None:
        self.workdir = workdir
        self.root = root
        self.config = workdir / "asz.yaml"

    def configure(self, endpoint: str, protocol: str, **otlp: Any) -> None:
        import yaml
        data = {"storage": {"root": str(self.root)}, "adapters": [],
                "export": {"otlp": {"protocol": protocol, "endpoint": endpoint, **otlp}}}
        self.config.write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")

    def push(self, *extra: str) -> tuple[int, dict[str, Any], str]:
        out, err = io.StringIO(), io.StringIO()
        code = main(["push", "--config", str(self.config), "--json", *extra],
                    app=App(out=out, err=err))
        text = out.getvalue()
        return code, (json.loads(text) if text.strip() else {}), err.getvalue()


@pytest.fixture
def pusher(tmp_path: Path, root: Path) -> Pusher:
    return Pusher(tmp_path, root)


def for_receiver(pusher: Pusher, server: GrpcReceiver | HttpReceiver, **otlp: Any) -> Pusher:
    pusher.configure(server.endpoint, protocol_of(server), **otlp)
    return pusher


def assert_each_exactly_once(root: Path, records: list[Received]) -> None:
    """Every landed file arrived once, byte for byte; nothing else arrived."""
    files = landed(root)
    counts = Counter(r.file for r in records)
    assert {f for f, n in counts.items() if n > 1} == set()
    assert set(counts) == set(files)
    for record in records:
        assert record.body == files[record.file], record.file


# ---- a root arrives whole -----------------------------------------------------------------


# the small corpus's root by default; the whole corpus's (a landing and a push of all 62 sessions,
# seconds of CPU) with --slow
@pytest.mark.parametrize("whole", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_corpus_root_arrives_whole_byte_exact_with_the_attributes(
        receiver: GrpcReceiver | HttpReceiver, request: pytest.FixtureRequest, whole: bool, tmp_path: Path) -> None:
    root: Path = request.getfixturevalue("whole_root" if whole else "root")
    pusher = Pusher(tmp_path, root)
    for_receiver(pusher, receiver, instance_id="ci@asz", layer="AI_AGENT")
    code, result, err = pusher.push()
    assert code == 0, err
    files = landed(root)
    assert result["files"] == len(files) and result["errors"] == 0 and result["rejected"] == 0
    assert result["bytes"] == sum(len(b) for b in files.values())
    assert result["requests"] == len(receiver.requests) and result["wire"] > result["bytes"]
    assert receiver.problems == []
    assert_each_exactly_once(root, receiver.records)

    for record in receiver.records:
        header = json.loads(files[record.file].split(b"\n", 1)[0])
        assert record.resource == {
            "service.name": "JSONL files",  # the jsonl adapter's AdapterInfo.runtime
            "service.instance.id": "ci@asz", "service.layer": "AI_AGENT",
            "telemetry.sdk.name": "asz", "telemetry.sdk.language": "python",
            "telemetry.sdk.version": record.resource["telemetry.sdk.version"]}
        attributes = dict(record.attributes)
        assert attributes.pop("asz.file.digest") and attributes.pop("asz.lines")
        assert attributes == {
            "asz.format": "sd", "asz.format.version": "sd/1", "asz.file": record.file,
            "asz.file.kind": "transcript", "asz.session": header["session"],
            "asz.seq": header["seq"], "asz.stream": "main"}  # jsonl lines carry no `time`

    # Session by session, files in seq order, the session landed first first.
    order = [(r.attributes["asz.session"], r.attributes["asz.seq"]) for r in receiver.records]
    sessions = list(dict.fromkeys(s for s, _ in order))
    assert order == [(s, q) for s in sessions for q in sorted(q for t, q in order if t == s)]
    first_stamp = {s: min(parse_file_name(Path(f).name).stamp  # type: ignore[union-attr]
                          for f in files if f.startswith(s + "/")) for s in sessions}
    assert sessions == sorted(sessions, key=lambda s: (first_stamp[s], s))

    state = PushState.load(root)
    assert state.receivers == {pusher_receiver(receiver)}
    assert state.pushed == {f: r.attributes["asz.file.digest"] for f in files
                            for r in receiver.records if r.file == f}
    assert state.rejected == set()
    assert oct((root / "push.state").stat().st_mode & 0o777) == "0o600"


def pusher_receiver(server: GrpcReceiver | HttpReceiver) -> str:
    return f"grpc://{server.endpoint}" if isinstance(server, GrpcReceiver) else server.endpoint


def test_a_second_push_sends_nothing(receiver: GrpcReceiver | HttpReceiver, pusher: Pusher) -> None:
    for_receiver(pusher, receiver)
    assert pusher.push()[0] == 0
    seen = receiver.seen
    code, result, _ = pusher.push()
    assert code == 0
    assert (result["files"], result["requests"], result["wire"], result["waiting"]) == (0, 0, 0, 0)
    assert receiver.seen == seen


def test_record_times_and_a_file_without_times(receiver: GrpcReceiver | HttpReceiver,
                                                asz_pass: PassRunner, corpus: Path,
                                                tmp_path: Path) -> None:
    """A copy of a real transcript whose lines also carry their `timestamp` as `time` (the
    field the jsonl dialect reads) lands and is pushed; then lines without one are appended,
    and land, in the next pass, as a file with no time of its own."""
    source = corpus / "claude-code/projects/-home-marco-projects-spotter-worktrees-spotter-4te" \
        / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
    lines = [json.loads(line) for line in source.read_bytes().splitlines()]
    timed = tmp_path / "src" / "timed-session.jsonl"
    timed.parent.mkdir()
    with open(timed, "wb") as out:
        for value in lines[:-3]:
            if isinstance(value, dict) and "timestamp" in value:
                value = {**value, "time": value["timestamp"]}
            out.write(json.dumps(value).encode() + b"\n")
    asz_pass.configure(adapters=[_jsonl_adapter(timed.parent, max_delta_bytes=65536)],
                       export={"otlp": {"protocol": protocol_of(receiver),
                                        "endpoint": receiver.endpoint}})
    summary = asz_pass.run()
    assert not summary.failed, summary.as_dict()
    assert len(receiver.records) == summary.totals.landed > 2
    latest_in_session = 0
    for record in receiver.records:
        times = [t for t in (parse_instant(r.time) for r in open_file(asz_pass.root / record.file))
                 if t is not None]
        assert times, record.file
        assert record.attributes["asz.from_time"] == format_instant(min(times))
        assert record.attributes["asz.through_time"] == format_instant(max(times))
        assert record.time_unix_nano == max(times)
        latest_in_session = max(latest_in_session, record.time_unix_nano)

    with open(timed, "ab") as out:
        for value in lines[-3:]:
            out.write(json.dumps(value).encode() + b"\n")
    summary = asz_pass.run()
    assert not summary.failed and summary.totals.landed == 1, summary.as_dict()
    untimed = receiver.records[-1]
    assert "asz.from_time" not in untimed.attributes and "asz.through_time" not in untimed.attributes
    assert untimed.time_unix_nano == latest_in_session  # the session's latest, known at push
    assert_each_exactly_once(asz_pass.root, receiver.records)


# ---- failures: nothing lost, nothing twice -------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _spawn_receiver(protocol: str, port: int, store: Path, *plan: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen([sys.executable, "-m", "asz_core.scenario.receiver", protocol, "--port", str(port),
                                "--store", str(store), "--plan", *plan],
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    ready = process.stdout.readline().split()
    assert ready and ready[0] == "ready", ready
    return process, ready[1]


def _arrivals(store: Path) -> list[str]:
    log = store / "arrivals.log"
    return [line.split()[0] for line in log.read_text().splitlines()] if log.exists() else []


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_receiver_killed_mid_push_loses_nothing_and_duplicates_nothing(
        protocol: str, pusher: Pusher, root: Path, tmp_path: Path) -> None:
    port = _free_port()
    first_store, second_store = tmp_path / "first", tmp_path / "second"
    # The third request kills the receiver's process (SIGKILL) before it stores or answers.
    first, endpoint = _spawn_receiver(protocol, port, first_store, "ok", "ok", "die")
    try:
        pusher.configure(endpoint, protocol, batch_bytes=262144)
        code, result, _ = pusher.push()
    finally:
        first.kill()
        first.wait()
    assert first.returncode == -9
    assert code == 1 and result["errors"] == 1 and result["requests"] == 3
    before = _arrivals(first_store)
    assert before and result["files"] == len(before)
    state = PushState.load(root)
    assert state.receivers == {_receiver_name(protocol, endpoint)} and set(state.pushed) == set(before)

    second, endpoint_again = _spawn_receiver(protocol, port, second_store)
    try:
        assert endpoint_again == endpoint
        code, result, _ = pusher.push()
    finally:
        second.kill()
        second.wait()
    assert code == 0 and result["errors"] == 0
    after = _arrivals(second_store)
    files = landed(root)
    assert sorted(before + after) == sorted(files), "each file exactly once across both receivers"
    for store, names in ((first_store, before), (second_store, after)):
        for name in names:
            assert (store / name).read_bytes() == files[name]


def _receiver_name(protocol: str, endpoint: str) -> str:
    return f"grpc://{endpoint}" if protocol == "grpc" else endpoint


def test_throttled_the_push_stops_and_the_rest_waits(receiver: GrpcReceiver | HttpReceiver,
                                                     pusher: Pusher, root: Path) -> None:
    for_receiver(pusher, receiver, batch_bytes=1 << 20)
    receiver.plan("ok", "throttle")
    code, result, err = pusher.push()
    assert code == 0, err  # being asked to wait is not an error
    assert result["throttled"] and result["retry_after_s"] == receiver.retry_after
    assert result["errors"] == 0 and result["requests"] == 2 and receiver.seen == 2
    assert result["files"] == len(receiver.records) and result["waiting"] == len(landed(root)) - result["files"]
    assert "retry after 7s" in result["notes"][0]
    recorded = PushState.load(root).pushed
    assert set(recorded) == {r.file for r in receiver.records}

    code, result, _ = pusher.push()
    assert code == 0 and result["waiting"] == 0 and not result["throttled"]
    assert_each_exactly_once(root, receiver.records)


def test_a_hanging_receiver_times_out_and_nothing_is_recorded(
        receiver: GrpcReceiver | HttpReceiver, pusher: Pusher, root: Path) -> None:
    for_receiver(pusher, receiver, timeout="1s")
    receiver.plan("hang")
    code, result, _ = pusher.push()
    receiver.release()
    assert code == 1 and result["errors"] == 1 and result["files"] == 0 and result["requests"] == 1
    assert "no answer within 1s" in result["errors_list"][0]
    assert not (root / "push.state").exists()
    code, result, _ = pusher.push()
    assert code == 0 and result["files"] == len(landed(root))
    assert_each_exactly_once(root, receiver.records)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_no_receiver_listening_is_an_error_and_nothing_is_recorded(protocol: str, pusher: Pusher,
                                                                   root: Path) -> None:
    port = _free_port()
    pusher.configure(f"127.0.0.1:{port}" if protocol == "grpc" else f"http://127.0.0.1:{port}",
                     protocol, timeout="5s")
    code, result, _ = pusher.push()
    assert code == 1 and result["errors"] == 1 and result["files"] == 0
    assert result["requests"] == 1, "the push stops at the first refused connection"
    assert result["waiting"] == len(landed(root))
    assert not (root / "push.state").exists()


def test_a_failing_receiver_fails_the_push(receiver: GrpcReceiver | HttpReceiver, pusher: Pusher,
                                           root: Path) -> None:
    for_receiver(pusher, receiver, batch_bytes=1 << 20)
    receiver.plan("ok", "fail")
    code, result, _ = pusher.push()
    assert code == 1 and result["errors"] == 1 and result["requests"] == 2
    assert result["files"] == len(receiver.records) > 0
    assert "UNAVAILABLE" in result["errors_list"][0] or "503" in result["errors_list"][0]
    pusher.push()
    assert_each_exactly_once(root, receiver.records)


def test_partial_success_is_taken_and_its_files_recorded_as_rejected(
        receiver: GrpcReceiver | HttpReceiver, pusher: Pusher, root: Path) -> None:
    for_receiver(pusher, receiver, batch_bytes=1 << 20)
    receiver.plan("partial")
    code, result, _ = pusher.push()
    assert code == 0 and result["rejected"] == 1 and result["errors"] == 0
    assert result["files"] == len(landed(root))
    first_request = {r.file for r in receiver.requests[0]}
    state = PushState.load(root)
    assert state.rejected == first_request and set(state.pushed) == set(landed(root))
    assert "rejected 1 of its" in result["notes"][0]
    text = (root / "push.state").read_text()
    assert text.count("\nrejected ") == len(first_request)
    code, result, _ = pusher.push()
    assert result["requests"] == 0, "a partly rejected request is not sent again"


def test_a_file_larger_than_batch_bytes_goes_alone(receiver: GrpcReceiver | HttpReceiver,
                                                   pusher: Pusher, root: Path) -> None:
    batch = 65536
    files = landed(root)
    assert any(len(b) > batch for b in files.values()) and any(len(b) < batch // 4 for b in files.values())
    for_receiver(pusher, receiver, batch_bytes=batch)
    code, result, _ = pusher.push()
    assert code == 0
    for request in receiver.requests:
        size = sum(len(r.body) for r in request)
        assert size <= batch or len(request) == 1, [r.file for r in request]
    assert any(len(r) == 1 and len(r[0].body) > batch for r in receiver.requests)
    assert any(len(r) > 1 for r in receiver.requests)
    assert result["requests"] == len(receiver.requests)
    assert_each_exactly_once(root, receiver.records)


def test_grpc_request_over_the_receivers_limit_is_an_error_not_a_throttle(root: Path, tmp_path: Path) -> None:
    """gRPC says RESOURCE_EXHAUSTED for a message over its limit too; waiting would not cure
    it, so it is an error naming the limit, and the requests after it still go. (Its largest
    files are larger than a batch, so the limit refuses single files.)"""
    batch = 16384
    pusher = Pusher(tmp_path, root)
    files = landed(root)
    server = GrpcReceiver()
    server.max_receive = sorted((len(b) for b in files.values()), reverse=True)[5]
    assert server.max_receive > batch
    server.start()
    try:
        for_receiver(pusher, server, batch_bytes=batch)
        code, result, _ = pusher.push()
        assert code == 1 and not result["throttled"]
        refused = set(files) - {r.file for r in server.records}
        assert {f for f, b in files.items() if len(b) > server.max_receive} <= refused
        assert all(len(files[f]) > server.max_receive - 4096 for f in refused)  # only the largest
        assert result["errors"] == len(refused) == result["waiting"]
        assert all("larger than the receiver accepts" in e for e in result["errors_list"])
        assert_each_exactly_once(root, server.records + [r for r in receiver_records_of(root, refused)])
    finally:
        server.stop()


def receiver_records_of(root: Path, names: set[str]) -> list[Received]:
    """Stand-ins for files a receiver refused, so the exactly-once check covers the rest."""
    return [Received({}, {"asz.file": n}, (root / n).read_bytes(), 0, 0) for n in sorted(names)]


# ---- HTTP: only an OTLP answer counts -------------------------------------------------------


@pytest.mark.parametrize("answer", ["html", "redirect"])
def test_http_answers_that_are_not_otlp_record_nothing(answer: str, pusher: Pusher, root: Path) -> None:
    server = HttpReceiver().start()
    try:
        server.plan(answer)
        for_receiver(pusher, server)
        code, result, _ = pusher.push()
        assert code == 1 and result["files"] == 0 and result["requests"] == 1
        message = result["errors_list"][0]
        assert ("text/html, not an OTLP response" in message if answer == "html"
                else "redirects are not followed" in message)
        assert not (root / "push.state").exists()
    finally:
        server.stop()


# ---- what is and is not sent ----------------------------------------------------------------


def test_push_refuses_without_an_endpoint(pusher: Pusher, root: Path) -> None:
    pusher.configure("", "grpc")
    code, result, err = pusher.push()
    assert code == 2 and result == {}
    assert "export.otlp.endpoint is empty" in err
    assert not (root / "push.state").exists()


def test_a_skeleton_and_a_damaged_file_are_not_sent(receiver: GrpcReceiver | HttpReceiver,
                                                     pusher: Pusher, root: Path) -> None:
    files = sorted(root.rglob("*.sd"))
    # Retention's way: a skeleton stands in for a landed file, which is then removed.
    removed = files[0]
    skeleton = land_skeleton(removed, Removal(at="2026-11-29T00:00:00Z"))
    removed.unlink()
    # A landed file changed on disk: its closing digest no longer matches.
    damaged = files[1]
    os.chmod(damaged, 0o600)
    data = bytearray(damaged.read_bytes())
    data[len(data) // 2] ^= 0x01
    damaged.write_bytes(bytes(data))

    for_receiver(pusher, receiver)
    code, result, _ = pusher.push()
    assert code == 1 and result["errors"] == 1
    assert str(damaged) in result["errors_list"][0]
    sent = {r.file for r in receiver.records}
    assert damaged.relative_to(root).as_posix() not in sent
    assert skeleton.exists() and not any(f.endswith(".sk") for f in sent)
    assert removed.relative_to(root).as_posix() not in sent
    assert len(sent) == len(files) - 2 == result["files"]


def test_a_new_endpoint_is_sent_what_was_never_sent_as_upstream_does(pusher: Pusher, root: Path) -> None:
    first, second = GrpcReceiver().start(), HttpReceiver().start()
    try:
        for_receiver(pusher, first)
        assert pusher.push()[0] == 0
        for_receiver(pusher, second)
        assert pusher.push()[1]["requests"] == 0  # push.state says what was sent, not to whom
        state = PushState.load(root)
        assert state.receivers == {f"grpc://{first.endpoint}"}
        (root / "push.state").rename(root / "push.state.first")  # the documented way to send it all again
        assert pusher.push()[0] == 0
        assert_each_exactly_once(root, first.records)
        assert_each_exactly_once(root, second.records)
        assert PushState.load(root).receivers == {second.endpoint}
    finally:
        first.stop()
        second.stop()


# ---- at the end of a pass --------------------------------------------------------------------


#: the push at the end of a pass is shown on one project's sessions, not the whole corpus:
#: what a push sends of a whole corpus root is the tests above, over the root landed once
PASS_PROJECT = "-Users-ingo-projects-irrlicht"


def _run_with_export(asz_pass: PassRunner, corpus: Path, **otlp: Any) -> Callable[[], Any]:
    asz_pass.configure(adapters=[_jsonl_adapter(corpus / "claude-code" / "projects" / PASS_PROJECT)],
                       export={"otlp": otlp})
    return asz_pass.run


def test_run_pushes_at_the_end_of_the_pass(receiver: GrpcReceiver | HttpReceiver,
                                          asz_pass: PassRunner, corpus: Path,
                                          assert_root_verifies: Callable[[Path], None]) -> None:
    run = _run_with_export(asz_pass, corpus, protocol=protocol_of(receiver),
                           endpoint=receiver.endpoint)
    summary = run()
    assert not summary.failed, summary.as_dict()
    assert len(receiver.records) == summary.totals.landed
    assert_each_exactly_once(asz_pass.root, receiver.records)
    assert_root_verifies(asz_pass.root)  # push.state beside the sessions does not disturb readers
    seen = receiver.seen
    summary = run()
    assert summary.totals.landed == 0 and receiver.seen == seen


def test_run_without_an_endpoint_sends_nothing(asz_pass: PassRunner, corpus: Path) -> None:
    summary = _run_with_export(asz_pass, corpus, endpoint="")()
    assert not summary.failed and "otlp-push" not in str(summary.errors)
    assert not (asz_pass.root / "push.state").exists()


def test_run_fails_when_the_push_fails(asz_pass: PassRunner, corpus: Path) -> None:
    summary = _run_with_export(asz_pass, corpus, endpoint=f"127.0.0.1:{_free_port()}",
                               timeout="5s")()
    assert summary.failed and summary.totals.errors == 1
    assert [e.adapter for e in summary.errors] == ["otlp-push"]
    assert summary.totals.landed > 0, "what landed stays landed"


def test_watch_passes_honour_retry_after(asz_pass: PassRunner, corpus: Path) -> None:
    server = GrpcReceiver(retry_after=60).start()
    try:
        run = _run_with_export(asz_pass, corpus, endpoint=server.endpoint, batch_bytes=1 << 20)
        server.plan("throttle")
        summary = run()
        assert not summary.failed and server.seen == 1 and server.records == []
        run()  # the next pass of the same process: the receiver asked for 60s
        assert server.seen == 1
        assert any("asked to wait" in w for w in asz_pass.reporter.warnings)
        plugin._hold_until.clear()  # as if the minute had passed
        run()
        assert_each_exactly_once(asz_pass.root, server.records)
    finally:
        server.stop()
