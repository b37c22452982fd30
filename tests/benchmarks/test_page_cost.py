"""``benchmarks/page_cost.py``: the four ways it writes a landing's bytes, each writing what it
says, and a run that leaves nothing behind."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.benchmarks import load_script

page_cost = load_script("page_cost")

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="syncfs and O_DIRECT are Linux's")

WAYS = ("buffered", "started early", "recycled", "direct")


@pytest.mark.parametrize("way", WAYS)
def test_each_way_writes_its_files_whole_and_owner_read_only(tmp_path: Path, way: str) -> None:
    page_cost.write_files(tmp_path, 3, 2, way)
    files = sorted(tmp_path.iterdir())
    assert [f.name for f in files] == ["0.tmp", "1.tmp", "2.tmp"]
    assert all(f.stat().st_size == 1 << 20 for f in files)
    assert all(f.stat().st_mode & 0o777 == 0o400 for f in files)
    assert len({f.read_bytes() for f in files}) == 1  # the same bytes, whichever way they went


def test_a_run_prints_a_row_a_round_and_deletes_what_it_wrote(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert page_cost.main(["--mb", "2", "--group", "1", "--rounds", "2", "--dir", str(tmp_path)]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert rows[0] == "| round | " + " | ".join(WAYS) + " |"
    assert [row.split(" | ")[0] for row in rows[2:]] == ["| 1", "| 2"]
    assert list(tmp_path.iterdir()) == []
