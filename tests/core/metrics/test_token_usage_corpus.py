"""The derivation over real Claude Code sessions landed by a pass (skipped without the corpus)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

from asz_core.testing import PassRunner, run_sdcheck
from asz_core.verify import verify_root

PROJECT = "-Users-ingo-projects-irrlicht"
OTHER = "-Users-ingo-gt-agent-readyness-refinery-rig"


def test_a_pass_spools_the_corpus_tokens_and_the_root_still_reads_strictly(corpus: Path, tmp_path: Path) -> None:
    source = tmp_path / "projects"
    shutil.copytree(corpus / "claude-code" / "projects" / PROJECT, source / PROJECT)
    runner = PassRunner(tmp_path, tmp_path / "root")
    runner.configure(adapters=[{"name": "claude-code-local", "source_root": str(source), "exclude": []}],
                     metrics={"lookback": "none"})
    summary = runner.run()
    assert not summary.failed, summary.errors
    spool = sorted((runner.root / "_metrics").glob("metrics-*.pb"))
    assert spool and (runner.root / "_metrics" / "metrics.state").is_file()
    sources = set()
    for path in spool:
        for rm in ExportMetricsServiceRequest.FromString(path.read_bytes()).resource_metrics:
            for dp in rm.scope_metrics[0].metrics[0].sum.data_points:
                sources.add({kv.key: kv.value.string_value for kv in dp.attributes}["query_source"])
    assert sources == {"main", "subagent"}
    assert not [p for r in verify_root(runner.root) for p in r.problems]
    verdict = run_sdcheck(runner.root)  # a root with _metrics/ and sessions' metrics/ receipts
    assert verdict is None or verdict["ok"], verdict
    before = {p.name: p.read_bytes() for p in spool}
    assert not runner.run().failed
    assert {p.name: p.read_bytes() for p in (runner.root / "_metrics").glob("metrics-*.pb")} == before


def test_a_pass_derives_only_the_sessions_landed_since_and_every_one_after_a_killed_pass(
        corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import asz_core.metrics.derive as derive

    looked: list[str] = []
    real = derive._derive_session

    def counting(root: Path, spool: Path, session: str, *rest: Any) -> bool:
        looked.append(session)
        return real(root, spool, session, *rest)

    monkeypatch.setattr(derive, "_derive_session", counting)
    source = tmp_path / "projects"
    shutil.copytree(corpus / "claude-code" / "projects" / PROJECT, source / PROJECT)
    runner = PassRunner(tmp_path, tmp_path / "root")
    runner.configure(adapters=[{"name": "claude-code-local", "source_root": str(source), "exclude": []}],
                     metrics={"lookback": "none"})
    assert not runner.run().failed
    first = set(looked)
    assert first == {p.name for p in runner.root.iterdir() if not p.name.startswith((".", "_"))}
    looked.clear()
    assert not runner.run().failed
    assert looked == []  # nothing landed since: no session is read
    shutil.copytree(corpus / "claude-code" / "projects" / OTHER, source / OTHER)
    assert not runner.run().failed
    assert looked and not set(looked) & first  # only the sessions that landed
    looked.clear()
    with open(runner.root / ".metrics-owed", "ab") as log:
        log.write(b"start\n")  # a pass killed after landing, before it derived
    assert not runner.run().failed
    assert set(looked) >= first  # every session is looked at again; nothing is counted twice
    runner.configure(adapters=[{"name": "claude-code-local", "source_root": str(source), "exclude": []}],
                     metrics={"enabled": False})
    assert not runner.run().failed
    assert not (runner.root / ".metrics-owed").exists()  # switched back on, it owes every session
