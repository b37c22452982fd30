"""``usage``: totals equal the landed usage of the corpus, each call counted once; prices and
ranges by their rules; the same figures on the page."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from asz_core.page.catalogue import CallUsage, Catalogue
from asz_core.page.usage import PriceTable, usage_report

KINDS = ("in", "out", "cache_read", "cache_write")


def _landed_usage(root: Path) -> dict[str, int]:
    """The oracle, read with nothing but ``json``: per session, stream and call, the usage of the
    last landed record of that call that carries one."""
    last: dict[tuple[str, str, str], dict[str, int]] = {}
    for path in sorted(root.glob("*/streams/*/*.sd"), key=lambda p: (p.parts[-4], p.parts[-2], p.name[-9:])):
        session, stream = path.parts[-4], path.parts[-2]
        for line in path.read_bytes().splitlines()[1:]:
            record = json.loads(line)
            if "call" in record and "usage" in record:
                last[(session, stream, record["call"])] = record["usage"]
    return {k: sum(u.get(k, 0) for u in last.values()) for k in KINDS} | {"calls": len(last)}


@pytest.mark.corpus
def test_usage_totals_equal_the_sum_of_landed_usage(catalogue: Catalogue, page_root: Path) -> None:
    calls = [c for d in catalogue.digests() for c in d.calls]
    for by in ("day", "month", "session", "model", "project"):
        report = usage_report(calls, by, PriceTable.default())
        expected = _landed_usage(page_root)
        assert {k: report["total"][k] for k in (*KINDS, "calls")} == expected
        assert expected["out"] > 0
        for kind in (*KINDS, "calls"):
            assert sum(row[kind] for row in report["rows"]) == report["total"][kind]


@pytest.mark.corpus
def test_the_page_shows_the_figures_the_command_prints(catalogue: Catalogue) -> None:
    from asz_core.page.api import handle

    response = handle(catalogue, "GET", "/api/usage", "by=model")
    calls = [c for d in catalogue.digests() for c in d.calls]
    assert json.loads(response.body) == usage_report(calls, "model", PriceTable.default())
    rows = json.loads(handle(catalogue, "GET", "/api/conversations", "").body)
    assert sum(r["tokens"]["out"] for r in rows) == usage_report(calls, "day", PriceTable.default())["total"]["out"]


def _call(model: str | None, day: str | None, n: int = 1_000_000) -> CallUsage:
    ns = None if day is None else int(dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC).timestamp()) * 10**9
    return CallUsage("s", "p", "main", f"c-{model}-{day}", model, ns, in_=n, out=n, cache_read=n, cache_write=n)


def test_a_dated_model_is_priced_by_its_family_and_a_later_version_is_not() -> None:
    prices = PriceTable.default()
    assert prices.of("claude-sonnet-4-5-20250929") == prices.of("claude-sonnet-4-5")
    assert prices.of("claude-opus-4-6") is None
    report = usage_report([_call("claude-sonnet-4-5-20250929", "2026-01-02"), _call("claude-opus-4-6", "2026-01-02")],
                          "model", prices)
    assert report["total"]["cost"] == pytest.approx(3.0 + 15.0 + 0.3 + 3.75)
    assert report["total"]["unpriced_calls"] == 1


def test_the_users_table_is_laid_over_the_built_in_one(tmp_path: Path) -> None:
    table = tmp_path / "prices.yaml"
    table.write_text("claude-opus-4-6: {in: 5, out: 25, cache_read: 0.5, cache_write: 6.25}\n")
    prices = PriceTable.load(table)
    assert prices.of("claude-opus-4-6") == {"in": 5.0, "out": 25.0, "cache_read": 0.5, "cache_write": 6.25}
    assert prices.of("claude-sonnet-4-5") is not None
    table.write_text('{"m": {"in": -1}}')
    with pytest.raises(ValueError, match="not negative"):
        PriceTable.load(table)


def test_since_and_until_keep_the_days_between_and_drop_untimed_calls() -> None:
    calls = [_call("m", "2026-01-01"), _call("m", "2026-01-02"), _call("m", "2026-01-03"), _call("m", None)]
    report = usage_report(calls, "day", PriceTable.default(), since=dt.date(2026, 1, 2), until=dt.date(2026, 1, 2))
    assert [r["key"] for r in report["rows"]] == ["2026-01-02"]
    everything = usage_report(calls, "month", PriceTable.default())
    assert [r["key"] for r in everything["rows"]] == ["-", "2026-01"]
