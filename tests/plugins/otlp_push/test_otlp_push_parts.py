"""The otlp-push plugin's parts on their own: the ``export.otlp`` section as ``asz.yaml``
validation reports it, ``push.state``, the wire budget and ``Retry-After``."""

from __future__ import annotations

import io
import textwrap
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

import pytest

from asz_core.cli.app import App
from asz_core.cli.main import main
from asz_plugins.otlp_push.config import OtlpConfig, default_instance_id
from asz_plugins.otlp_push.limiter import WireBudget
from asz_plugins.otlp_push.section import sends
from asz_plugins.otlp_push.state import PushState, PushStateError
from asz_plugins.otlp_push.transport_http import parse_retry_after


def _config_problems(tmp_path: Path, text: str) -> tuple[int, list[str]]:
    path = tmp_path / "asz.yaml"
    path.write_text(textwrap.dedent(text), "utf-8")
    err = io.StringIO()
    code = main(["config", "--config", str(path)], app=App(out=io.StringIO(), err=err))
    return code, [line.strip() for line in err.getvalue().splitlines()[1:]]


def test_a_wrong_export_otlp_type_is_reported_with_file_line_and_key(tmp_path: Path) -> None:
    code, problems = _config_problems(tmp_path, """\
        storage:
          root: ./data
        adapters: []
        export:
          otlp:
            endpoint: 127.0.0.1:11800
            batch_bytes: lots
            tls: "yes"
            headers:
              Authorization: 42
            sevice_name: typo
        """)
    where = tmp_path / "asz.yaml"
    assert code == 2
    assert problems == [
        f"{where}:7: export.otlp.batch_bytes: 'lots' is not of type 'integer'",
        f"{where}:8: export.otlp.tls: 'yes' is not of type 'boolean'",
        f"{where}:10: export.otlp.headers.Authorization: 42 is not of type 'string'",
        f"{where}:11: export.otlp.sevice_name: unknown key (known keys here: batch_bytes, endpoint, "
        f"headers, instance_id, layer, logs, max_bytes_per_minute, metrics, protocol, "
        f"service_name, timeout, tls)",
    ]


def test_an_endpoint_of_the_other_protocol_is_reported(tmp_path: Path) -> None:
    code, problems = _config_problems(tmp_path, """\
        adapters: []
        export:
          otlp:
            endpoint: http://127.0.0.1:4318
        """)
    assert code == 2 and len(problems) == 1
    assert problems[0].startswith(f"{tmp_path / 'asz.yaml'}:4: export.otlp.endpoint: "
                                  f"'http://127.0.0.1:4318' does not match")
    code, problems = _config_problems(tmp_path, """\
        adapters: []
        export:
          otlp:
            protocol: http
            endpoint: 127.0.0.1:4318
            layer: ai_agent
        """)
    assert code == 2 and [p.split(": ")[1] for p in problems] == ["export.otlp.endpoint",
                                                                   "export.otlp.layer"]


def test_the_upstream_section_validates_and_defaults_fill_in(tmp_path: Path) -> None:
    path = tmp_path / "asz.yaml"
    path.write_text(textwrap.dedent("""\
        adapters: []
        export:
          otlp:
            protocol: grpc
            endpoint: ""
            tls: false
            service_name: ""
            instance_id: ""
            layer: AI_AGENT
            headers: {}
            batch_bytes: 8388608
            max_bytes_per_minute: 0
            logs: true
            metrics: true
        """), "utf-8")
    app = App(config_path=str(path), out=io.StringIO(), err=io.StringIO())
    cfg = OtlpConfig.from_section(app.config.section("export.otlp"))
    assert (cfg.protocol, cfg.endpoint, cfg.batch_bytes, cfg.timeout_s) == ("grpc", "", 8388608, 30.0)
    assert cfg.instance_id == default_instance_id() and "@" in cfg.instance_id
    assert not cfg.enabled and not sends(app.config.section("export.otlp"))
    for section in ({"endpoint": " 127.0.0.1:11800 "}, {"endpoint": "h:1", "logs": False}, {"endpoint": "  "}):
        assert sends(section) == OtlpConfig.from_section(section).enabled


@pytest.mark.parametrize(("section", "receiver"), [
    ({"endpoint": "127.0.0.1:11800"}, "grpc://127.0.0.1:11800"),
    ({"endpoint": "oap:11800", "tls": True}, "grpcs://oap:11800"),
    ({"protocol": "http", "endpoint": "https://oap.example:12800/"}, "https://oap.example:12800"),
])
def test_the_receiver_is_named_as_upstream_names_it(section: dict[str, object], receiver: str) -> None:
    assert OtlpConfig.from_section(section).receiver == receiver


# ---- push.state ----------------------------------------------------------------------------


