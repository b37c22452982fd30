"""A check's receivers are lent to one property case after another: nothing one case planned, took
or saw may reach the next."""

from __future__ import annotations

import hashlib

import grpc
import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2_grpc import LogsServiceStub
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from asz_core.scenario.receiver import RECORD_KEYS, RESOURCE_KEYS, Receiver
from asz_core.scenario.receiver_pool import ReceiverPool, lend_receiver


def _request(body: bytes) -> ExportLogsServiceRequest:
    """One record the receiver's checks accept."""
    values = {"asz.format": "sd", "asz.format.version": "sd/1", "asz.file": "s/a.sd", "asz.file.kind": "transcript",
              "asz.file.digest": hashlib.sha256(body).hexdigest(), "asz.lines": body.count(b"\n"),
              "asz.session": "s", "asz.seq": 1}
    assert set(RECORD_KEYS) <= set(values)
    request = ExportLogsServiceRequest()
    logs = request.resource_logs.add()
    logs.resource.attributes.extend(KeyValue(key=k, value=AnyValue(string_value="x")) for k in RESOURCE_KEYS)
    record = logs.scope_logs.add().log_records.add()
    record.body.bytes_value = body
    for key, value in values.items():
        record.attributes.append(KeyValue(key=key, value=AnyValue(int_value=value) if isinstance(value, int)
                                          else AnyValue(string_value=value)))
    return request


def _export(endpoint: str, body: bytes) -> grpc.StatusCode:
    with grpc.insecure_channel(endpoint) as channel:
        try:
            LogsServiceStub(channel).Export(_request(body), timeout=10)  # type: ignore[no-untyped-call]
        except grpc.RpcError as exc:
            return exc.code()  # type: ignore[no-any-return]
    return grpc.StatusCode.OK


def _as_new(rx: Receiver) -> None:
    assert (rx.records, rx.points, rx.seen, rx.problems, rx.default) == ([], [], 0, [], "ok")


def test_a_lent_receiver_starts_as_new_whatever_the_last_case_left() -> None:
    pool = ReceiverPool()
    try:
        with pool.lend("grpc", default="fail") as first:
            endpoint = first.endpoint
            first.plan("ok", "ok", "fail")  # the case ends before its plan does
            assert _export(endpoint, b"one\n") is grpc.StatusCode.OK
            assert _export(endpoint, b"two\n") is grpc.StatusCode.OK
            first.problems.append("a problem of the first case")
            assert len(first.records) == 2
        assert len(first.records) == 2  # readable after the block, as a stopped receiver's
        with pool.lend("grpc") as second:
            assert second.endpoint == endpoint  # the same server
            _as_new(second)
            # neither the first case's unfinished plan nor its default refuses this one
            assert _export(endpoint, b"three\n") is grpc.StatusCode.OK
            assert [r.body for r in second.records] == [b"three\n"]
    finally:
        pool.stop()


def test_a_receiver_is_lent_to_one_case_at_a_time() -> None:
    pool = ReceiverPool()
    try:
        with pool.lend("http"), pytest.raises(RuntimeError, match="lent already"), pool.lend("http"):
            pass
        with pool.lend("http") as rx:  # and back once the block ends
            _as_new(rx)
    finally:
        pool.stop()


def test_without_a_pool_each_case_has_a_receiver_of_its_own() -> None:
    with lend_receiver(None, "grpc", default="fail") as one, lend_receiver(None, "grpc") as other:
        assert one.endpoint != other.endpoint
        assert _export(one.endpoint, b"x\n") is grpc.StatusCode.UNAVAILABLE
        assert _export(other.endpoint, b"x\n") is grpc.StatusCode.OK


def test_a_setting_a_receiver_does_not_have_is_refused() -> None:
    pool = ReceiverPool()
    try:
        with pytest.raises(TypeError, match="no receiver setting"), pool.lend("grpc", defualt="fail"):
            pass
    finally:
        pool.stop()
