"""What the host does for an adapter that only declares: the settled protocol, the session
filter, one session's outcome merged in claim order, and the traps it catches."""

from __future__ import annotations

import os
import sys
import time
import types
from pathlib import Path

import pytest

from asz_core import hookimpl
from asz_core.collect import AppendSource, SourceLine, collect_append
from asz_core.plugin import AdapterInfo, Found, SessionClaim, SettledBy
from asz_core.root.landing import LandedFile
from asz_core.sessiondata import FROM_RUNTIME, RecordFields, data_part, record, unknown_part
from asz_core.testing import PassRunner, dialects_landing_only_unknown


class _Lines:
    """Each JSON line as one data part."""

    name = "lines/1"
    reads_non_json = False

    def convert(self, line: SourceLine) -> RecordFields:
        return record(from_=FROM_RUNTIME, parts=[data_part(line.data_at())])


class _PlainLog:
    """A dialect for a log that is not JSON, which says so and reads every line."""

    name = "plain/1"
    reads_non_json = True

    def convert(self, line: SourceLine) -> RecordFields:
        return record(from_=FROM_RUNTIME, parts=[unknown_part(line.raw, "a log line")])


def _adapter(source: Path, landed: list[str], *, parallel: bool = False, waiting: str = "",
             slow: str = "", dialect: type = _Lines) -> types.ModuleType:
    """An adapter as the README describes one: ``<session>.jsonl`` files under ``source``, each
    in a directory the filter judges, each claim declaring its one source."""
    module = types.ModuleType("declaring")

    @hookimpl
    def asz_adapter_info() -> AdapterInfo:
        return AdapterInfo(version="1.0", runtime="test", dialects=(dialect.name,), parallel_sessions=parallel)

    @hookimpl
    def asz_discover(ctx):  # type: ignore[no-untyped-def]
        for path in sorted(source.rglob("*.jsonl")):
            yield Found(kind="session", key=path.stem, session=path.stem, payload=str(path),
                        directory=str(path.parent))

    @hookimpl
    def asz_claim(ctx, found):  # type: ignore[no-untyped-def]
        for item in found:
            yield SessionClaim(item.session, [item], settled_by=[SettledBy(item.payload, "streams/main", "transcript")])

    @hookimpl
    def asz_land(ctx, claim, session):  # type: ignore[no-untyped-def]
        landed.append(claim.session)
        if claim.session == slow:
            time.sleep(0.3)  # finishes after the sessions claimed after it
        path = Path(claim.found[0].payload)
        collect_append(ctx, session, AppendSource(path=path, src=path.name, subdir="streams/main",
                                                  kind="transcript", stream="main", dialect=dialect()))
        if claim.session == waiting:
            ctx.counters.waiting += 1

    for fn in (asz_adapter_info, asz_discover, asz_claim, asz_land):
        setattr(module, fn.__name__, fn)
    return module


def _sources(tmp_path: Path, count: int) -> Path:
    source = tmp_path / "src"
    for n in range(count):
        (source / f"p{n % 2}").mkdir(parents=True, exist_ok=True)
        (source / f"p{n % 2}" / f"s-{n}.jsonl").write_text(f'{{"n":{n}}}\n')
    return source


