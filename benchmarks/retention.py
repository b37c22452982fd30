"""What retention keeps of the shared corpus once the receiver has everything.

    python benchmarks/retention.py

Lands ``claude-code/projects``, ``provider-bodies`` and ``kiro/.kiro`` of ``../shared/corpus``
(``$ASZ_SHARED`` moves it) into a temporary root with ``storage.retention`` at
``metadata_only_after: 0``, pushes it to a loopback OTLP receiver (the tests' gRPC receiver) in
the same pass, and lets that pass's retention step remove everything the receiver accepted.
Printed: landed bytes before, skeleton bytes after, by kind, and the ratio; then whether
``verify`` and ``sdcheck`` pass and whether a second pass lands or sends anything.
"""

from __future__ import annotations

import sys
import tempfile
from collections import Counter
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import corpus, table

from asz_core.config import load_config
from asz_core.host import PluginHost
from asz_core.pipeline import run_pass
from asz_core.root.layout import parse_file_name
from asz_core.scenario.receiver import GrpcReceiver
from asz_core.testing import run_sdcheck
from asz_core.verify import verify_root


def sizes(root: Path) -> tuple[Counter[str], Counter[str]]:
    """Bytes of landed files and of skeletons, by kind."""
    landed: Counter[str] = Counter()
    skeletons: Counter[str] = Counter()
    for path in root.rglob("*.s[dk]"):
        name = parse_file_name(path.name)
        if name is not None:
            (skeletons if name.skeleton else landed)[name.kind] += path.stat().st_size
    return landed, skeletons


def main() -> None:
    data = corpus()
    receiver = GrpcReceiver().start()
    try:
        with tempfile.TemporaryDirectory() as work:
            root = Path(work) / "root"
            config = Path(work) / "asz.yaml"
            config.write_text(yaml.safe_dump({
                "storage": {"root": str(root), "retention": {"metadata_only_after": 0}},
                "adapters": [
                    {"name": "claude-code-local", "source_root": str(data / "claude-code" / "projects"),
                     "exclude": []},
                    {"name": "claude-code-provider", "source_root": str(data / "provider-bodies"),
                     "exclude": []},
                    {"name": "kiro", "source_root": str(data / "kiro" / ".kiro"), "exclude": []}],
                "export": {"otlp": {"protocol": "grpc", "endpoint": receiver.endpoint}}}))
            host = PluginHost().load_entry_points()
            cfg = load_config(host, str(config))
            sent_before: Counter[str] = Counter()
            passes = 0
            while True:  # a source lands at most so many files a pass
                summary = run_pass(host, cfg)
                passes += 1
                if not summary.totals.landed:
                    break
            for record in receiver.records:
                name = parse_file_name(record.file.rsplit("/", 1)[-1])
                if name is not None:
                    sent_before[name.kind] += len(record.body)
            landed, skeletons = sizes(root)
            rows = [(kind, sent_before[kind], landed[kind], skeletons[kind],
                     f"{skeletons[kind] / sent_before[kind]:.1%}" if sent_before[kind] else "-")
                    for kind in sorted(set(sent_before) | set(landed))]
            rows.append(("all", sum(sent_before.values()), sum(landed.values()), sum(skeletons.values()),
                         f"{sum(skeletons.values()) / max(1, sum(sent_before.values())):.1%}"))
            print(table(rows, ("kind", "landed bytes", "left landed", "skeleton bytes", "after/before")))
            state = sum(p.stat().st_size for p in root.rglob("*") if p.is_file()
                        and not p.name.endswith((".sd", ".sk")))
            print(f"cursors, indexes and state files: {state} bytes; passes: {passes}")
            problems = [p for r in verify_root(root) for p in r.problems]
            verdict = run_sdcheck(root)
            checked = "not found" if verdict is None else ("ok" if verdict["ok"] else verdict["problems"][:5])
            print(f"verify: {len(problems)} problem(s); sdcheck: {checked}")
            taken = len(receiver.records)
            again = run_pass(host, cfg)
            print(f"a later pass: landed {again.totals.landed}, sent {len(receiver.records) - taken}")
    finally:
        receiver.stop()


if __name__ == "__main__":
    main()
