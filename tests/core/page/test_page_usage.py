"""``usage``: totals equal the landed usage of the corpus, each call counted once; every model of
the corpus priced or named as unpriced; prices, overrides and ranges by their rules; the same
figures on the page."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from asz_core.cli.app import EXIT_CONFIG, EXIT_OK
from asz_core.page.catalogue import CallUsage, Catalogue
from asz_core.page.prices import PriceTable
from asz_core.page.usage import NO_MODEL, usage_report
from tests.core.page.test_page_export import asz

KINDS = ("in", "out", "cache_read", "cache_write")


def _landed_usage(root: Path) -> dict[str, int]:
    """The oracle, read with nothing but ``json``: per session, stream and call, the usage of the
    last landed record of that call that carries one; every call counted, with or without."""
    last: dict[tuple[str, str, str], dict[str, int]] = {}
    calls: set[tuple[str, str, str]] = set()
    for path in sorted(root.glob("*/streams/*/*.sd"), key=lambda p: (p.parts[-4], p.parts[-2], p.name[-9:])):
        session, stream = path.parts[-4], path.parts[-2]
        for line in path.read_bytes().splitlines()[1:]:
            record = json.loads(line)
            if "call" in record:
                calls.add((session, stream, record["call"]))
                if "usage" in record:
                    last[(session, stream, record["call"])] = record["usage"]
    return ({k: sum(u.get(k, 0) for u in last.values()) for k in KINDS}
            | {"calls": len(calls), "unreported_calls": len(calls - set(last))})


@pytest.mark.corpus
def test_usage_totals_equal_the_sum_of_landed_usage(catalogue: Catalogue, page_root: Path) -> None:
    calls = [c for d in catalogue.digests() for c in d.calls]
    expected = _landed_usage(page_root)
    for by in ("day", "month", "session", "model", "project"):
        report = usage_report(calls, by, PriceTable.packaged())
        assert {k: report["total"][k] for k in (*KINDS, "calls", "unreported_calls")} == expected
        assert expected["out"] > 0 and expected["unreported_calls"] > 0  # Kiro's calls report none
        for kind in (*KINDS, "calls", "unreported_calls"):
            assert sum(row[kind] for row in report["rows"]) == report["total"][kind]


@pytest.mark.corpus
def test_the_page_shows_the_figures_the_command_prints(catalogue: Catalogue) -> None:
    from asz_core.page.api import handle

    response = handle(catalogue, "GET", "/api/usage", "by=model")
    calls = [c for d in catalogue.digests() for c in d.calls]
    assert json.loads(response.body) == usage_report(calls, "model", PriceTable.packaged())
    rows = json.loads(handle(catalogue, "GET", "/api/conversations", "").body)
    assert sum(r["tokens"]["out"] for r in rows) == usage_report(calls, "day", PriceTable.packaged())["total"]["out"]


def _call(model: str | None, day: str | None, n: int = 1_000_000) -> CallUsage:
    ns = None if day is None else int(dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC).timestamp()) * 10**9
    return CallUsage("s", "p", "main", f"c-{model}-{day}", model, ns, in_=n, out=n, cache_read=n, cache_write=n)


def test_a_dated_model_is_priced_by_its_family_and_a_later_version_is_not() -> None:
    prices = PriceTable.packaged()
    assert prices.of("claude-sonnet-4-5-20250929") == prices.of("claude-sonnet-4-5")
    assert prices.of("claude-opus-4") is not None and prices.of("claude-opus-4-9") is None
    report = usage_report([_call("claude-sonnet-4-5-20250929", "2026-01-02"), _call("claude-opus-4-9", "2026-01-02")],
                          "model", prices)
    assert report["total"]["cost"] == pytest.approx(3.0 + 15.0 + 0.3 + 3.75)
    assert report["total"]["unpriced_calls"] == 1 and report["unpriced"] == {"claude-opus-4-9": 1}


def test_the_users_table_is_laid_over_the_packaged_one_whole_entries_only(tmp_path: Path) -> None:
    table = tmp_path / "prices.yaml"
    table.write_text("claude-opus-4-6: {in: 1, out: 2, cache_read: 0.5, cache_write: 6.25}\n")
    prices = PriceTable.of_config({"prices": {"claude-haiku-4-5": {"in": 9, "out": 9, "cache_read": 9,
                                                                   "cache_write": 9, "source": "mine"}}}, table)
    opus = prices.of("claude-opus-4-6")
    assert opus is not None and dict(opus.rates) == {"in": 1.0, "out": 2.0, "cache_read": 0.5, "cache_write": 6.25}
    assert opus.source == str(table) and opus.date is None  # sourced to where it was read
    haiku = prices.of("claude-haiku-4-5-20251001")
    assert haiku is not None and haiku.source == "mine" and haiku.rates["in"] == 9
    assert prices.of("claude-sonnet-4-5") == PriceTable.packaged().of("claude-sonnet-4-5")
    # a kind left out would be priced at zero without saying so: refused, as is a negative price
    for bad in ('{"m": {"in": 1, "out": 1, "cache_read": 1}}', '{"m": {"in": -1, "out": 1, "cache_read": 1, '
                                                                '"cache_write": 1}}'):
        table.write_text(bad)
        with pytest.raises(ValueError, match="m"):
            PriceTable.of_config({}, table)


@pytest.mark.corpus
def test_every_model_of_the_corpus_is_priced_with_its_source_or_named_unpriced(catalogue: Catalogue) -> None:
    calls = [c for d in catalogue.digests() for c in d.calls]
    report = usage_report(calls, "model", PriceTable.packaged())
    reported = {c.model for c in calls if c.reported}
    assert {"claude-opus-4-6", "claude-opus-4-8", "claude-haiku-4-5-20251001"} <= reported
    assert all(PriceTable.packaged().of(m) is not None for m in reported)  # every model that reported tokens
    # Kiro chooses the model ("auto"), or names none: no list price, so named, never priced at zero
    kiro = [c for d in catalogue.digests() if d.runtime == "kiro" for c in d.calls]
    assert report["unpriced"] and report["unpriced"] == {
        model: sum(1 for c in kiro if (c.model or NO_MODEL) == model) for model in report["unpriced"]}
    assert "auto" in report["unpriced"]
    assert report["total"]["cost"] > 0
    for price in report["prices"]:
        assert price["source"] and price["date"], price
    synthetic = next(p for p in report["prices"] if p["model"] == "<synthetic>")
    assert synthetic["in"] == synthetic["out"] == 0 and "no model" in synthetic["source"]


@pytest.mark.corpus
def test_a_price_in_asz_yaml_changes_the_cost_and_the_totals_stay_the_landed_usage(
        catalogue: Catalogue, page_root: Path, tmp_path: Path) -> None:
    def usage(prices: str) -> dict[str, Any]:
        config = tmp_path / "asz.yaml"
        config.write_text(f"storage:\n  root: {page_root}\nadapters: []\n{prices}", "utf-8")
        done = asz(config, "usage", "--by", "model", "--json")
        assert done.returncode == EXIT_OK, done.stderr
        return dict(json.loads(done.stdout))

    before = usage("")
    after = usage("usage:\n  prices:\n    claude-opus-4-6: {in: 1, out: 2, cache_read: 3, cache_write: 4, "
                  "source: team contract, date: 2026-11-30}\n")
    opus = next(r for r in before["rows"] if r["key"] == "claude-opus-4-6")
    expected = (opus["in"] * 1 + opus["out"] * 2 + opus["cache_read"] * 3 + opus["cache_write"] * 4) / 1e6
    assert next(r for r in after["rows"] if r["key"] == "claude-opus-4-6")["cost"] == pytest.approx(expected)
    assert after["total"]["cost"] != before["total"]["cost"]
    assert after["total"]["cost"] - before["total"]["cost"] == pytest.approx(expected - opus["cost"], abs=1e-5)
    assert {"model": "claude-opus-4-6", "in": 1.0, "out": 2.0, "cache_read": 3.0, "cache_write": 4.0,
            "source": "team contract", "date": "2026-11-30"} in after["prices"]
    landed = _landed_usage(page_root)
    for kind in KINDS:
        assert after["total"][kind] == before["total"][kind] == landed[kind]
    config = tmp_path / "asz.yaml"
    config.write_text(f"storage:\n  root: {page_root}\nadapters: []\nusage:\n  prices:\n    m: {{in: 1}}\n")
    assert asz(config, "usage").returncode == EXIT_CONFIG


def test_since_and_until_keep_the_days_between_and_drop_untimed_calls() -> None:
    calls = [_call("m", "2026-01-01"), _call("m", "2026-01-02"), _call("m", "2026-01-03"), _call("m", None)]
    report = usage_report(calls, "day", PriceTable.packaged(), since=dt.date(2026, 1, 2), until=dt.date(2026, 1, 2))
    assert [r["key"] for r in report["rows"]] == ["2026-01-02"]
    everything = usage_report(calls, "month", PriceTable.packaged())
    assert [r["key"] for r in everything["rows"]] == ["-", "2026-01"]