@pytest.mark.parametrize("workers", [1, 2])
def test_a_claim_that_declares_its_sources_is_not_landed_again_until_one_changes(
        asz_pass: PassRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int) -> None:
    if workers > 1 and sys.platform != "linux":
        pytest.skip("workers fork on Linux only")
    monkeypatch.delenv("ASZ_WORKERS", raising=False)
    source = _sources(tmp_path, 4)
    landed: list[str] = []
    asz_pass.register("declaring", _adapter(source, landed, parallel=True))
    asz_pass.configure(adapters=[{"name": "declaring", "collector": {"workers": workers}}])
    first = asz_pass.run()
    assert (first.totals.records, first.failed) == (4, False)
    assert asz_pass.root.joinpath(".settled-declaring.state").is_file()
    landed.clear()
    again = asz_pass.run()
    assert landed == []  # counted from a stat of each source and cursor: not opened, here or in a worker
    assert (again.totals.sessions, again.totals.sources, again.totals.records) == (4, 4, 0)
    cursors = {s: (asz_pass.root / s / "streams" / "main" / "transcript.cursor").stat().st_mtime_ns
               for s in ("s-0", "s-3")}
    with (source / "p1" / "s-3.jsonl").open("a") as f:
        f.write('{"n":33}\n')
    grown = asz_pass.run()
    assert grown.totals.records == 1
    after = {s: (asz_pass.root / s / "streams" / "main" / "transcript.cursor").stat().st_mtime_ns
             for s in ("s-0", "s-3")}
    assert after["s-0"] == cursors["s-0"] and after["s-3"] != cursors["s-3"]


def test_a_session_that_counted_something_unsettling_is_landed_again(asz_pass: PassRunner, tmp_path: Path) -> None:
    landed: list[str] = []
    asz_pass.register("declaring", _adapter(_sources(tmp_path, 2), landed, waiting="s-1"))
    asz_pass.configure(adapters=[{"name": "declaring"}])
    assert asz_pass.run().totals.waiting == 1
    landed.clear()
    assert asz_pass.run().totals.waiting == 1
    assert landed == ["s-1"]


def test_the_host_leaves_out_what_include_and_exclude_do_not_admit(asz_pass: PassRunner, tmp_path: Path) -> None:
    source = _sources(tmp_path, 4)
    landed: list[str] = []
    asz_pass.register("declaring", _adapter(source, landed))
    asz_pass.configure(adapters=[{"name": "declaring", "exclude": [f"{source}/p1"]}])
    summary = asz_pass.run()
    assert landed == ["s-0", "s-2"]  # s-1 and s-3 never reached asz_claim
    assert (summary.totals.found, summary.totals.sessions) == (4, 2)


@pytest.mark.skipif(sys.platform != "linux", reason="workers fork on Linux only")
def test_outcomes_from_workers_are_merged_in_claim_order(asz_pass: PassRunner, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A session that lands slowly in one worker while later ones land in another: its files
    are still announced, and its warnings heard, before theirs."""
    monkeypatch.delenv("ASZ_WORKERS", raising=False)
    announced: list[str] = []

    class Observer:
        @hookimpl
        def asz_file_landed(self, ctx: object, adapter: str, landed: LandedFile) -> None:
            announced.append(landed.session)
            assert os.getpid() == here

    here = os.getpid()
    asz_pass.host.pm.register(Observer(), name="observer")
    asz_pass.register("declaring", _adapter(_sources(tmp_path, 6), [], parallel=True, slow="s-0"))
    asz_pass.configure(adapters=[{"name": "declaring", "collector": {"workers": 2}}])
    summary = asz_pass.run()
    assert summary.totals.records == 6
    assert announced == [f"s-{n}" for n in (0, 2, 4, 1, 3, 5)]  # p0's, then p1's: discovery's order


def test_a_dialect_whose_records_hold_only_unknown_parts_is_caught(asz_pass: PassRunner, tmp_path: Path) -> None:
    asz_pass.register("declaring", _adapter(_sources(tmp_path, 2), [], dialect=_PlainLog))
    asz_pass.configure(adapters=[{"name": "declaring"}])
    asz_pass.run()
    assert dialects_landing_only_unknown(asz_pass.root) == {"plain/1": 2}


def test_a_dialect_that_reads_its_lines_is_not_caught(asz_pass: PassRunner, tmp_path: Path) -> None:
    asz_pass.register("declaring", _adapter(_sources(tmp_path, 2), []))
    asz_pass.configure(adapters=[{"name": "declaring"}])
    asz_pass.run()
    assert dialects_landing_only_unknown(asz_pass.root) == {}
