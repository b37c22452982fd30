"""``benchmarks/host_memory.py``: how much of the guest's free memory its host still backs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.benchmarks import load_script

host_memory = load_script("host_memory")

BUDDYINFO = """\
Node 0, zone      DMA      0      0      0      0      0      0      0      0      0      1      3
Node 0, zone   Normal      1      1      1      0      0      0      0      0      2      5      7
"""


def test_the_free_memory_the_host_still_backs_is_the_free_blocks_under_its_reporting_order(tmp_path: Path) -> None:
    buddyinfo, order = tmp_path / "buddyinfo", tmp_path / "page_reporting_order"
    buddyinfo.write_text(BUDDYINFO)
    page = host_memory.os.sysconf("SC_PAGE_SIZE")
    order.write_text("9\n")  # blocks of 512 pages and more are reported: one, two, four and 2 x 256 pages are not
    assert host_memory.unreported_free_mb(buddyinfo, order) == pytest.approx((1 + 2 + 4 + 2 * 256) * page / 1e6)
    order.write_text("10\n")  # every zone's blocks of 512 pages now count too
    assert host_memory.unreported_free_mb(buddyinfo, order) == pytest.approx((1 + 2 + 4 + 2 * 256 + 6 * 512)
                                                                             * page / 1e6)


def test_a_guest_that_reports_no_free_pages_says_nothing_of_them(tmp_path: Path) -> None:
    buddyinfo = tmp_path / "buddyinfo"
    buddyinfo.write_text(BUDDYINFO)
    assert host_memory.unreported_free_mb(buddyinfo, tmp_path / "no-page-reporting") is None
    (tmp_path / "order").write_text("9")
    buddyinfo.write_text("Node 0, zone Normal x y\n")
    assert host_memory.unreported_free_mb(buddyinfo, tmp_path / "order") is None
