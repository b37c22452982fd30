"""The way out for a body file no pass will place: ``asz-pipeline bodies --retire FILE`` records
it, passes count it ``bodies_retired`` instead of waiting, the file is never changed or deleted,
a change to it undoes the retirement, and a landed file cannot be retired."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from asz_core.cli.app import App
from asz_core.cli.main import main
from asz_core.testing import PassRunner
from tests.adapters.claude_code_provider.test_provider_adapter import SMALL, bodies_of, ids, stage  # noqa: F401
from tests.provider_support import TranscriptIds, land_ids, provider_config, seen_states

pytestmark = pytest.mark.corpus


def _bodies(runner: PassRunner, *argv: str) -> tuple[int, dict[str, object], str]:
    out, err = io.StringIO(), io.StringIO()
    app = App(config_path=str(runner.config_path), host=runner.host, out=out, err=err)
    code = main(["bodies", "--json", "--config", str(runner.config_path), *argv], app)
    return code, json.loads(out.getvalue()) if out.getvalue() else {}, err.getvalue()


def test_a_retired_body_file_stops_waiting_is_kept_unchanged_and_waits_again_once_it_changes(
        asz_pass: PassRunner, corpus: Path, ids: dict[str, TranscriptIds], tmp_path: Path) -> None:  # noqa: F811
    small = bodies_of(corpus, ids, SMALL)
    src = tmp_path / "bodies"
    land_ids(asz_pass.root, small.ids)
    stage([(p, t) for p, t in small.written() if p in small.responses], src)  # no request: they wait
    asz_pass.configure(adapters=[provider_config(src)])
    first = asz_pass.run()
    waiting = len(small.responses)
    assert first.fields()["bodies_waiting"] == waiting and first.fields()["bodies_retired"] == 0

    code, listed, _ = _bodies(asz_pass)
    assert code == 0 and {row["file"] for row in listed["bodies"]} == {p.name for p in small.responses}  # type: ignore[union-attr]
    given = src / small.responses[0].name
    before = given.read_bytes(), os.stat(given).st_mtime_ns
    code, listed, _ = _bodies(asz_pass, "--retire", str(given))
    assert code == 0
    assert [r["file"] for r in listed["bodies"] if r["retired"]] == [given.name]  # type: ignore[union-attr,index]

    second = asz_pass.run()
    assert second.fields()["bodies_waiting"] == waiting - 1 and second.fields()["bodies_retired"] == 1
    assert not any(given.name in w for w in asz_pass.reporter.warnings)
    assert (given.read_bytes(), os.stat(given).st_mtime_ns) == before  # the file is kept as it was

    os.utime(given, ns=(before[1] + 10**9, before[1] + 10**9))  # touched: tried again as any other
    third = asz_pass.run()
    assert third.fields()["bodies_waiting"] == waiting and third.fields()["bodies_retired"] == 0


def test_a_retired_file_that_can_be_placed_lands_and_a_landed_file_cannot_be_retired(
        asz_pass: PassRunner, corpus: Path, ids: dict[str, TranscriptIds], tmp_path: Path) -> None:  # noqa: F811
    small = bodies_of(corpus, ids, SMALL)
    src = tmp_path / "bodies"
    land_ids(asz_pass.root, small.ids)
    written = small.written()
    stage([(p, t) for p, t in written if p in small.responses], src)
    asz_pass.configure(adapters=[provider_config(src)])
    asz_pass.run()
    name = small.responses[0].name
    assert _bodies(asz_pass, "--retire", name)[0] == 0  # a bare name is looked for in the body directory
    stage([(p, t) for p, t in written if p in small.requests], src)
    summary = asz_pass.run()  # its session's requests arrived: it lands, retired or not (nothing lost)
    assert summary.fields()["bodies_waiting"] == 0 and summary.fields()["bodies_retired"] == 0
    assert seen_states(asz_pass.root)[name] == "landed"
    code, said, err = _bodies(asz_pass, "--retire", name)
    assert code == 2 and "has landed" in json.dumps(said) + err
    assert _bodies(asz_pass, "--retire", str(tmp_path / "notes.txt"))[0] == 2


def test_a_body_changed_after_it_landed_can_be_retired_and_what_landed_stays(
        asz_pass: PassRunner, corpus: Path, ids: dict[str, TranscriptIds], tmp_path: Path) -> None:  # noqa: F811
    from asz_core.root.storage import landed_files

    small = bodies_of(corpus, ids, SMALL)
    src = tmp_path / "bodies"
    land_ids(asz_pass.root, small.ids)
    stage(small.written(), src)
    asz_pass.configure(adapters=[provider_config(src)])
    assert not asz_pass.run().failed
    landed = {p: p.read_bytes() for s in asz_pass.root.iterdir() if not s.name.startswith(("_", "."))
              for _, p in landed_files(s)}
    victim = src / small.requests[0].name
    victim.write_bytes(victim.read_bytes().replace(b'"model":"', b'"model":"X', 1))
    assert asz_pass.run().totals.conflicts == 1
    code, listed, _ = _bodies(asz_pass)
    assert code == 0
    assert [r["state"] for r in listed["bodies"] if r["file"] == victim.name] == ["conflict"]  # type: ignore[union-attr,index]
    assert _bodies(asz_pass, "--retire", str(victim))[0] == 0
    summary = asz_pass.run()
    assert not summary.failed and summary.totals.conflicts == 0 and summary.fields()["bodies_retired"] == 1
    assert seen_states(asz_pass.root)[victim.name] == "conflict"  # still said, no longer failing a pass
    assert {p: p.read_bytes() for p in landed} == landed
    victim.write_bytes(victim.read_bytes() + b" ")  # changed again: a conflict again
    assert asz_pass.run().totals.conflicts == 1
