"""``pass.py --table --drop-caches``: the page cache dropped before each row, so that a row's
figures do not depend on the rows run before it (``benchmarks/drop_caches.py``)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from tests.benchmarks import load_script

bench = load_script("pass")  # puts benchmarks/ on the path, where ``import drop_caches`` finds it
drop_caches = importlib.import_module("drop_caches")  # the module pass.py imports


def test_dirty_pages_are_written_back_before_the_page_cache_alone_is_dropped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    control = tmp_path / "drop_caches"
    control.write_text("")
    events: list[str] = []
    monkeypatch.setattr(drop_caches.os, "sync", lambda: events.append(f"sync, control {control.read_text()!r}"))
    drop_caches.drop_page_cache(control)
    assert events == ["sync, control ''"]
    assert control.read_text() == "1\n"  # 1: the page cache, not the dentries and inodes


def test_where_the_page_cache_cannot_be_dropped_the_reason_is_said(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "proc" / "drop_caches"
    assert "does not exist" in (drop_caches.unavailable(missing) or "")
    control = tmp_path / "drop_caches"
    control.write_text("")
    assert drop_caches.unavailable(control) is None
    monkeypatch.setattr(drop_caches.os, "access", lambda path, mode: False)  # as for a user not root
    assert "needs root" in (drop_caches.unavailable(control) or "")


def test_a_row_starts_with_the_cache_dropped_and_then_its_warm_ups_when_asked(
        monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[str] = []
    monkeypatch.setattr(drop_caches, "drop_page_cache", lambda: events.append("drop"))
    bench.row_start(True, [lambda: events.append("read the corpus"), lambda: events.append("land it")])
    assert events == ["drop", "read the corpus", "land it"]
    events.clear()
    bench.row_start(False, [lambda: events.append("read the corpus")])
    assert events == ["read the corpus"]


def test_the_table_does_not_start_when_it_was_asked_to_drop_the_cache_and_cannot(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(drop_caches, "unavailable", lambda: "/proc/sys/vm/drop_caches cannot be written")
    monkeypatch.setattr(bench, "issue_table", lambda *args, **kwargs: pytest.fail("the table started"))
    assert bench.main(["--table", "--drop-caches"]) == 2
    assert "--drop-caches: /proc/sys/vm/drop_caches cannot be written" in capsys.readouterr().err


def test_a_table_made_with_the_cache_dropped_says_so_in_its_method_and_in_the_readme(tmp_path: Path) -> None:
    table_report = load_script("table_report")
    quiet = load_script("quiet")
    made = table_report.TableReport((2, 3), 5, dropped=True)
    assert "the page cache dropped before each row" in made.method()
    calm = quiet.Quiet(tmp_path, quiet.Levels(), most_wait=0.0, pressure=False)
    made.settlings.append(quiet.Settling((quiet.Reading(15.0),), 0.0, ()))
    part = made.readme(calm, "python benchmarks/pass.py --table --drop-caches", made.started)
    assert "page cache was dropped" in part.replace("\n", " ")
    assert "page cache" not in table_report.TableReport((2, 3), 5).method()


BUDDYINFO = """\
Node 0, zone      DMA      0      0      0      0      0      0      0      0      0      1      3
Node 0, zone   Normal      1      1      1      0      0      0      0      0      2      5      7
"""


def test_the_free_memory_the_host_still_backs_is_the_free_blocks_under_its_reporting_order(tmp_path: Path) -> None:
    buddyinfo, order = tmp_path / "buddyinfo", tmp_path / "page_reporting_order"
    buddyinfo.write_text(BUDDYINFO)
    page = drop_caches.os.sysconf("SC_PAGE_SIZE")
    order.write_text("9\n")  # blocks of 512 pages and more are reported: one, two, four and 2 x 256 pages are not
    assert drop_caches.unreported_free_mb(buddyinfo, order) == pytest.approx((1 + 2 + 4 + 2 * 256) * page / 1e6)
    order.write_text("10\n")  # every zone's blocks of 512 pages now count too
    assert drop_caches.unreported_free_mb(buddyinfo, order) == pytest.approx((1 + 2 + 4 + 2 * 256 + 6 * 512)
                                                                             * page / 1e6)


def test_a_guest_that_reports_no_free_pages_says_nothing_of_them(tmp_path: Path) -> None:
    buddyinfo = tmp_path / "buddyinfo"
    buddyinfo.write_text(BUDDYINFO)
    assert drop_caches.unreported_free_mb(buddyinfo, tmp_path / "no-page-reporting") is None
    (tmp_path / "order").write_text("9")
    buddyinfo.write_text("Node 0, zone Normal x y\n")
    assert drop_caches.unreported_free_mb(buddyinfo, tmp_path / "order") is None
