"""The storage root: names, modes, locks, refused ids, a full disk, and crashes at every step."""

from __future__ import annotations

import os
import threading
import time
import types
from pathlib import Path

import pytest

from asz_core import hookimpl
from asz_core.pipeline import PassRefused
from asz_core.plugin import AdapterInfo, Found, SessionClaim
from asz_core.root import faults
from asz_core.root.durable import install_noreplace
from asz_core.root.layout import RefusedId, check_id, file_name, parse_file_name
from asz_core.root.locks import FileLock
from asz_core.testing import PassRunner
from tests.helpers import jsonl_config, records_of, run_cli, run_cli_forked, temp_files


@pytest.mark.parametrize("bad", ["../x", "..", ".", "a/b", "a\x00b", "/abs", "_provider", ".hidden",
                                 "", "x" * 300, "a..b", "white space"])
def test_ids_that_could_leave_the_root_are_refused(bad: str) -> None:
    with pytest.raises(RefusedId):
        check_id(bad, "session id")


def test_names_round_trip() -> None:
    name = file_name("agent_meta", "20260831T091204.481523000Z", 7)
    assert name == "meta-20260831T091204.481523000Z-000007.sd"
    parsed = parse_file_name(name)
    assert parsed is not None and (parsed.kind, parsed.seq) == ("agent_meta", 7)
    assert parse_file_name("transcript-x-1.sd") is None


def test_install_never_replaces(tmp_path: Path) -> None:
    a, b, final = tmp_path / "a", tmp_path / "b", tmp_path / "final"
    a.write_text("first")
    b.write_text("second")
    install_noreplace(a, final)
    with pytest.raises(FileExistsError):
        install_noreplace(b, final)
    assert final.read_text() == "first" and b.exists()


def _source(tmp_path: Path, lines: int = 30, pad: int = 300, sessions: int = 1) -> Path:
    src = tmp_path / "src"
    src.mkdir(exist_ok=True)
    for s in range(1, sessions + 1):
        (src / f"s{s}.jsonl").write_bytes(b"".join(b'{"n":%d,"pad":"%s"}\n' % (i, b"p" * pad)
                                                   for i in range(1, lines + 1)))
    return src


def test_a_second_pass_is_refused_naming_the_holder(asz_pass: PassRunner, tmp_path: Path) -> None:
    asz_pass.configure(**jsonl_config(_source(tmp_path)))
    asz_pass.root.mkdir(parents=True)
    with FileLock(asz_pass.root / ".lock", describe=True), pytest.raises(PassRefused) as info:
        asz_pass.run()
    assert f"pid {os.getpid()}" in str(info.value) and "--wait" in str(info.value)


def test_wait_waits_for_the_holder(asz_pass: PassRunner, tmp_path: Path) -> None:
    asz_pass.configure(**jsonl_config(_source(tmp_path)))
    asz_pass.root.mkdir(parents=True)
    holder = FileLock(asz_pass.root / ".lock", describe=True)
    holder.acquire()
    threading.Timer(0.3, holder.release).start()
    started = time.monotonic()
    summary = asz_pass.run(wait=True)
    assert time.monotonic() - started >= 0.25 and summary.totals.records == 30


def test_a_busy_session_is_counted_and_tried_next_pass(asz_pass: PassRunner, tmp_path: Path) -> None:
    asz_pass.configure(**jsonl_config(_source(tmp_path)))
    (asz_pass.root / "s1").mkdir(parents=True)
    with FileLock(asz_pass.root / "s1" / ".lock"):
        summary = asz_pass.run()
    assert summary.totals.busy == 1 and summary.totals.records == 0
    assert asz_pass.run().totals.records == 30