def test_push_state_is_written_as_upstream_writes_it(tmp_path: Path) -> None:
    state = PushState.load(tmp_path)
    assert (state.pushed, state.receivers) == ({}, set())
    state.record("http://b:2", [("s/streams/main/t-2.sd", "bb")], ["s/streams/main/t-2.sd"], 1_800_000_000_123_456_789)
    state.record("grpc://a:1", [("s/streams/main/t-1.sd", "aa")], [], 1_800_000_001_000_000_000)
    text = (tmp_path / "push.state").read_text()
    assert text == ("schema 1\nupdated_at 2027-01-15T08:00:01Z\n"
                    "endpoint grpc://a:1\nendpoint http://b:2\n"
                    "pushed s/streams/main/t-1.sd aa\npushed s/streams/main/t-2.sd bb\n"
                    "rejected s/streams/main/t-2.sd\n")
    again = PushState.load(tmp_path)
    assert again.is_pushed("s/streams/main/t-1.sd") and again.is_pushed("s/streams/main/t-2.sd")
    assert again.rejected == {"s/streams/main/t-2.sd"}


def test_an_upstream_push_state_with_several_receivers_reads_and_groups_as_upstream(tmp_path: Path) -> None:
    # upstream names every receiver apart from the files: a file sent to either is sent
    (tmp_path / "push.state").write_text(
        "schema 1\nupdated_at 2026-09-11T10:00:00Z\n"
        "endpoint grpc://127.0.0.1:11800\nendpoint http://oap:12800\n"
        "pushed s/streams/main/t-1.sd aa\npushed s/streams/main/t-2.sd bb\n"
        "rejected s/streams/main/t-2.sd\npushed no-digest\nendpoint a b c\n")
    state = PushState.load(tmp_path)
    assert state.receivers == {"grpc://127.0.0.1:11800", "http://oap:12800"}
    assert state.pushed == {"s/streams/main/t-1.sd": "aa", "s/streams/main/t-2.sd": "bb"}
    assert state.rejected == {"s/streams/main/t-2.sd"}
    state.save()
    assert PushState.load(tmp_path) == state  # the lines of the wrong length are a newer writer's


def test_push_state_of_an_older_writer_without_endpoint_lines(tmp_path: Path) -> None:
    (tmp_path / "push.state").write_text("schema 1\nupdated_at 2026-01-01T00:00:00Z\n"
                                         "pushed s/streams/main/t-1.sd aa\nnewer_key x\n")
    state = PushState.load(tmp_path)
    assert state.receivers == {"unknown"} and state.is_pushed("s/streams/main/t-1.sd")


def test_a_receivers_url_password_is_never_written_to_push_state(tmp_path: Path) -> None:
    PushState.load(tmp_path).record("https://me:s3cret@oap:12800", [("s/t.sd", "aa")], [], 1_800_000_000_000_000_000)
    text = (tmp_path / "push.state").read_text()
    assert "s3cret" not in text and "endpoint https://me:***@oap:12800\n" in text


@pytest.mark.parametrize(("text", "says"), [
    ("schema 2\n", "schema '2' is not 1"),
    (b"schema 1\npushed s/\xff.sd aa\n", "cannot be read"),
])
def test_a_push_state_that_cannot_be_read_says_why(tmp_path: Path, text: str | bytes, says: str) -> None:
    path = tmp_path / "push.state"
    path.write_bytes(text) if isinstance(text, bytes) else path.write_text(text)
    with pytest.raises(PushStateError, match=says):
        PushState.load(tmp_path)


# ---- max_bytes_per_minute and Retry-After ---------------------------------------------------


class _FakeTime:
    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_the_wire_budget_starts_full_refills_and_waits() -> None:
    fake = _FakeTime()
    budget = WireBudget(6000, clock=fake.clock, sleep=fake.sleep)  # 100 bytes a second
    assert budget.take(5000) == 0.0 and budget.take(1000) == 0.0  # a full minute's budget
    assert budget.take(500) == pytest.approx(5.0)  # empty: waits for 500 bytes' refill
    fake.now += 60
    assert budget.take(20000) == 0.0  # larger than a minute: takes a full budget, leaves none
    assert budget.take(100) == pytest.approx(1.0)
    budget.empty()  # a throttle empties it
    assert budget.take(300) == pytest.approx(3.0)
    assert WireBudget(0, clock=fake.clock, sleep=fake.sleep).take(10**9) == 0.0


def test_retry_after_is_seconds_or_an_http_date() -> None:
    assert parse_retry_after("30") == 30.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    now = datetime(2026, 9, 1, 12, 0, 0, tzinfo=UTC)
    later = format_datetime(now + timedelta(seconds=90), usegmt=True)
    assert parse_retry_after(later, now=now.timestamp()) == pytest.approx(90.0)
