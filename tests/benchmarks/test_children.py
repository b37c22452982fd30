"""The processes the table times (``benchmarks/children.py``): each does its work and imports
nothing the work does not need, since a ratio of two processes counts their start-ups too."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import orjson

from asz_core.host import PluginHost
from tests.helpers import REPO, jsonl_config

CHILDREN = REPO / "benchmarks" / "children.py"
#: the harness's own modules (``pass.py`` and what it imports), which neither measured process may import
HARNESS = {"corpus", "_common", "quiet", "pressure", "table_report", "readme_block", "cProfile", "pstats"}


def _imported(*args: str, cwd: Path) -> tuple[set[str], str]:
    """The modules ``children.py ARGS`` imported (``-X importtime``), and what it printed."""
    done = subprocess.run([sys.executable, "-X", "importtime", str(CHILDREN), *args], cwd=cwd,
                          capture_output=True, text=True, check=True)
    names = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    return names, done.stdout


def test_the_floor_reads_parses_and_digests_every_line_and_imports_neither_asz_nor_the_harness(
        tmp_path: Path) -> None:
    lines = [orjson.dumps({"n": n, "text": "é" * n}) for n in range(50)]
    source = tmp_path / "a.jsonl"
    source.write_bytes(b"\n".join(lines) + b"\nnot json\n")
    listing = tmp_path / "floor.json"
    listing.write_text(json.dumps([[str(source), 0]]))
    names, printed = _imported("floor", str(listing), cwd=tmp_path)
    assert float(printed) >= 0
    assert {"orjson", "hashlib"} <= names
    assert not {n for n in names if n.split(".")[0] in ("asz_core", "asz_adapters", "asz_plugins")}
    assert not names & {*HARNESS, "argparse"}
    spec = importlib.util.spec_from_file_location("bench_children", CHILDREN)
    assert spec is not None and spec.loader is not None
    children = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(children)
    assert children.floor([(str(source), 0)]) == source.stat().st_size  # every byte, every line


def test_the_landing_lands_and_says_what_it_landed_without_the_harness(tmp_path: Path) -> None:
    source = tmp_path / "src" / "project"
    source.mkdir(parents=True)
    (source / "s1.jsonl").write_bytes(b'{"n": 1}\n{"n": 2}\n')
    adapters = jsonl_config(tmp_path / "src")["adapters"]
    others = [{"name": name, "enabled": False} for name in PluginHost().load_entry_points().adapter_names()
              if name != "jsonl"]  # never the machine's own sessions
    config = tmp_path / "asz.yaml"
    config.write_text(json.dumps({"storage": {"root": str(tmp_path / "root")}, "adapters": [*adapters, *others]}))
    names, printed = _imported("land", str(config), cwd=tmp_path)
    landed = json.loads(printed)
    assert landed["sessions"] == 1 and landed["landed"] == 1 and landed["elapsed_s"] > 0
    assert not names & HARNESS