def test_an_unwritable_root_is_refused(asz_pass: PassRunner, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    asz_pass.root = blocker / "root"
    asz_pass.configure(**jsonl_config(_source(tmp_path)))
    with pytest.raises(PassRefused, match="cannot be written"):
        asz_pass.run()


def _adapter_module(name: str, discover: object, land: object = None) -> types.ModuleType:
    module = types.ModuleType(name)

    @hookimpl
    def asz_adapter_info() -> AdapterInfo:
        return AdapterInfo(version="9.9", runtime=name)

    @hookimpl
    def asz_discover(ctx):  # type: ignore[no-untyped-def]
        return discover(ctx)  # type: ignore[operator]

    @hookimpl
    def asz_claim(ctx, found):  # type: ignore[no-untyped-def]
        return [SessionClaim(f.key, [f]) for f in found]

    @hookimpl
    def asz_land(ctx, claim, session):  # type: ignore[no-untyped-def]
        if land is not None:
            land(ctx, claim, session)  # type: ignore[operator]

    for fn in (asz_adapter_info, asz_discover, asz_claim, asz_land):
        setattr(module, fn.__name__, fn)
    return module


def test_one_adapter_raising_does_not_stop_the_others(asz_pass: PassRunner, tmp_path: Path) -> None:
    def boom(ctx):  # type: ignore[no-untyped-def]
        raise RuntimeError("the disk of this runtime is on fire")
    asz_pass.register("broken", _adapter_module("broken", boom))
    config = jsonl_config(_source(tmp_path))
    asz_pass.configure(adapters=[{"name": "broken"}, *config["adapters"]])  # type: ignore[misc]
    summary = asz_pass.run()
    assert summary.failed and summary.totals.errors == 1 and summary.totals.records == 30
    (error,) = summary.errors
    assert error.adapter == "broken" and "on fire" in error.message


def test_adapters_run_in_the_declared_order(asz_pass: PassRunner, tmp_path: Path) -> None:
    order: list[str] = []

    def named(name: str):  # type: ignore[no-untyped-def]
        return lambda ctx: order.append(name) or []
    for name in ("zeta", "alpha"):
        asz_pass.register(name, _adapter_module(name, named(name)))
    for names in (["zeta", "alpha"], ["alpha", "zeta"]):
        order.clear()
        asz_pass.configure(adapters=[{"name": n} for n in names])
        asz_pass.run()
        assert order == names


def test_a_session_id_that_names_a_path_outside_the_root_is_refused(asz_pass: PassRunner, tmp_path: Path) -> None:
    asz_pass.register("evil", _adapter_module("evil", lambda ctx: [Found(kind="session", key="../../x")]))
    asz_pass.configure(adapters=[{"name": "evil"}])
    summary = asz_pass.run()
    assert summary.totals.errors == 1 and "refused" in summary.errors[0].message
    assert not (tmp_path / "x").exists() and not (asz_pass.root.parent.parent / "x").exists()


def test_disk_full_mid_landing_fails_clearly_and_loses_nothing(asz_pass: PassRunner, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               assert_root_verifies) -> None:
    source = _source(tmp_path, lines=60, pad=300)
    asz_pass.configure(**jsonl_config(source, max_delta_bytes=4096))
    monkeypatch.setattr(faults, "_spec", "enospc:install:3")
    monkeypatch.setattr(faults, "_counts", {})
    summary = asz_pass.run()
    assert summary.failed and "no space left" in summary.errors[0].message
    landed_before = sorted(p.name for p in (asz_pass.root / "s1/streams/main").glob("*.sd"))
    assert len(landed_before) == 2 and temp_files(asz_pass.root) == []
    assert_root_verifies(asz_pass.root)
    monkeypatch.setattr(faults, "_spec", "")
    summary = asz_pass.run()
    assert not summary.failed
    assert [r.ord for _, r in records_of(asz_pass.root, "s1")] == list(range(1, 61))
    assert sorted(p.name for p in (asz_pass.root / "s1/streams/main").glob("*.sd"))[:2] == landed_before


#: steps a pass reaches once, however many sessions it lands: killed at their first only
_ONCE_A_PASS = ("owed-start", "owed-end", "owed-replace")


@pytest.mark.parametrize(("nth", "step"), [
    *((1, step) for step in faults.STEPS),  # each step once in the default lane
    *(pytest.param(2, step, marks=pytest.mark.slow) for step in faults.STEPS if step not in _ONCE_A_PASS)])
def test_killed_at_any_step_a_pass_loses_nothing_and_lands_nothing_twice(
        step: str, nth: int, tmp_path: Path, assert_root_verifies) -> None:
    runner = PassRunner(tmp_path, tmp_path / "root")
    # two sessions, so each step (a directory fsync is once per session) is reached twice
    config = runner.configure(**jsonl_config(_source(tmp_path, lines=40, pad=300, sessions=2), max_delta_bytes=4096))
    env = {**os.environ, "ASZ_FAULT": f"kill:{step}:{nth}"}
    killed = run_cli_forked("run", "--config", str(config), env=env)
    assert killed.returncode == -9, killed.stderr.decode()
    # only the kill needs a process of its own: the passes after it run here, as a child would
    finished = run_cli("run", "--config", str(config))
    assert finished.returncode == 0, finished.stderr
    assert run_cli("run", "--config", str(config)).returncode == 0
    for session in ("s1", "s2"):
        ords = [r.ord for _, r in records_of(runner.root, session)]
        assert ords == list(range(1, 41)), f"{session}: every line exactly once"
    assert temp_files(runner.root) == []
    assert_root_verifies(runner.root)
